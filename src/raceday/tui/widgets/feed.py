"""The feed: what happens, newest last, each line tagged with its time and who did it."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.events import Resize
from textual.widgets import RichLog

from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.transcript.render import describe, describe_for_the_room
from raceday.transcript.wording import plural

_QUIET = (ev.SessionStart, ev.Wait, ev.TaskDue)
"""Left out of the feed: a task falling due is shown in the task panel, not here (a Planner
held by a person falls due every two minutes and would push everything else out of view)."""
_JUDGE = (ev.Fault, ev.InvariantClear, ev.RaceStep, ev.Restored)
"""The scorer's own view of the night: the broken invariant named, the race step taken.
Shown only in onboarding; elsewhere the players must see it in the world themselves."""
_KIND_STYLE: dict[type[ev.Event], str] = {
    ev.Fault: "bold white on red",
    ev.Alert: "bold black on yellow",
    ev.Detected: "bold black on green",
    ev.Restored: "bold black on green",
    ev.InvariantClear: "green",
    ev.AlertClear: "green",
    ev.Milestone: "bold green",
    ev.Declaration: "magenta",
    ev.Refused: "red",
    ev.MonitorError: "red",
    ev.MonitorSaved: "cyan",
    ev.Hint: "bold magenta",
    ev.TaskDue: "bold cyan",
    ev.TaskDone: "green",
    ev.RaceStep: "bold red",
    ev.Edit: "yellow",
    ev.ScoreEvent: "bold",
    ev.TimelineEnd: "bold",
}
_INJECT_STYLE = {
    "alarm": "bold white on dark_red",
    "status": "bold cyan",
    "reveal": "italic magenta",
    "message": "bold",
}
_AUTOMATION_STYLE = {"failed": "red", "zero_rows": "yellow", "skipped": "dim italic"}


def _row(event: ev.Event, body: Text) -> Table:
    """Time in a column of its own, so wrapped lines stay under the text."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=5, style="dim")
    grid.add_column(ratio=1)
    grid.add_row(Text(event.sim_time), body)
    return grid


def feed_text(event: ev.Event, *, judge: bool = True, sql: bool = True) -> Text | None:
    """The feed's words for an event, or None for events the feed leaves out (and, unless
    `judge`, the scorer's events: faults, race steps, restores; unless `sql`, the SQL
    people typed: the projector's feed)."""
    e = event
    say = describe if sql else describe_for_the_room
    if isinstance(e, _QUIET) or (not judge and isinstance(e, _JUDGE)):
        return None
    if isinstance(e, ev.Statement):
        if e.automated and e.ok:
            return None  # the automation line that follows says what the task did
        style = "red" if not e.ok else ""
        if e.ok and not e.automated and e.rows is None and e.rowcount == 0 \
                and not e.schema_changed:
            style = "yellow"  # a write that changed nothing
        return Text(say(e), style=style)
    if isinstance(e, ev.Automation):
        return Text(say(e), style=_AUTOMATION_STYLE.get(e.outcome, "dim"))
    if isinstance(e, ev.Inject):
        if e.inject_kind == "alarm":
            line = Text.assemble((" ALARM ", "bold white on red"), " ", (inert(e.title), "bold red"))
        else:
            line = Text(say(e), style=_INJECT_STYLE.get(e.inject_kind, "bold"))
        if e.text:
            line.append("\n" + inert(" ".join(e.text.split())))
        return line
    if isinstance(e, ev.Hint):
        to = f" to {', '.join(e.to)}" if e.to else ""
        return Text(inert(f"HINT{to} (-{plural(e.cost, 'point')}): {e.text}"),
                    style=_KIND_STYLE[ev.Hint])
    if isinstance(e, ev.TaskDue):
        return Text.assemble((inert(f"TASK for {e.role}: {e.title}"), _KIND_STYLE[ev.TaskDue]),
                             inert(f"\n{e.context}"))
    if isinstance(e, ev.MonitorSaved):
        return Text(inert(f"monitor '{e.name}' saved by {e.role}"),
                    style=_KIND_STYLE[ev.MonitorSaved])
    return Text(say(e), style=_KIND_STYLE.get(type(e), ""))


def feed_line(event: ev.Event, *, judge: bool = True, sql: bool = True) -> Table | None:
    body = feed_text(event, judge=judge, sql=sql)
    return None if body is None else _row(event, body)


MAX_ROWS = 600
"""Feed rows kept (and laid out again when the feed's width changes)."""


class EventFeed(RichLog):
    """A log of the session's events, wrapped to the feed's width (again after a resize)."""

    DEFAULT_CSS = """
    EventFeed { background: $surface; }
    """

    def __init__(self, *, judge: bool = True, sql: bool = True,
                 id: str | None = None) -> None:  # noqa: A002
        # min_width=1: RichLog's default (78) lays every line out 78 cells wide and the
        # feed (narrower than that beside the side panel) cuts them off
        super().__init__(id=id, wrap=True, markup=False, highlight=False, max_lines=4000,
                         auto_scroll=True, min_width=1)
        self.judge = judge
        self.sql = sql
        self.rows: list[Table] = []
        self._laid_out_at = 0

    def add(self, event: ev.Event) -> None:
        line = feed_line(event, judge=self.judge, sql=self.sql)
        if line is not None:
            self.rows.append(line)
            del self.rows[:-MAX_ROWS]
            self.write(line, expand=True)

    def on_resize(self, event: Resize) -> None:
        width = self.scrollable_content_region.width
        if not self._size_known or width == self._laid_out_at:
            super().on_resize(event)  # the first size: RichLog writes what waited for it
            self._laid_out_at = width
            return
        self._laid_out_at = width
        if self.rows:
            self.clear()
            for row in self.rows:
                self.write(row, expand=True)
