"""`raceday watch SESSION`: the projector view for the room.

The clock and the night's phase, what the customers see (the harms minute by minute, the
world panel, the alarms), the feed and the team's declarations, read from session.db. The
harms are named only in the hot wash (when the facilitator lets the SQL in, or once the
session is over): during play their words would tell the players what to look for. No editor, no answer
key: the scorer's own events (faults named, race steps) stay out of the feed, as on a
player's screen, and so does the SQL the players type, unless the facilitator lets the
projector show it (for the hot wash).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from raceday.engine.snapshot import Snapshot
from raceday.inert import inert
from raceday.team.client import Clock, View
from raceday.team.harms_over_time import HarmsOverTime
from raceday.team.phase import night_phase
from raceday.transcript import events as ev
from raceday.tui.messages import EngineEvent, Refreshed
from raceday.tui.notify import InertNotifications
from raceday.tui.team.seat_runner import HIDDEN, HostClock
from raceday.tui.widgets.feed import MAX_ROWS, EventFeed
from raceday.tui.widgets.footer import SteadyFooter
from raceday.tui.widgets.world import Alarms, WorldPanel

FOLLOW_SECONDS = 0.05
HARM_CELLS = 60
"""The width of a harm's strip: the whole night in this many cells (a few minutes each)."""

WATCH_CSS = """
#watch-header { dock: top; height: 3; padding: 1 2 0 2; background: $panel; }
#watch-body { height: 1fr; }
#watch-world { width: 1fr; padding: 1 2; border-right: vkey $primary 30%; }
#watch-right { width: 2fr; }
#watch-harms { height: auto; padding: 0 1; border: round $error 50%; }
#watch-feed { height: 1fr; border: round $primary 40%; }
#watch-declarations { height: auto; max-height: 12; padding: 0 1;
                      border: round $secondary 50%; }
"""


