"""Results: the rows a statement returned, how many, how long, or what went wrong, in words."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from raceday.inert import inert
from raceday.store.results import StatementResult
from raceday.tui.widgets.grid import ResultGrid

_ERROR_WORDS = {
    "refused": "Refused",
    "constraint": "A constraint or guard said no",
    "timeout": "Stopped",
    "syntax": "SQL error",
    "error": "Error",
}
_SUMMARY_LINES = 4


def format_elapsed(ms: float) -> str:
    """How long a statement took, for people."""
    return f"{ms:,.1f} ms" if ms < 1000 else f"{ms / 1000:,.2f} s"


def _short(sql: str, width: int = 48) -> str:
    flat = inert(" ".join(sql.split()), one_line=True)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def describe_result(result: StatementResult) -> Text:
    """One line: what happened, in plain words, styled so the important cases stand out."""
    elapsed = format_elapsed(result.elapsed_ms)
    if result.error is not None:
        kind = _ERROR_WORDS.get(result.error_kind or "error", "Error")
        return Text.assemble((f" {kind} ", "bold white on red"), f" {inert(result.error)}  ",
                             (elapsed, "dim"))
    if result.is_write and not result.columns:
        n = result.rowcount or 0
        if n == 0:
            return Text.assemble(
                (" 0 rows changed ", "bold black on yellow"),
                " nothing matched its WHERE, or a guard kept it out  ", (elapsed, "dim"))
        return Text.assemble((f" {result.row_summary(0)} ", "bold black on green"), "  ",
                             (elapsed, "dim"))
    summary = result.row_summary(len(result.rows))
    if result.truncated:
        return Text.assemble(
            (f" {summary} ", "bold black on yellow"),
            " capped: add a WHERE or a LIMIT to see the rest  ", (elapsed, "dim"))
    if result.columns:
        return Text.assemble((f" {summary} ", "bold"), "  ", (elapsed, "dim"))
    return Text.assemble((" done ", "bold"), "  ", (elapsed, "dim"))


class ResultsView(Vertical):
    """A summary line per statement above a table of the last one's rows."""

    DEFAULT_CSS = """
    ResultsView { height: 1fr; }
    ResultsView > #results-status { height: auto; max-height: 5; }
    ResultsView > ResultGrid { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Run a statement: its rows appear here.", id="results-status")
        yield ResultGrid(id="results-table")

    @property
    def table(self) -> ResultGrid:
        return self.query_one(ResultGrid)

    @property
    def status(self) -> Static:
        return self.query_one("#results-status", Static)

    def show_running(self, sql: str) -> None:
        self.status.update(Text.assemble((" running ", "bold black on cyan"), " ",
                                         _short(sql, 60), ("   Esc cancels", "dim")))

    def show_text(self, text: str | Text) -> None:
        self.status.update(text)

    def show(self, results: list[StatementResult]) -> None:
        if not results:
            self.status.update(Text("Nothing to run: the editor holds no statement here.",
                                    style="dim"))
            return
        lines: list[Text] = []
        shown = results[-_SUMMARY_LINES:]
        if len(results) > len(shown):
            lines.append(Text(f"… {len(results) - len(shown)} earlier statements", style="dim"))
        for result in shown:
            line = describe_result(result)
            if len(results) > 1:
                line = Text.assemble((_short(result.sql, 32) + "  ", "dim"), line)
            lines.append(line)
        self.status.update(Text("\n").join(lines))
        with_rows = next((r for r in reversed(results) if r.columns), None)
        if with_rows is None:
            self.table.clear()
        else:
            self.table.show_rows(with_rows.columns, with_rows.rows)
