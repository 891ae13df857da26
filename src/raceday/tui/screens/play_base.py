"""What the play screen holds and shows: its seats, the snapshot, the task progress, and the
header, world, tasks and monitors drawn from them; the session reached through its runner.

The screen holds no game logic: it asks its `PlayRunner` to act and shows what comes back
(events, results, snapshots). Per-role state (editor text, history) lives here because it
is the keyboard's, not the game's. The keys and dialogs build on this (`play_dialogs`,
`play_keys`); `play.PlayScreen` answers the runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from raceday.engine.actions import Action, RemoveMonitor
from raceday.engine.clock import LiveClock, Pace
from raceday.engine.guide import Guide, guide_steps
from raceday.engine.snapshot import PendingView, Snapshot
from raceday.engine.task_progress import TaskProgress
from raceday.exercise.model import Exercise
from raceday.store.results import StatementResult
from raceday.transcript import events as ev
from raceday.tui.navigation import Navigator, navigator
from raceday.tui.play_runner import PlayRunner
from raceday.tui.settings import Settings
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.results import ResultsView
from raceday.tui.widgets.side_panel import SidePanel
from raceday.tui.widgets.tasks import render_tasks
from raceday.tui.widgets.world import Alarms, WorldPanel

if TYPE_CHECKING:
    from pathlib import Path

    from raceday.engine.session import Session
    from raceday.tui.screens.harden import HardenScreen
    from raceday.tui.screens.replay import ReplayScreen

NARROW_WIDTH = 110
SHORT_HEIGHT = 32
EARLY_KEYS_KEPT = 4
"""Keys pressed while the session opens that are done once it is open (more are dropped)."""


@dataclass
class Seat:
    """One role's place at the keyboard: its editor text, cursor and history."""

    role: str
    player: str
    text: str = ""
    cursor: tuple[int, int] = (0, 0)
    history: list[str] = field(default_factory=list)
    position: int = 0
    draft: str = ""
    results: list[StatementResult] = field(default_factory=list)
    """What this seat's last run showed (the next seat never sees it)."""


