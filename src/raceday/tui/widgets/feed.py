"""The feed: what happens, newest last, each line tagged with its time and who did it."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widgets import RichLog

from raceday.transcript.render import describe

_QUIET = {"session_start", "wait"}
_JUDGE = {"fault", "invariant_clear", "race_step", "restored"}
"""The scorer's own view of the night: the broken invariant named, the race step taken.
Shown only in onboarding; elsewhere the players must see it in the world themselves."""
_KIND_STYLE = {
    "fault": "bold white on red",
    "alert": "bold black on yellow",
    "detected": "bold black on green",
    "restored": "bold black on green",
    "invariant_clear": "green",
    "alert_clear": "green",
    "milestone": "bold green",
    "declaration": "magenta",
    "refused": "red",
    "monitor_error": "red",
    "monitor_saved": "cyan",
    "hint": "bold magenta",
    "task_due": "bold cyan",
    "task_done": "green",
    "race_step": "bold red",
    "edit": "yellow",
    "score": "bold",
    "timeline_end": "bold",
}
_INJECT_STYLE = {
    "alarm": "bold white on dark_red",
    "status": "bold cyan",
    "reveal": "italic magenta",
    "message": "bold",
}


def _row(event: dict[str, Any], body: Text) -> Table:
    """Time in a column of its own, so wrapped lines stay under the text."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=5, style="dim")
    grid.add_column(ratio=1)
    grid.add_row(str(event.get("sim_time", "")), body)
    return grid


def feed_text(event: dict[str, Any], *, judge: bool = True) -> Text | None:
    """The feed's words for an event, or None for events the feed leaves out (and, unless
    `judge`, the scorer's events: faults, race steps, restores)."""
    kind = str(event.get("kind", ""))
    if kind in _QUIET or (not judge and kind in _JUDGE):
        return None
    if kind == "statement" and event.get("automated"):
        if event.get("ok"):
            return None  # the automation line that follows says what the task did
        return Text(describe(event), style="red")
    if kind == "automation":
        outcome = event.get("outcome")
        style = {"failed": "red", "zero_rows": "yellow", "skipped": "dim italic"}.get(
            str(outcome), "dim")
        return Text(describe(event), style=style)
    if kind == "inject":
        ikind = str(event.get("inject_kind", "message"))
        if ikind == "alarm":
            line = Text.assemble((" ALARM ", "bold white on red"), " ",
                                 (str(event.get("title", "")), "bold red"))
        else:
            line = Text(describe(event), style=_INJECT_STYLE.get(ikind, "bold"))
        text = str(event.get("text") or "")
        if text:
            line.append("\n" + " ".join(text.split()))
        return line
    if kind == "hint":
        return Text(f"HINT (-{event.get('cost', 0)} points): {event.get('text')}",
                    style=_KIND_STYLE["hint"])
    if kind == "task_due":
        return Text.assemble((f"TASK for {event.get('role')}: {event.get('title')}",
                              _KIND_STYLE["task_due"]), f"\n{event.get('context', '')}")
    if kind == "statement":
        style = "" if event.get("ok") else "red"
        if event.get("ok") and event.get("rowcount") == 0 and event.get("rows") is None:
            style = "yellow"
        return Text(describe(event), style=style)
    if kind == "monitor_saved":
        return Text(f"monitor '{event.get('name')}' saved by {event.get('role')}",
                    style=_KIND_STYLE[kind])
    return Text(describe(event), style=_KIND_STYLE.get(kind, ""))


def feed_line(event: dict[str, Any], *, judge: bool = True) -> Table | None:
    body = feed_text(event, judge=judge)
    return None if body is None else _row(event, body)


class EventFeed(RichLog):
    """A log of the session's events."""

    DEFAULT_CSS = """
    EventFeed { background: $surface; }
    """

    def __init__(self, *, judge: bool = True, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, wrap=True, markup=False, highlight=False, max_lines=2000,
                         auto_scroll=True)
        self.judge = judge

    def add(self, event: dict[str, Any]) -> None:
        line = feed_line(event, judge=self.judge)
        if line is not None:
            self.write(line)
