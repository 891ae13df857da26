"""Play: the clock, the feed, the editor and results, the world, tasks and schema.

The screen holds no game logic: it asks its `SessionRunner` to act and shows what comes
back (events, results, snapshots). Per-role state (editor text, history) lives here because
it is the keyboard's, not the game's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane, Tabs

from raceday.engine.actions import Declare, RemoveMonitor, RevealHint, SaveMonitor, Wait
from raceday.engine.clock import LiveClock, Pace
from raceday.engine.guide import Guide, guide_steps
from raceday.engine.snapshot import PendingView, Snapshot
from raceday.exercise.model import Exercise
from raceday.inert import inert
from raceday.store.results import StatementResult
from raceday.transcript import events as ev
from raceday.tui.app import RacedayApp, Settings
from raceday.tui.commands import PlayCommands
from raceday.tui.messages import (
    ActionDone,
    EngineEvent,
    GuardsChecked,
    JobFailed,
    Refreshed,
    ReplayReady,
    SessionEnded,
    SessionOpened,
    SessionStopped,
    StatementsRan,
)
from raceday.tui.play_runner import PlayRunner
from raceday.tui.runner import SessionRunner
from raceday.tui.screens.crash import show_crash
from raceday.tui.screens.dialogs import (
    ChoiceDialog,
    ConfirmDialog,
    InjectDialog,
    InjectRequest,
    MonitorDialog,
    MonitorRequest,
    NoteDialog,
    NoteRequest,
)
from raceday.tui.screens.help import play_help
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.footer import SteadyFooter
from raceday.tui.widgets.results import ResultsView
from raceday.tui.widgets.schema import SchemaTree
from raceday.tui.widgets.tasks import TaskList, outstanding, render_tasks, task_writes
from raceday.tui.widgets.world import Alarms, WorldPanel

if TYPE_CHECKING:
    from pathlib import Path

    from raceday.engine.session import Session
    from raceday.tui.screens.harden import HardenScreen
    from raceday.tui.screens.replay import ReplayScreen

NARROW_WIDTH = 110
SHORT_HEIGHT = 32
TICK_SECONDS = 0.25
EARLY_KEYS_KEPT = 4
"""Keys pressed while the session opens that are done once it is open (more are dropped)."""
SKIP_TOAST_SECONDS = 6.0
"""ctrl+n says what is still due at most once in this many seconds."""
RUNNING_AFTER = 0.15
"""Seconds a statement runs before the results say "running" (and Esc can cancel it)."""


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


class PlayScreen(Screen[None]):
    COMMANDS = {PlayCommands}

    def help_text(self) -> str:
        """F1 in this exercise's own words (its world panel; F2 only with a hot seat)."""
        return play_help(self.exercise, seats=len(self.seats),
                         onboarding=self.settings.mode == "onboarding")

    BINDINGS = [
        Binding("f1", "app.help", "Help", priority=True),  # first: 80 columns keep it
        Binding("ctrl+q", "app.quit", "Quit", priority=True),  # and the way out, second
        Binding("f5,ctrl+enter,ctrl+j", "run", "Run", priority=True),
        Binding("f6", "run(True)", "Run all", show=False, priority=True),  # on the editor
        # F2 is on the editor's title in a hot seat; alone, pressing it says why it does nothing
        Binding("f2", "switch_role", "Role", show=False, priority=True),
        Binding("f4", "harden", "Harden", priority=True),
        Binding("f7", "monitor", "Monitor", priority=True),
        Binding("f8", "declare", "Declare", priority=True),
        Binding("f9", "hint", "Hint", priority=True),
        Binding("ctrl+n", "next", "Next", priority=True),
        Binding("ctrl+r", "replay", "Replay", priority=True),
        Binding("ctrl+t", "pause", "Pause", priority=True),
        Binding("ctrl+g", "speed", "Speed", priority=True),
        Binding("f3", "side", "Panel", priority=True),  # last: F1 lists it; 80 columns cut it
        Binding("ctrl+f", "facilitate", "Facilitator", show=False, priority=True),
        Binding("ctrl+o", "note", "Note", show=False, priority=True),
        Binding("ctrl+y", "paste_hint", "Paste hint", show=False, priority=True),
        Binding("alt+left", "scroll_results(-8, 0)", "Results left", show=False, priority=True),
        Binding("alt+right", "scroll_results(8, 0)", "Results right", show=False,
                priority=True),
        Binding("alt+up", "scroll_results(0, -1)", "Results up", show=False, priority=True),
        Binding("alt+down", "scroll_results(0, 1)", "Results down", show=False, priority=True),
        Binding("alt+pageup", "step_grid(-1)", "Earlier grid", show=False, priority=True),
        Binding("alt+pagedown", "step_grid(1)", "Later grid", show=False, priority=True),
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

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
        self.done_tasks: set[str] = set()
        self.due_seq: dict[str, int] = {}  # task -> seq of its latest task_due
        self.due_count: dict[str, int] = {}  # task -> how often it fell due, not handled
        self.wrote_seq: dict[tuple[str, str], int] = {}  # (role, table) -> latest write seq
        self.revealed: set[str] = set()  # hint ids
        self.stopped_steps: set[str] = set()  # race steps the newest replay showed prevented
        self._skip_toast_at = -1e9  # when ctrl+n last said what it skipped (one toast a time)
        self._newest_hint: str | None = None  # ctrl+y pastes it
        self._tables_of_tasks: dict[str, set[str]] | None = None
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

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="play-header")
        yield WorldPanel(compact=True, id="world-strip")
        with Horizontal(id="play-body"):
            with Vertical(id="play-main"):
                yield EventFeed(judge=self.settings.mode == "onboarding", id="feed")
                yield Static("", id="guide")
                yield SqlEditor(self.seat.text, id="editor")
                yield ResultsView(id="results")
            with Vertical(id="side"):
                with VerticalScroll(id="world-scroll"):
                    yield WorldPanel(id="world")
                with TabbedContent(id="side-tabs"):
                    with TabPane("Tasks", id="tab-tasks"), VerticalScroll():
                        yield TaskList("", id="tasks")
                    with TabPane("Schema", id="tab-schema"):
                        yield SchemaTree(id="schema")
                    with TabPane("Monitors", id="tab-monitors"), VerticalScroll():
                        yield Static("No monitors yet: F7 saves one.", id="monitors")
        yield SteadyFooter(compact=True, show_command_palette=False)  # 80 columns: keys first

    @property
    def seat(self) -> Seat:
        return self.seats[self.active]

    @property
    def role(self) -> str:
        return self.seat.role

    @property
    def raceday(self) -> RacedayApp:
        assert isinstance(self.app, RacedayApp)
        return self.app

    @property
    def editor(self) -> SqlEditor:
        return self.query_one("#editor", SqlEditor)

    @property
    def results(self) -> ResultsView:
        return self.query_one("#results", ResultsView)

    @property
    def feed(self) -> EventFeed:
        return self.query_one("#feed", EventFeed)

    def on_mount(self) -> None:
        self._layout_for(self.app.size.width, self.app.size.height)
        self._show_header()
        self._offer_example()
        self._show_seat()
        self._show_guide()
        self.results.show_text(Text("Opening the world…", style="dim"))
        self.runner = self.make_runner()
        if self.resume_from is not None and isinstance(self.runner, SessionRunner):
            self.results.show_text(Text("Resuming: playing the session again from its "
                                        "transcript…", style="dim"))
            self.runner.resume(self.resume_from, self.exercise)
        else:
            self.runner.open(self.exercise, [s.role for s in self.seats],
                             self.settings.transcripts, self.settings.pace)
        self.editor.focus()

    def make_runner(self) -> PlayRunner:
        """Who runs the session: here, in this process (a team seat's screen overrides it)."""
        return SessionRunner(self.app, self, onboarding=self.settings.mode == "onboarding")

    def on_resize(self) -> None:
        self._layout_for(self.app.size.width, self.app.size.height)
        self.call_after_refresh(self._keep_focus)

    def _keep_focus(self) -> None:
        """After a resize or a panel change, typing goes to the editor again (unless the
        narrow side panel covers it, or a dialog is on top)."""
        if self.app.screen is not self:
            return
        focused = self.focused
        if focused is None or not focused.region.area or not _shown(focused):
            if self._side_covers_editor():
                self.query_one("#side-tabs", TabbedContent).query_one(Tabs).focus()
            else:
                self.editor.focus()

    def _side_covers_editor(self) -> bool:
        return self.has_class("-narrow") and self.has_class("-side-open")

    def _layout_for(self, width: int, height: int) -> None:
        self.set_class(width < NARROW_WIDTH or height < SHORT_HEIGHT, "-narrow")

    # -- what the runner says ----------------------------------------------------------

    @on(SessionOpened)
    def _opened(self, message: SessionOpened) -> None:
        played = getattr(self.runner.session, "exercise", None) if self.runner else None
        if isinstance(played, Exercise):  # a seat's session is the host's: it has none here
            # the exercise as the session plays it: on PostgreSQL, its variant's SQL
            self.exercise = played
        for event in message.events:
            self._take_event(event)
        names = {seat.role: seat.player for seat in self.seats if seat.player}
        if names and self.resume_from is None:
            self._facilitation_cast(names)
        self._take_snapshot(message.snapshot)
        self.results.show_text(Text("Run a statement (F5): its rows appear here.", style="dim"))
        if isinstance(self.runner, SessionRunner):  # a seat's replays are the host's
            self.call_after_refresh(self.runner.prepare_replay)
        if self.settings.pace is Pace.LIVE:
            self.live.start(self.raceday.wall(), message.snapshot.minute)
            if self.raceday.live_ticks:
                self._ticker = self.set_interval(TICK_SECONDS, self.tick)
        self._show_header()
        early, self._asked_early = self._asked_early, []
        for again in early:  # in the order they were pressed
            again()

    @on(EngineEvent)
    def _event(self, message: EngineEvent) -> None:
        self._take_event(message.event)

    def _take_event(self, event: ev.Event) -> None:
        self.feed.add(event)
        if self.alarms.note(event):
            self._show_world()
        if isinstance(event, ev.TaskDone):
            self.done_tasks.add(event.task)
            self.due_count.pop(event.task, None)
        elif isinstance(event, ev.TaskDue):
            if event.task in self.handled_tasks():
                self.due_count[event.task] = 0  # handled since: count afresh
            self.due_seq[event.task] = event.seq
            self.due_count[event.task] = self.due_count.get(event.task, 0) + 1
        elif isinstance(event, ev.Statement) and not event.automated and event.ok:
            self.wrote_seq[(event.role, "")] = event.seq  # ran anything: reads count too
        if isinstance(event, ev.Statement) and not event.automated and event.ok \
                and (event.writes or event.schema_changed):
            # a write that changed 0 rows counts too: the automation's own runs often do
            for table in event.writes or ("*",):
                self.wrote_seq[(event.role, table)] = event.seq
        elif isinstance(event, ev.Hint):
            self.revealed.add(event.id)
            self._newest_hint = event.id
        if self.guide is not None and self.guide.observe(event):
            self._show_guide()
        if isinstance(event, ev.TimelineEnd) and not self.timeline_asked:
            self.timeline_asked = True
            self._stop_ticks()
            self.app.push_screen(
                ConfirmDialog(f"The night is over ({event.sim_time}): the timeline has "
                              "run out. End the session and see the score?",
                              yes="See the score", no="Keep playing"),
                partial(self._confirm_end, reason="ended"))

    @on(Refreshed)
    def _refreshed(self, message: Refreshed) -> None:
        self._take_snapshot(message.snapshot)

    def _take_snapshot(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        if self.settings.pace is Pace.LIVE:
            # a skip (ctrl+n), paused or not, moves the live clock along with the session:
            # otherwise it would stand still until real time caught up with the skip
            now = self.raceday.wall()
            if self.live.minutes(now) < snapshot.minute:
                self.live.jump_to(snapshot.minute, now)
        if snapshot.tables is not None:
            self.tables = {t.name: tuple(c.name for c in t.columns) for t in snapshot.tables}
            self.editor.tables = self.tables
            self.query_one("#schema", SchemaTree).show_tables(snapshot.tables)
        self._show_header()
        self._show_world(snapshot)
        self._show_tasks()
        self._show_monitors()

    @on(StatementsRan)
    def _ran(self, message: StatementsRan) -> None:
        if self._running_note is not None:
            self._running_note.stop()
            self._running_note = None
        self.results.show(message.results)

    @on(ActionDone)
    def _action_done(self, message: ActionDone) -> None:
        event = message.event
        if event is None:
            return
        if message.action == "edit" and self.hardening is not None:
            self.hardening.edit_done(event)  # the statement's card says what happened
            return
        if isinstance(event, ev.Refused):
            self.notify(event.error, title=f"{message.action}: refused",
                        severity="error", timeout=8)
            return
        said = _action_words(event)
        if said is not None:
            if isinstance(event, ev.Declaration) and event.verdict != "confirmed" and event.why:
                self.notify(said, title="Declared: it does not count now", severity="warning",
                            timeout=12)
            else:
                self.notify(said, timeout=15 if isinstance(event, ev.Hint | ev.Declaration)
                            else 6)

    @on(GuardsChecked)
    def _guards_checked(self, message: GuardsChecked) -> None:
        """A guard came or went: its task closes (or opens again) now, not when the night
        reaches it. A task that closes says so once."""
        before = self.handled_tasks()
        self.stopped_steps = set(message.prevented)
        closed = [t for t in self.exercise.tasks
                  if t.id in self.handled_tasks() - before and t.proves
                  and t.id not in self.done_tasks]
        self._show_tasks()
        self._show_header()
        if closed:
            self.notify("; ".join(f"✓ {inert(t.title, one_line=True)}" for t in closed)
                        + ". Tonight's race, replayed on a copy of your database, is stopped "
                        "there.", title="Guard in place", timeout=8)

    @on(ReplayReady)
    def _replayed(self, message: ReplayReady) -> None:
        newest = self._newest_replay()
        if newest and message.walk.error is None:
            self.stopped_steps = set(message.walk.prevented)
            self._show_tasks()
            self._show_header()
        if self.replaying is not None:
            if newest:
                self.replaying.show_walk(message.walk)
            return
        walk = message.walk
        if walk.error is not None:
            self.notify(walk.error, title="No replay", severity="warning", timeout=8)
        else:
            self.notify(f"Replay recorded: {len(walk.prevented)} of {len(walk.verdicts)} race "
                        f"steps prevented, guards {walk.points}/{walk.max_points}.", timeout=8)

    @on(SessionStopped)
    def _stopped(self, message: SessionStopped) -> None:
        """The machine stopped the session: say why and how to resume, offer the way out."""
        self.stopped = True
        self._stop_ticks()
        if self._running_note is not None:
            self._running_note.stop()
            self._running_note = None
        self.results.show_text(Text(f"The session has stopped: {message.why}", style="bold red"))
        self.app.push_screen(ConfirmDialog(
            f"The session cannot go on: {message.why}", yes="Quit raceday", no="Stay and look"),
            self._quit_if)

    def _quit_if(self, yes: bool | None) -> None:
        if yes:
            self.app.exit(1)

    @on(JobFailed)
    def _failed(self, message: JobFailed) -> None:
        if message.action == "open":  # the keys kept for it are not done: the error says why
            self._open_failed = True
            self._asked_early.clear()
        if message.action == "run" and self._running_note is not None:
            self._running_note.stop()
            self._running_note = None
        if message.action == "run":
            self.results.show_text(Text(f"The statement could not run: {message.error}",
                                        style="bold red"))
        if message.action == "replay" and self._newest_replay() and self.replaying is not None:
            self.replaying.failed(message.error)
        if message.action == "edit" and self.hardening is not None:
            self.hardening.edit_failed(message.error)
        if message.trace:
            show_crash(self.app, message.action, message.error, message.trace, message.log)
            return
        self.notify(message.error, title=f"{message.action} failed", severity="error",
                    timeout=10)
        if message.action == "open":
            self.results.show_text(Text(f"The world could not be opened: {message.error}",
                                        style="bold red"))

    @on(SessionEnded)
    def _ended(self, message: SessionEnded) -> None:
        from raceday.tui.screens.end import EndScreen

        self._stop_ticks()
        self.app.switch_screen(EndScreen(self.exercise, message.score, message.folder,
                                         message.events))

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

    def handled_tasks(self) -> set[str]:
        """Tasks no longer outstanding (the panel ticks them; ctrl+n goes past them): a guard
        task whose race steps the newest replay or guard check showed stopped (checked
        against the team's world after each schema change or edit, before the night reaches
        them), and pending tasks without a `done_when` whose
        role has since written what the task writes (a table its automation SQL writes), or
        run anything when the task's SQL only reads. The score decides nothing from this."""
        handled = set()
        for task in self.exercise.tasks:
            if task.proves and set(task.proves) <= self.stopped_steps:
                handled.add(task.id)  # its guard stops its step (replay or guard check)
                continue
            due = self.due_seq.get(task.id)
            if due is None or task.done_when:
                continue
            tables = self._task_tables.get(task.id) or {""}
            writes = [seq for (role, table), seq in self.wrote_seq.items()
                      if role == task.role and table in tables]
            if any(seq > due for seq in writes):
                handled.add(task.id)
        return handled

    @property
    def _task_tables(self) -> dict[str, set[str]]:
        """The tables each task's automation SQL writes."""
        if self._tables_of_tasks is None:
            sql = {s.id: s.sql for s in self.exercise.statements}
            self._tables_of_tasks = {t.id: task_writes(t, sql) for t in self.exercise.tasks}
        return self._tables_of_tasks

    def my_outstanding(self, role: str | None = None) -> list[PendingView]:
        snap = self.snapshot
        return outstanding(self.exercise, role or self.role, snap.pending if snap else (),
                           self.handled_tasks())

    def _show_tasks(self) -> None:
        snap = self.snapshot
        text = render_tasks(self.exercise, self.role, snap.minute if snap else 0,
                            snap.pending if snap else (), self.done_tasks,
                            hints=bool(self.exercise.hints), handled=self.handled_tasks(),
                            repeats=self.due_count,
                            statement_sql=dict(snap.statement_sql) if snap else None)
        if self._changed("tasks", text):
            self.query_one("#tasks", TaskList).update(text)

    def _show_monitors(self) -> None:
        snap = self.snapshot
        if snap is None or not snap.monitors:
            return
        text = Text()
        for monitor in snap.monitors:
            alerting = monitor.name in self.alarms.alerting
            text.append(" ALERT " if alerting else " quiet ",
                        style="bold black on yellow" if alerting else "dim reverse")
            text.append(f" {monitor.name}", style="bold")
            text.append(f"  ({monitor.role})\n", style="dim")
            text.append(f"   {' '.join(monitor.sql.split())}\n", style="dim")
        if self._changed("monitors", text):
            self.query_one("#monitors", Static).update(text)

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

    def action_run(self, everything: bool = False) -> None:
        """F5 is a priority key: it is handled before the keys (or a paste) typed just ahead
        of it have left the editor's queue. The run waits in that queue behind them, so what
        is in the editor once they are typed is what runs."""
        self.editor.call_later(self._run_typed, everything)

    def _run_typed(self, everything: bool = False) -> None:
        runner = self._ready(partial(self._run_typed, everything))
        if runner is None:
            return
        sql = self.editor.submission(everything=everything)
        if not sql.strip():
            self.results.show([])
            return
        seat = self.seat
        if not seat.history or seat.history[-1] != sql:
            seat.history.append(sql)
        seat.position = len(seat.history)
        # a statement that answers at once never shows "running": that frame would cost as
        # much as drawing its result (a slow one shows it, and Esc cancels it)
        if self._running_note is not None:
            self._running_note.stop()
        self._running_note = self.set_timer(RUNNING_AFTER, partial(self.results.show_running, sql))
        runner.execute(seat.role, sql)

    def action_cancel(self) -> None:
        runner = self.runner
        if runner is not None and runner.statement_running:
            runner.interrupt()
            self.results.show_text(Text("Cancelling…", style="bold yellow"))
        elif self.has_class("-side-open"):
            self.remove_class("-side-open")
            self.call_after_refresh(self._keep_focus)

    def action_switch_role(self) -> None:
        """F2 (priority, as F5): the keys typed before it stay with this seat's editor text,
        those after it go to the next seat's."""
        self.editor.call_later(self._switch_typed)

    def _switch_typed(self) -> None:
        if len(self.seats) < 2:
            self.notify(f"F2 passes the keyboard in a hot seat. Only {self.role} is played by a "
                        "person here; the automation plays the other roles.", timeout=5)
            return
        self._save_seat()
        self.active = (self.active + 1) % len(self.seats)
        editor = self.editor
        editor.text = self.seat.text
        editor.cursor_location = self.seat.cursor
        self._offer_example()
        self._show_seat()
        passed = Text.assemble(("Keyboard passed to ", "dim"), (self.role, "bold cyan"),
                               (f" ({self.seat.player})" if self.seat.player else "", "cyan"))
        if self.seat.results:  # this seat's own last results, never the previous seat's
            self.results.show(self.seat.results)
        else:
            self.results.clear(passed)
        self.notify(passed.plain, timeout=3)
        editor.focus()

    def _offer_example(self) -> None:
        """The role's example, untouched, is selected: F5 runs it, typing replaces it (the
        first keys are never glued to it)."""
        editor = self.editor
        if editor.text and editor.text == _example(self.exercise, self.role):
            editor.select_all()

    def _save_seat(self) -> None:
        self.seat.text = self.editor.text
        self.seat.cursor = self.editor.cursor_location
        self.seat.results = list(self.results.results)

    @on(SqlEditor.HistoryRequested, "#editor")
    def _history(self, message: SqlEditor.HistoryRequested) -> None:
        seat = self.seat
        if not seat.history:
            return
        if seat.position == len(seat.history):
            seat.draft = self.editor.text
        position = max(0, min(len(seat.history), seat.position + message.step))
        if position == seat.position:
            return
        seat.position = position
        text = seat.history[position] if position < len(seat.history) else seat.draft
        self.editor.text = text
        self.editor.move_cursor(self.editor.document.end)

    @on(SqlEditor.CompletionChoices, "#editor")
    def _choices(self, message: SqlEditor.CompletionChoices) -> None:
        shown = "  ".join(message.choices[:8])
        more = f"  (+{len(message.choices) - 8})" if len(message.choices) > 8 else ""
        self.editor.border_subtitle = Text(shown + more)  # names of the world, not markup

    SIDE_TABS = ("tab-tasks", "tab-schema", "tab-monitors")

    def action_side(self) -> None:
        """F3: narrow, open the side panel, then step through its tabs, then close it;
        wide (the panel is always there), step through Tasks, Schema, Monitors."""
        tabs = self.query_one("#side-tabs", TabbedContent)
        narrow = self.has_class("-narrow")
        if narrow and not self.has_class("-side-open"):
            self.add_class("-side-open")
            tabs.active = self.SIDE_TABS[0]
            self.call_after_refresh(self._keep_focus)
            return
        index = self.SIDE_TABS.index(tabs.active) if tabs.active in self.SIDE_TABS else 0
        if narrow and index == len(self.SIDE_TABS) - 1:
            self.remove_class("-side-open")
            tabs.active = self.SIDE_TABS[0]
            self.call_after_refresh(self._keep_focus)
            return
        tabs.active = self.SIDE_TABS[(index + 1) % len(self.SIDE_TABS)]
        self.call_after_refresh(self._keep_focus)

    def action_scroll_results(self, dx: int, dy: int) -> None:
        """alt+arrows: scroll the rows from the editor, no Tab into the grid needed."""
        grid = self.results.table
        if dy:
            grid.action_cursor(dy)
        if dx:
            grid.scroll_to(x=max(0, grid.scroll_offset.x + dx), animate=False)

    def action_step_grid(self, direction: int) -> None:
        if not self.results.step(direction):
            shown = len(self.results.grids)
            self.notify("Only one grid: F6 runs every statement, each with its own grid."
                        if shown < 2 else "No more grids that way.", timeout=3)

    def action_monitor(self) -> None:
        self.editor.call_later(self._monitor_typed)  # after the keys typed ahead (F5's reason)

    def _monitor_typed(self) -> None:
        if self._ready(self._monitor_typed) is None:
            return
        role = self.role
        sql = self.editor.submission()

        def save(request: MonitorRequest | None) -> None:
            if request is not None:
                self._act("monitor", lambda s: s.perform(
                    SaveMonitor(role=role, name=request.name, sql=request.sql)))

        self.app.push_screen(MonitorDialog(sql, role), save)

    def action_declare(self) -> None:
        if self._ready(self.action_declare) is None:
            return
        role = self.role
        # alphabetical, so the menu's order says nothing about which findings are true
        options = sorted(((f.id, f.text) for f in self.exercise.findings),
                         key=lambda o: o[1].casefold())
        if not options:
            self.notify("This exercise has no findings to declare.")
            return

        def chosen(finding: str | None) -> None:
            if finding is not None:
                self.declare(role, finding)

        self.app.push_screen(ChoiceDialog(
            f"Declare a finding (as {role})", options,
            note="What is wrong? A right finding counts as detection when it is so now; a "
                 "wrong one, or one that is not so yet, costs points."), chosen)

    def declare(self, role: str, finding: str) -> None:
        self._act("declare", lambda s: s.perform(Declare(role=role, finding=finding)))

    def action_hint(self) -> None:
        """F9: choose which hint to reveal, each with its cost, before anything is shown.
        The list is the exercise's, in its order, every time: hints taken or about a task
        already done stay in their place, greyed, so the same keys reach the same hint."""
        if self._ready(self.action_hint) is None:
            return
        done = self.done_tasks | self.handled_tasks()
        closed = frozenset(h.id for h in self.exercise.hints
                           if h.id in self.revealed or (h.task is not None and h.task in done))
        if len(closed) == len(self.exercise.hints):
            self.notify("No hint left to reveal." if self.exercise.hints else
                        "This exercise has no hints.", timeout=4)
            return
        titles = {t.id: t.title for t in self.exercise.tasks}
        due_now = [p.task for p in self.my_outstanding()]
        options = []
        for hint in self.exercise.hints:
            about = titles.get(hint.task or "") or hint.id.replace("-", " ").replace("_", " ")
            cost = f"-{hint.cost} point{'s' if hint.cost != 1 else ''}"
            state = ("  (taken: ctrl+y puts it in the editor)" if hint.id in self.revealed
                     else "  (task done)" if hint.id in closed
                     else "  (due now)" if hint.task in due_now else "")
            options.append((hint.id, f"{cost} · {inert(about, one_line=True)}{state}"))
        first = next((h.id for h in self.exercise.hints
                      if h.id not in closed and h.task in due_now),
                     next(h.id for h in self.exercise.hints if h.id not in closed))
        role = self.role

        def reveal(hint_id: str | None) -> None:
            if hint_id is not None:
                self._act("hint", lambda s: s.perform(RevealHint(hint=hint_id, role=role)))

        self.app.push_screen(ChoiceDialog(
            "Reveal a hint (it costs the points shown)", options,
            note="Enter reads the one chosen; the score shows what hints cost. Esc: none.",
            selected=first, disabled=closed), reveal)

    def action_paste_hint(self) -> None:
        """ctrl+y: the newest hint taken into the editor, its SQL alone when it has some
        (one edit: ctrl+z takes it out again)."""
        taken = [h for h in self.exercise.hints if h.id in self.revealed]
        if not taken:
            self.notify("No hint taken yet: F9 reveals one.", timeout=4)
            return
        newest = self._newest_hint or taken[-1].id
        hint = next(h for h in taken if h.id == newest)
        editor = self.editor
        editor.replace(hint_sql(hint.text), editor.document.start, editor.document.end)
        editor.select_all()
        editor.focus()

    def action_next(self) -> None:
        """ctrl+n: let the clock run to the next inject, or sooner to the next time a task of
        a role played here falls due: one press, whatever is due. What is still due is said
        in one toast (not one per press)."""
        if self._ready(self.action_next) is None:
            return
        mine = self.my_outstanding()
        now = self.raceday.wall()
        if mine and now - self._skip_toast_at > SKIP_TOAST_SECONDS:
            self._skip_toast_at = now
            self.notify(f"Still due for {self.role}: {mine[0].title}"
                        + (f" (and {len(mine) - 1} more)" if len(mine) > 1 else "")
                        + ". The Tasks tab keeps them.", timeout=SKIP_TOAST_SECONDS)
        until = self._next_stop()
        self._act("wait", lambda s: s.perform(Wait(until=until)))

    def _next_stop(self) -> int | None:
        """The next minute a played role's task falls due, if before the next inject."""
        snap = self.snapshot
        if snap is None:
            return None
        held = {seat.role for seat in self.seats}
        # the normal night's own tasks never fall due tonight (an on-time Enactor every 2 min)
        normal = set(self.exercise.replay.normal) if self.exercise.replay else set()
        times = [m for t in self.exercise.tasks if t.role in held and t.id not in normal
                 for m in t.times() if m > snap.minute]
        task_at = min(times, default=None)
        inject_at = snap.next_inject
        if task_at is None:
            return None
        if inject_at is not None and inject_at <= task_at:
            return None
        return task_at

    def action_pause(self) -> None:
        if self.settings.pace is not Pace.LIVE:
            self.notify("The turns pace has no running clock: time moves when you act "
                        "(ctrl+n waits for the next event).", timeout=5)
            return
        now = self.raceday.wall()
        if self.live.paused:
            self.live.resume(now)
            self.notify("Clock running.", timeout=2)
            self._facilitation(ev.Facilitation(action="resume"))
        else:
            self.live.pause(now)
            self.notify("Clock paused.", timeout=2)
            self._facilitation(ev.Facilitation(action="pause"))
        self._show_header()

    def action_speed(self) -> None:
        if self.settings.pace is not Pace.LIVE:
            self.notify("Speed applies to the live pace only.", timeout=4)
            return
        options = self._speed_options()
        night = self.exercise.clock.length_minutes

        def chosen(value: str | None) -> None:
            if value is not None:
                self.set_speed(float(value))

        self.app.push_screen(ChoiceDialog(
            "Clock speed: how long the whole night lasts", options,
            note=f"The exercise is {night} simulated minutes; a game day fits it into 60 "
                 "to 90 real minutes. What is left of it now is shown beside each speed.",
            selected=f"{self.live.speed:g}"), chosen)

    def _speed_options(self) -> list[tuple[str, str]]:
        from raceday.engine.clock import real_minutes, speed_choices

        night = self.exercise.clock.length_minutes
        left = max(0, night - (self.snapshot.minute if self.snapshot else 0))
        options = []
        for choice in speed_choices(night, self.live.speed, self.settings.speed):
            label = choice.label()
            if left < night:
                label += f"  (the rest: {real_minutes(left, choice.speed):.0f} min)"
            if abs(choice.speed - self.live.speed) < 1e-9:
                label += "  ← now"
            options.append((f"{choice.speed:g}", label))
        return options

    def set_speed(self, speed: float) -> None:
        from raceday.engine.clock import length_words, real_minutes

        self.live.set_speed(speed, self.raceday.wall())
        self._show_header()
        night = self.exercise.clock.length_minutes
        self._facilitation(ev.Facilitation(
            action="speed", speed=speed,
            detail=f"the whole night lasts {length_words(real_minutes(night, speed))}"))

    def action_facilitate(self) -> None:
        """ctrl+f: the facilitator's menu (injects, the clock), on the players' screen."""
        if self._ready(self.action_facilitate) is None:
            return
        options = [("inject", "Send an inject (to one role or the team, now or at a time)")]
        if self.settings.pace is Pace.LIVE:
            options += [("pause", "Resume the clock" if self.live.paused else "Pause the clock"),
                        ("speed", "Clock speed / the session's length")]
        options += [("next", "Skip to the next inject"),
                    ("note", "Write an observer's note (ctrl+o)")]
        actions: dict[str, Callable[[], None]] = {
            "inject": self.action_inject, "pause": self.action_pause,
            "speed": self.action_speed, "next": self.action_next, "note": self.action_note,
        }

        def chosen(key: str | None) -> None:
            if key in actions:
                actions[key]()

        self.app.push_screen(ChoiceDialog("Facilitator", options), chosen)

    def action_inject(self) -> None:
        if self._ready(self.action_inject) is None:
            return

        def send(request: InjectRequest | None) -> None:
            if request is None:
                return
            if request.at is None:
                self._act("inject", lambda s: s.send_inject(request.title, request.text,
                                                             request.to))
            else:
                at = request.at
                self._act("inject", lambda s: s.schedule_inject(request.title, request.text,
                                                                 at, request.to))

        self.app.push_screen(InjectDialog(self.exercise.role_ids, self._minute_of,
                                          classes="dialog-screen"), send)

    def _minute_of(self, text: str) -> int:
        """'23:55' (the next time the clock shows it) or '+10m', as a minute of the session."""
        from raceday.exercise.times import parse_duration, parse_time

        now = self.snapshot.minute if self.snapshot else 0
        text = text.strip()
        if text.startswith("+"):
            return now + parse_duration(text[1:])
        try:
            return parse_time(text, self.exercise.clock.start, now)
        except ValueError:
            raise ValueError(f'"{text}" is not a time: write 23:55, or +10m') from None

    def action_note(self) -> None:
        """ctrl+o: an observer's note, stamped with the clock, into the transcript."""
        if self._ready(self.action_note) is None:
            return
        clock = self.snapshot.clock_face if self.snapshot else ""

        def save(request: NoteRequest | None) -> None:
            if request is None:
                return
            self.note_author = request.author
            self._act("note", lambda s: s.note(request.text, author=request.author))

        self.app.push_screen(NoteDialog(clock, self.note_author, classes="dialog-screen"), save)

    def _facilitation_cast(self, names: dict[str, str]) -> None:
        if self.runner is not None:
            self.runner.act("cast", lambda s: s.record(ev.Cast(names=names)))

    def _facilitation(self, event: ev.Facilitation) -> None:
        """Record the facilitator's hand on the clock (no toast: the screen says it)."""
        if self.runner is not None and self.runner.session is not None:
            self.runner.act("facilitation", lambda s: s.record(event))

    def action_harden(self) -> None:
        """F4: every automation statement in its own editor (saving goes through us)."""
        if self._ready(self.action_harden) is None or self.snapshot is None:
            return
        if not self.exercise.statements:
            self.notify("This exercise gives the automation no statements to edit.")
            return
        from raceday.tui.screens.harden import HardenScreen

        role = self.role
        screen = HardenScreen(self, role, dict(self.snapshot.statement_sql),
                              may_edit=self.exercise.role(role).schema)
        self.hardening = screen

        def closed(_: None = None) -> None:
            self.hardening = None
            self.editor.focus()

        self.app.push_screen(screen, closed)

    def action_replay(self) -> None:
        """ctrl+r: replay the race against the team's database, then walk through it."""
        runner = self._ready(self.action_replay)
        if runner is None:
            return
        if self.replaying is not None:
            self.notify("A replay is already running.", severity="warning")
            return
        screen = self._replay_screen
        if screen is None:  # one screen for every ctrl+r: composed and laid out once
            from raceday.tui.screens.replay import ReplayScreen

            screen = self._replay_screen = ReplayScreen()
            self.app.install_screen(screen, f"replay-{id(self)}")
        else:
            screen.begin()
        self.replaying = screen
        self._replays_asked += 1

        def closed(_: None = None) -> None:
            self.replaying = None

        runner.replay()  # first: its worker starts while the screen is pushed
        self.app.push_screen(screen, closed)

    def _newest_replay(self) -> bool:
        """One replay's answer is in: True when it answers the newest ctrl+r (a replay left
        while it ran and asked again is answered twice, in order: the first is stale)."""
        self._replays_done += 1
        return self._replays_done == self._replays_asked

    def on_unmount(self) -> None:
        """The replay screen kept for ctrl+r goes with this screen (unless it is shown)."""
        screen = self._replay_screen
        if screen is None:
            return
        try:
            self.app.uninstall_screen(screen)
        except ScreenStackError:  # on a screen stack still: Textual removes it when popped
            return
        screen.remove()

    def act(self, action: str, call: Callable[[Session], ev.Event | None]) -> None:
        """For the screens over this one (harden): a session call through our runner."""
        self._act(action, call)

    def remove_monitor(self, name: str) -> None:
        def remove(session: Session) -> None:
            session.perform(RemoveMonitor(name=name))

        self._act("remove monitor", remove)

    def _act(self, action: str, call: Callable[[Session], ev.Event | None]) -> None:
        runner = self._ready()
        if runner is not None:
            runner.act(action, call)

    def request_quit(self) -> None:
        if self.stopped:  # nothing can be ended or saved any more: quit at once
            self.app.exit(1)
            return
        if self.runner is None or self.runner.session is None:
            self.app.exit(0)
            return
        self.app.push_screen(ConfirmDialog(
            "End the session now and see the score? (The transcript is kept either way.)",
            yes="End and score", no="Keep playing"), self._confirm_end)

    def _confirm_end(self, yes: bool | None, reason: str = "ended by the players") -> None:
        if not yes or self.runner is None or self.ending:
            return
        self.ending = True
        self._stop_ticks()
        self.results.show_text(Text("Scoring…", style="bold"))
        self.runner.end(reason)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        """(name, help, callback) for the command palette."""
        cmds: list[tuple[str, str, Callable[[], Any]]] = [
            ("Run the statement under the cursor", "F5", self.action_run),
            ("Run everything in the editor", "F6", lambda: self.action_run(True)),
            ("Save a monitor", "F7: a query that alerts when it returns rows",
             self.action_monitor),
            ("Declare a finding", "F8", self.action_declare),
            ("Reveal a hint", "F9: costs points", self.action_hint),
            ("Jump to the next inject", "ctrl+n: let the clock run", self.action_next),
            ("Send an inject", "facilitator (ctrl+f): one role or all, now or later",
             self.action_inject),
            ("Write an observer's note", "ctrl+o: into the transcript and the debrief",
             self.action_note),
            ("Harden the automation: edit its statements",
             "F4: guards can live in the automation's own SQL", self.action_harden),
            ("Replay the race", "ctrl+r: against the team's database, step by step",
             self.action_replay),
            ("End the session and see the score", "ctrl+q", self.request_quit),
        ]
        if self.settings.pace is Pace.LIVE:
            cmds.append(("Resume the clock" if self.live.paused else "Pause the clock",
                         "ctrl+t", self.action_pause))
            for key, label in self._speed_options():
                cmds.append((f"Speed {label}", "live clock",
                             partial(self.set_speed, float(key))))
        for index, seat in enumerate(self.seats):
            if index != self.active:
                cmds.append((f"Switch role to {seat.role}", seat.player or "hot seat",
                             partial(self._switch_to, index)))
        for monitor in self.snapshot.monitors if self.snapshot else ():
            cmds.append((f"Remove monitor {monitor.name}", monitor.sql,
                         partial(self.remove_monitor, monitor.name)))
        return cmds

    def _switch_to(self, index: int) -> None:
        for _ in range(len(self.seats)):  # the palette's choice: at once, no keys in flight
            if self.active == index:
                break
            self._switch_typed()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pause", "speed") and self.settings.pace is not Pace.LIVE:
            return False
        return True


def _shown(widget: Widget) -> bool:
    """The widget and every container above it are displayed."""
    node: Widget | None = widget
    while node is not None:
        if not node.display:
            return False
        parent = node.parent
        node = parent if isinstance(parent, Widget) else None
    return True


def _action_words(event: ev.Event) -> str | None:
    """What a toast says when a player's action is done (None: the feed says enough)."""
    if isinstance(event, ev.MonitorSaved):
        return f"Monitor '{event.name}' saved: it runs every minute."
    if isinstance(event, ev.Declaration):  # and at once whether it counts, and why not
        return f"Declared: {event.text}\n{event.why}" if event.why else f"Declared: {event.text}"
    if isinstance(event, ev.Hint):
        cost = f"-{event.cost} point{'' if event.cost == 1 else 's'}"
        return f"Hint ({cost}): {event.text}\nctrl+y puts it in the editor."
    if isinstance(event, ev.Inject):
        return f"Inject sent: {event.title}"
    if isinstance(event, ev.Edit):
        return f"Automation statement {event.statement} replaced."
    if isinstance(event, ev.Note):
        return f"Note saved at {event.sim_time}."
    if isinstance(event, ev.Facilitation) and event.action == "schedule":
        return f"Inject planned for {event.at}: {event.detail}"
    return None


def _example(exercise: Exercise, role: str) -> str:
    example = exercise.role(role).example.strip()
    return example + ";" if example and not example.endswith(";") else example


_SQL_START = re.compile(r"\b(?:SELECT|UPDATE|INSERT|DELETE|CREATE|ALTER|DROP|WITH|BEGIN|"
                        r"REPLACE)\b")


def hint_sql(text: str) -> str:
    """A hint for the editor: its SQL from the first SQL keyword, the words before it and a
    note after it (set off by two spaces and a parenthesis) as SQL comments, so F5 runs only
    the SQL; a hint without SQL becomes a comment."""
    body, _, note = text.strip().partition("  (")
    body = " ".join(body.split())
    found = _SQL_START.search(body)
    lead, sql = (body, "") if found is None else (body[:found.start()], body[found.start():])
    note = note.strip().removesuffix(")").strip()
    lines = [f"-- {lead.strip()}" if lead.strip() else "", sql, f"-- {note}" if note else ""]
    return "\n".join(line for line in lines if line)
