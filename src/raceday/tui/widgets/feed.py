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

GROUP_FROM = 4
"""Routine automation runs in one minute from which the feed shows one line for the minute
(recovery-under-load runs about ten tasks a minute: one line each pushed alarms out of view)."""


def routine(event: ev.Event) -> bool:
    """An automation run that went as planned: worth a count, not a line of its own."""
    return isinstance(event, ev.Automation) and event.outcome != "failed"


def minute_summary(runs: list[ev.Automation]) -> Text:
    """One line for a minute's routine automation: how many runs, what they did, by whom."""
    changed = sum(r.changed or 0 for r in runs)
    idle = sum(r.outcome in ("zero_rows", "skipped") for r in runs)
    roles = ", ".join(dict.fromkeys(r.role for r in runs))
    return Text(inert(f"automation: {plural(len(runs), 'run')} ({roles}); "
                      f"{plural(changed, 'row')} changed, {idle} with nothing to do"),
                style="dim")


class MinuteGroups:
    """Holds a minute's routine automation runs back until the minute is over (or something
    else happens), then gives them as one summary line, or one by one when they are few."""

    def __init__(self) -> None:
        self.held: list[ev.Automation] = []

    def push(self, event: ev.Event, *, judge: bool = True,
             sql: bool = True) -> list[tuple[ev.Event, Text]]:
        """The lines to show now, oldest first, for one more event. Events the feed leaves
        out (a task falling due, the automation's own statements) do not end the minute."""
        out: list[tuple[ev.Event, Text]] = []
        minute = self.held[0].sim_time if self.held else event.sim_time
        if not routine(event) and event.sim_time == minute \
                and feed_text(event, judge=judge, sql=sql) is None:
            return out
        if self.held and (not routine(event) or event.sim_time != self.held[0].sim_time):
            out = self.flush()
        if routine(event):
            assert isinstance(event, ev.Automation)
            self.held.append(event)
        return out

    def flush(self) -> list[tuple[ev.Event, Text]]:
        runs, self.held = self.held, []
        if len(runs) >= GROUP_FROM:
            return [(runs[0], minute_summary(runs))]
        return [(r, text) for r in runs if (text := feed_text(r)) is not None]


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
        self.groups = MinuteGroups()

    def add(self, event: ev.Event) -> None:
        for held, text in self.groups.push(event, judge=self.judge, sql=self.sql):
            self._show(_row(held, text))
        if routine(event):
            return  # shown with its minute's other runs
        line = feed_line(event, judge=self.judge, sql=self.sql)
        if line is not None:
            self._show(line)

    def _show(self, line: Table) -> None:
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
