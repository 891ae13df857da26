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
        error = result.error
        if error.lower().startswith(kind.lower() + ":"):  # "Refused  refused: …" says it twice
            error = error[len(kind) + 1:].strip()
        return Text.assemble((f" {kind} ", "bold white on red"), f" {inert(error)}  ",
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
    """A summary line per statement above a table of rows: the last statement's, or any
    earlier one's of the same run (F6 runs several; `step` goes through their grids).
    Enter on a cell posts the grid's `CellChosen` up to the screen, which shows the value."""

    DEFAULT_CSS = """
    ResultsView { height: 1fr; }
    ResultsView > #results-status { height: auto; max-height: 6; }
    ResultsView > ResultGrid { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.results: list[StatementResult] = []
        self.grids: list[StatementResult] = []
        """The results of the last run that have rows, in order; one is shown at a time."""
        self.grid_index = 0

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

    def clear(self, text: str | Text = "") -> None:
        """Nothing on show: no rows, no summary (the next player starts clean)."""
        self.results, self.grids, self.grid_index = [], [], 0
        self.table.clear()
        self.status.update(text)

    def show(self, results: list[StatementResult]) -> None:
        if not results:
            self.status.update(Text("Nothing to run: the editor holds no statement here.",
                                    style="dim"))
            return
        self.results = list(results)
        self.grids = [r for r in results if r.columns]
        self.grid_index = max(0, len(self.grids) - 1)
        self._show_status()
        if not self.grids:
            self.table.clear()
        else:
            self._show_grid()

    def step(self, direction: int) -> bool:
        """Show the previous (-1) or next (+1) grid of the last run; False if there is none."""
        index = self.grid_index + direction
        if not 0 <= index < len(self.grids):
            return False
        self.grid_index = index
        self._show_status()
        self._show_grid()
        return True

    def _show_grid(self) -> None:
        shown = self.grids[self.grid_index]
        self.table.show_rows(shown.columns, shown.rows)

    def _show_status(self) -> None:
        results = self.results
        lines: list[Text] = []
        shown = results[-_SUMMARY_LINES:]
        if len(results) > len(shown):
            lines.append(Text(f"… {len(results) - len(shown)} earlier statements", style="dim"))
        on_grid = self.grids[self.grid_index] if self.grids else None
        for result in shown:
            line = describe_result(result)
            if len(results) > 1:
                mark = "▶ " if result is on_grid and len(self.grids) > 1 else "  "
                line = Text.assemble((mark + _short(result.sql, 32) + "  ", "dim"), line)
            lines.append(line)
        if len(self.grids) > 1:
            lines.append(Text(f"grid {self.grid_index + 1} of {len(self.grids)}: "
                              "alt+pgup / alt+pgdn show the others", style="dim italic"))
        self.status.update(Text("\n").join(lines))