class PlayBase(Screen[None]):
    """The play screen's state and its drawing (no keys, no messages: those build on it)."""

    def __init__(self, exercise: Exercise, cast: dict[str, str], settings: Settings,
                 resume: Path | None = None) -> None:
        super().__init__()
        self.resume_from = resume  # a session folder to resume (`raceday resume`), not a new one
        self.stopped = False  # the machine stopped the session (SessionStopped)
        self.exercise = exercise
        self.settings = settings
        self.seats = [Seat(role, cast.get(role, ""), text=_example(exercise, role))
                      for role in exercise.role_ids if role in cast]
        self.active = 0
        self.snapshot: Snapshot | None = None
        self.alarms = Alarms(show_faults=settings.mode == "onboarding")
        self.progress = TaskProgress(exercise)  # which tasks are done, handled, outstanding
        self.revealed: set[str] = set()  # hint ids
        self._skip_toast_at = -1e9  # when ctrl+n last said what it skipped (one toast a time)
        self._left_undone: set[tuple[str, int]] = set()  # (task, due) ctrl+n was told to pass
        self._newest_hint: str | None = None  # ctrl+y pastes it
        self.live = LiveClock(speed=settings.speed_for(exercise))
        self.guide = Guide(guide_steps(exercise, self.seats[0].role)) \
            if settings.mode == "onboarding" else None
        self.timeline_asked = False
        self.note_author = ""
        self.ending = False
        self._ticker: Timer | None = None
        self._running_note: Timer | None = None
        self.runner: PlayRunner | None = None
        self.tables: dict[str, tuple[str, ...]] = {}
        self.hardening: HardenScreen | None = None
        self.replaying: ReplayScreen | None = None
        self._replay_screen: ReplayScreen | None = None  # kept between ctrl+r presses
        self._replays_asked = self._replays_done = 0
        self._asked_early: list[Callable[[], None]] = []  # keys pressed while it opened
        self._open_failed = False  # it never will: keys say so again (a seat's host gone)
        self._shown: dict[str, object] = {}
        """What each panel shows now: an unchanged panel is not redrawn (a redraw costs a
        frame's worth of rendering when a 1,000-row result is about to appear)."""

    @property
    def seat(self) -> Seat:
        return self.seats[self.active]

    @property
    def role(self) -> str:
        return self.seat.role

    @property
    def raceday(self) -> Navigator:
        return navigator(self.app)

    @property
    def editor(self) -> SqlEditor:
        return self.query_one("#editor", SqlEditor)

    @property
    def results(self) -> ResultsView:
        return self.query_one("#results", ResultsView)

    @property
    def feed(self) -> EventFeed:
        return self.query_one("#feed", EventFeed)

    @property
    def side(self) -> SidePanel:
        return self.query_one("#side", SidePanel)

    def _keep_focus(self) -> None:
        """After a resize or a panel change, typing goes to the editor again (unless the
        narrow side panel covers it, or a dialog is on top)."""
        if self.app.screen is not self:
            return
        focused = self.focused
        if focused is None or not focused.region.area or not _shown(focused):
            if self._side_covers_editor():
                self.side.focus_tabs()
            else:
                self.editor.focus()

    def _side_covers_editor(self) -> bool:
        return self.has_class("-narrow") and self.has_class("-side-open")

    def _layout_for(self, width: int, height: int) -> None:
        self.set_class(width < NARROW_WIDTH or height < SHORT_HEIGHT, "-narrow")

    # -- showing -------------------------------------------------------------------------

    def _show_header(self) -> None:
        snap = self.snapshot
        clock = snap.clock_face if snap else self.exercise.clock.start.strftime("%H:%M")
        text = Text()
        text.append(f" {clock} {self.exercise.clock.zone} ", style="bold reverse")
        text.append(" ")
        if snap and (snap.timeline_over or snap.ended):
            text.append("■ the night is over", style="bold")
        elif self.settings.pace is Pace.LIVE:
            if self.live.paused:
                text.append("⏸ PAUSED", style="bold black on yellow")
            else:
                text.append(f"▶ live {self.live.speed:g}x", style="bold green")
        else:
            text.append("turns", style="bold")
            text.append(" (time moves when you act)", style="dim")
        if snap and snap.next_inject is not None:
            from raceday.engine.clock import clock_time

            text.append(f"  next {clock_time(self.exercise.clock.start, snap.next_inject)}",
                        style="dim")
        text.append("  │ ")
        text.append(self.role, style="bold cyan")
        if self.seat.player:
            text.append(f" ({self.seat.player})", style="cyan")
        due = [(seat.role, len(self.my_outstanding(seat.role))) for seat in self.seats]
        due = [(role, n) for role, n in due if n]
        if due:
            text.append("  │ ")
            text.append("due: " + ", ".join(f"{role} {n}" for role, n in due),
                        style="bold black on cyan")
        text.append("  │ ")
        text.append(self.exercise.title, style="dim")
        if self._changed("header", text):
            self.query_one("#play-header", Static).update(text, layout=False)  # one line

    def _show_world(self, snapshot: Snapshot | None = None) -> None:
        world = snapshot.world if snapshot else None
        alarms = self.alarms
        key = (world or (self.snapshot.world if self.snapshot else None),
               tuple(alarms.faults.items()), tuple(alarms.alerting.items()),
               tuple(alarms.recent))
        if not self._changed("world", key):
            return
        for panel in self.query(WorldPanel):
            panel.show(world, self.alarms)

    @property
    def done_tasks(self) -> set[str]:
        """Tasks the session said are done."""
        return self.progress.done

    @property
    def stopped_steps(self) -> set[str]:
        """Race steps the newest replay or guard check showed prevented."""
        return self.progress.stopped_steps

    def handled_tasks(self) -> set[str]:
        """Tasks no longer outstanding (the panel ticks them; ctrl+n goes past them)."""
        return self.progress.handled()

    def my_outstanding(self, role: str | None = None) -> list[PendingView]:
        snap = self.snapshot
        return self.progress.outstanding(role or self.role, snap.pending if snap else ())

    def _show_tasks(self) -> None:
        snap = self.snapshot
        self.side.show_tasks(render_tasks(
            self.exercise, self.role, snap.minute if snap else 0, snap.pending if snap else (),
            self.done_tasks, hints=bool(self.exercise.hints), handled=self.handled_tasks(),
            repeats=self.progress.repeats,
            statement_sql=dict(snap.statement_sql) if snap else None))

    def _show_monitors(self) -> None:
        snap = self.snapshot
        if snap is not None:
            self.side.show_monitors(snap.monitors, self.alarms.alerting)

    def _changed(self, panel: str, content: object) -> bool:
        """Note what `panel` will show; False when it shows exactly that already."""
        if panel in self._shown and self._shown[panel] == content:
            return False
        self._shown[panel] = content
        return True

    def _show_seat(self) -> None:
        editor = self.editor
        title = f"{self.role}"
        if self.seat.player:
            title += f" · {self.seat.player}"
        if len(self.seats) > 1:
            title += f"  ({self.active + 1}/{len(self.seats)}, F2 passes the keyboard)"
        editor.border_title = Text(title)  # a player's name is shown as typed, not markup
        editor.border_subtitle = "F5 run · F6 run all · tab completes"
        self._show_header()
        self._show_tasks()

    def _show_guide(self) -> None:
        guide = self.query_one("#guide", Static)
        text = self.guide.current if self.guide else None
        guide.display = text is not None
        if text:
            guide.update(Text.assemble((" GUIDE ", "bold black on cyan"), " ", text))

    # -- the clock -----------------------------------------------------------------------

    def tick(self) -> None:
        """Move the session to what the live clock says (set_interval, or a test, calls it)."""
        runner, snap = self.runner, self.snapshot
        if runner is None or snap is None or snap.ended or self.live.paused:
            return
        target = int(self.live.minutes(self.raceday.wall()))
        if target > snap.minute and snap.minute < snap.end_minute:
            runner.tick(target)

    def _stop_ticks(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    # -- actions -------------------------------------------------------------------------

    def _ready(self, again: Callable[[], None] | None = None) -> PlayRunner | None:
        """The runner, once the session is open. A key pressed while it opens (the play
        screen shows ~0.15 s before its world is built) is kept, `again`, and done once it
        is open, as the briefing keeps an early Enter: never lost to a warning."""
        opening = (self.runner is not None and self.runner.session is None
                   and not self._open_failed)
        if opening and again is not None and not self.ending and not self.stopped:
            if len(self._asked_early) < EARLY_KEYS_KEPT:
                self._asked_early.append(again)
            return None
        if self.runner is None or self.runner.session is None or self.ending:
            self.notify("The session is not open yet.", severity="warning")
            return None
        return self.runner

    def _offer_example(self) -> None:
        """The role's example, untouched, is selected: F5 runs it, typing replaces it (the
        first keys are never glued to it)."""
        editor = self.editor
        if editor.text and editor.text == _example(self.exercise, self.role):
            editor.select_all()

    def _facilitation_cast(self, names: dict[str, str]) -> None:
        if self.runner is not None:
            self.runner.act("cast", lambda s: s.record(ev.Cast(names=names)))

    def _facilitation(self, event: ev.Facilitation) -> None:
        """Record the facilitator's hand on the clock (no toast: the screen says it)."""
        if self.runner is not None and self.runner.session is not None:
            self.runner.act("facilitation", lambda s: s.record(event))

    def perform(self, action: str, act: Action) -> None:
        """For the screens over this one (harden): a player's action through our runner."""
        self._perform(action, act)

    def remove_monitor(self, name: str) -> None:
        self._perform("remove monitor", RemoveMonitor(name=name))

    def _perform(self, action: str, act: Action) -> None:
        """A player's action (engine/actions.py), done however this screen's session is run."""
        runner = self._ready()
        if runner is not None:
            runner.perform(action, act)

    def _act(self, action: str, call: Callable[[Session], ev.Event | None]) -> None:
        runner = self._ready()
        if runner is not None:
            runner.act(action, call)


def _shown(widget: Widget) -> bool:
    """The widget and every container above it are displayed."""
    node: Widget | None = widget
    while node is not None:
        if not node.display:
            return False
        parent = node.parent
        node = parent if isinstance(parent, Widget) else None
    return True


def _example(exercise: Exercise, role: str) -> str:
    example = exercise.role(role).example.strip()
    return example + ";" if example and not example.endswith(";") else example