class WatchScreen(Screen[None]):
    """Shows a team session as it happens; it writes nothing."""

    BINDINGS = [Binding("q", "app.quit", "Quit")]

    def __init__(self, view: View) -> None:
        super().__init__()
        self.view = view
        self.snapshot: Snapshot | None = None
        self.clock = Clock()
        self.alarms = Alarms(show_faults=False)
        self.declarations: list[ev.Declaration] = []
        self.seated: dict[str, str] = {}
        self.shown: list[ev.Event] = []
        """The feed's events, to lay it out again when the SQL is let in or kept out."""
        self.hurt_since: str | None = None
        self.harms = HarmsOverTime()
        self.ready: set[str] = set()
        """Seats that said, in the lobby, they are ready (the room sees the ready check)."""

    def compose(self) -> ComposeResult:
        yield Static("", id="watch-header")
        with Horizontal(id="watch-body"):
            yield WorldPanel(id="watch-world")
            with Vertical(id="watch-right"):
                yield Static("", id="watch-harms")
                yield EventFeed(judge=False, sql=False, id="watch-feed")
                yield Static("", id="watch-declarations")
        yield SteadyFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#watch-feed", EventFeed).border_title = "What happens"
        self.query_one("#watch-declarations", Static).border_title = "The team's declarations"
        self.query_one("#watch-harms", Static).border_title = \
            "What the customers saw, minute by minute"
        self._show_header()
        self._show_harms()
        self._show_declarations()
        self.run_worker(self._follow, thread=True, group="watch", exit_on_error=False,
                        description="raceday: follow the session")

    def _follow(self) -> None:
        worker = get_current_worker()
        view = self.view
        first = True
        while not worker.is_cancelled:
            if not first and not view.changed():
                view.idle(FOLLOW_SECONDS)  # on PostgreSQL: until the host NOTIFYs
                continue
            first = False
            for event in view.new_events():
                if not isinstance(event, HIDDEN):
                    self.post_message(EngineEvent(event))
            snapshot = view.snapshot()
            if snapshot is not None:
                self.post_message(Refreshed(snapshot))
            self.post_message(HostClock(view.clock()))

    @on(EngineEvent)
    def _event(self, message: EngineEvent) -> None:
        event = message.event
        if self.harms.note(event):
            self._show_harms()
        if isinstance(event, ev.Inject | ev.Hint) and event.to:
            return  # a message (or a hint) to one role is theirs, not the room's
        self.query_one("#watch-feed", EventFeed).add(event)
        self.shown.append(event)
        del self.shown[:-MAX_ROWS]
        if self.alarms.note(event):
            self._show_world()
        if isinstance(event, ev.Declaration):
            self.declarations.append(event)
            self._show_declarations()
        if isinstance(event, ev.SeatJoined):
            self.seated[event.seat] = f"{event.player} ({event.role})"
            self._show_header()
        if isinstance(event, ev.SeatReady):
            (self.ready.add if event.ready else self.ready.discard)(event.seat)
            self._show_header()

    @on(Refreshed)
    def _refreshed(self, message: Refreshed) -> None:
        if message.snapshot.ended and self.snapshot is not None:
            return  # an ended session has no world to read: keep the last look at it
        self.snapshot = message.snapshot
        if self.snapshot.healthy:
            self.hurt_since = None
        elif self.hurt_since is None:
            self.hurt_since = self.snapshot.clock_face
        self._show_header()
        self._show_world()
        self._show_harms()

    @on(HostClock)
    def _clock(self, message: HostClock) -> None:
        if message.clock != self.clock:
            sql_changed = message.clock.projector_sql != self.clock.projector_sql
            self.clock = message.clock
            if sql_changed:
                self._lay_out_feed()
            self._show_header()
            self._show_harms()

    def _lay_out_feed(self) -> None:
        """The feed again, with the players' SQL or without it, as the facilitator chose."""
        feed = self.query_one("#watch-feed", EventFeed)
        feed.sql = self.clock.projector_sql
        feed.rows.clear()
        feed.clear()
        for event in self.shown:
            feed.add(event)
        feed.border_title = ("What happens (with the players' SQL)" if feed.sql
                             else "What happens")

    def _show_world(self) -> None:
        if self.snapshot is not None:
            self.query_one("#watch-world", WorldPanel).show(self.snapshot.world, self.alarms)

    def _show_header(self) -> None:
        snap, clock = self.snapshot, self.clock
        text = Text()
        face = snap.clock_face if snap else "--:--"
        text.append(f" {face} ", style="bold reverse")
        text.append(f" {inert(self.view.meta.get('title', ''), one_line=True)}  ", style="bold")
        if self.view.team:
            text.append(f"team {inert(self.view.team, one_line=True)}  ", style="bold cyan")
        if clock.ended or self.view.meta.get("state") == "ended":
            text.append("■ the session is over", style="bold")
        elif snap and snap.timeline_over:
            text.append("■ the night is over", style="bold")
        elif clock.lobby:
            text.append("⏳ waiting to start", style="bold black on yellow")
        elif clock.pace == "live":
            text.append("⏸ PAUSED" if clock.paused else f"▶ live {clock.speed:g}x",
                        style="bold black on yellow" if clock.paused else "bold green")
        else:
            text.append("turns", style="bold")
        phase = night_phase(clock, snap, hurt_since=self.hurt_since)
        text.append("  ")
        text.append(phase, style="bold white on red" if phase.startswith("CUSTOMERS")
                    else "bold")
        if self.seated:
            text.append("\n  at the table: ", style="dim")
            text.append(inert(", ".join(
                who + (" ✓ ready" if clock.lobby and seat in self.ready else "")
                for seat, who in self.seated.items()), one_line=True))
        self.query_one("#watch-header", Static).update(text)

    def _show_harms(self) -> None:
        """The harms over the night so far: one strip each, named in the hot wash."""
        snap = self.snapshot
        now, end = (snap.minute, snap.end_minute) if snap is not None else (0, 1)
        over = self.clock.ended or (snap is not None and snap.ended) or \
            self.view.meta.get("state") == "ended"
        named = self.clock.projector_sql or over
        if over:  # the night played itself out after the team left: to its last event
            now = max(now, self.harms.last)
        text = Text()
        rows = self.harms.strips(now, end, HARM_CELLS, named=named)
        if not rows:
            text.append("No harm so far: the customers are served.\n", style="green")
            rows = [("", self.harms.served(now, end, HARM_CELLS), "")]
        for label, strip, words in rows:
            if label:
                text.append(inert(label, one_line=True), style="bold")
                text.append(f"  {words}\n", style="bold red" if "since" in words else "")
            text.append("▕", style="dim")
            for cell in strip:
                text.append(cell, style="bold red" if cell == "█" else "green")
            text.append("▏\n", style="dim")
        text.append(f" {self.harms.axis(end, HARM_CELLS)}", style="dim")
        self.query_one("#watch-harms", Static).update(text)

    def _show_declarations(self) -> None:
        text = Text()
        if not self.declarations:
            text.append("None yet.", style="dim")
        for d in self.declarations:
            text.append(f"{d.sim_time}  ", style="dim")
            text.append(inert(d.role, one_line=True), style="bold")
            text.append(f": {inert(d.text)}\n")
        self.query_one("#watch-declarations", Static).update(text)


class WatchApp(InertNotifications):
    CSS = WATCH_CSS
    TITLE = "raceday watch"

    def __init__(self, view: View) -> None:
        super().__init__()
        self.view = view

    def on_mount(self) -> None:
        self.push_screen(WatchScreen(self.view))

    def on_unmount(self) -> None:
        self.view.close()


def run_watch(view: View) -> int:
    result: Any = WatchApp(view).run()
    return int(result) if isinstance(result, int) else 0
