"""Play: the clock, the feed, the editor and results, the world, tasks and schema.

`PlayScreen` lays the screen out and answers its runner (the session opened, an event, a
snapshot, results, an action done or failed, a replay, the end). What it holds and draws
is in `play_base`, its keys in `play_keys`, its dialogs in `play_dialogs`; which tasks are
done or still due is the engine's (`engine.task_progress`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from raceday.engine.clock import Pace
from raceday.engine.snapshot import Snapshot
from raceday.exercise.model import Exercise
from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.tui.commands import PlayCommands
from raceday.tui.messages import (
    ActionDone,
    EndProgress,
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
from raceday.tui.screens.help import play_help
from raceday.tui.screens.play_dialogs import hint_sql
from raceday.tui.screens.play_keys import PlayKeys
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.footer import SteadyFooter
from raceday.tui.widgets.results import ResultsView
from raceday.tui.widgets.side_panel import SidePanel
from raceday.tui.widgets.world import WorldPanel

__all__ = ["PlayScreen", "hint_sql"]

TICK_SECONDS = 0.25


class PlayScreen(PlayKeys):
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
            yield SidePanel(id="side")
        yield SteadyFooter(compact=True, show_command_palette=False)  # 80 columns: keys first

    def on_mount(self) -> None:
        if len(self.seats) > 1:  # a hot seat: the footer says how to pass the keyboard
            self._bindings.key_to_bindings["f2"] = [
                Binding("f2", "switch_role", "Pass", priority=True)]
            self.refresh_bindings()
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
                             self.settings.transcripts, self.settings.pace,
                             self.settings.drawn_night(self.exercise))
        self.editor.focus()

    def make_runner(self) -> PlayRunner:
        """Who runs the session: here, in this process (a team seat's screen overrides it)."""
        return SessionRunner(self.app, self, onboarding=self.settings.mode == "onboarding")

    def on_resize(self) -> None:
        self._layout_for(self.app.size.width, self.app.size.height)
        self.call_after_refresh(self._keep_focus)

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
            self.call_after_refresh(self.runner.prepare_replay, import_next_screens)
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
        self.progress.observe(event)
        if isinstance(event, ev.Hint):
            self.revealed.add(event.id)
            self._newest_hint = event.id
        if self.guide is not None and self.guide.observe(event):
            self._show_guide()
        if isinstance(event, ev.TimelineEnd) and not self.timeline_asked:
            self.timeline_asked = True
            self._stop_ticks()
            from raceday.tui.screens.dialogs import ConfirmDialog  # imported by the prepare job
            self.app.push_screen(
                ConfirmDialog(f"The night is over ({event.sim_time}): the timeline has "
                              "run out. End the session and see the score?",
                              yes="See the score", no="Keep playing", quit_means=True),
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
            self.side.show_tables(snapshot.tables)
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
            if isinstance(event, ev.Declaration) and event.verdict == "to_rule":
                self.notify(said, title="Declared in your own words: the facilitator rules on "
                            "it", timeout=15)
            elif isinstance(event, ev.Declaration) and event.verdict != "confirmed" and event.why:
                self.notify(said, title="Declared: it does not count now", severity="warning",
                            timeout=12)
            else:
                self.notify(said, timeout=15 if isinstance(event, ev.Hint | ev.Declaration)
                            else 6)

    @on(GuardsChecked)
    def _guards_checked(self, message: GuardsChecked) -> None:
        """A guard came or went: its task closes (or opens again) now, not when the night
        reaches it. A task that closes says so once."""
        closed = self.progress.guards_shown(message.prevented)
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
            self.progress.guards_shown(message.walk.prevented)
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
        from raceday.tui.screens.dialogs import ConfirmDialog  # imported by the prepare job
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

    @on(EndProgress)
    def _end_progress(self, message: EndProgress) -> None:
        self.results.show_text(Text.assemble(("Scoring… ", "bold"), (message.line, "dim")))

    @on(SessionEnded)
    def _ended(self, message: SessionEnded) -> None:
        from raceday.tui.screens.end import EndScreen

        self._stop_ticks()
        self.app.switch_screen(EndScreen(self.exercise, message.score, message.folder,
                                         message.events, message.debrief))

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

    def request_quit(self) -> None:
        if self.stopped:  # nothing can be ended or saved any more: quit at once
            self.app.exit(1)
            return
        if self.runner is None or self.runner.session is None:
            self.app.exit(0)
            return
        from raceday.tui.screens.dialogs import ConfirmDialog  # imported by the prepare job
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


def import_next_screens() -> None:
    """The modules of the screens play opens next (its dialogs, ctrl+r's replay, the end),
    imported by the runner's prepare job in its worker thread while the players read the
    first screen (the runner imports no screen: screens import the runner)."""
    import raceday.tui.screens.dialogs  # noqa: F401 - the play screen's dialogs
    import raceday.tui.screens.end  # noqa: F401 - the end
    import raceday.tui.screens.replay  # noqa: F401 - ctrl+r
