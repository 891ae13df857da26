"""The raceday app: launcher -> briefing -> cast -> play -> end, one screen at a time."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.worker import Worker

from raceday.engine import collector
from raceday.engine.clock import Pace
from raceday.tui.notify import InertNotifications
from raceday.tui.screens.help import GENERAL_HELP, HelpScreen, TooSmallScreen
from raceday.tui.settings import Settings

if TYPE_CHECKING:  # the first frame needs no exercise model (13 ms of dataclasses)
    from raceday.exercise.model import Exercise
    from raceday.tui.screens.briefing import PendingExercise


MIN_SIZE = (80, 24)


class RacedayApp(InertNotifications):
    """The whole TUI; every screen's work goes through its own session runner. Its screens
    reach it through `tui/navigation.py`'s `Navigator`, which it is."""

    CSS_PATH = "app.tcss"
    TITLE = "raceday"
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        exercise: Exercise | None = None,
        *,
        settings: Settings | None = None,
        wall: Callable[[], float] = time.monotonic,
        live_ticks: bool = True,
        resume: Path | None = None,
        pending: PendingExercise | None = None,
    ) -> None:
        super().__init__()
        self.resume = resume  # a session folder to go on with at once (`raceday resume`)
        self.exercise = exercise
        self.pending = pending  # `raceday play ID`: the briefing loads it after its first frame
        self.load_error: Exception | None = None  # why the pending one does not load
        self.settings = settings or Settings()
        self.wall = wall
        self.live_ticks = live_ticks
        self.size_checked = False  # on_mount checks the size first, then every resize

    def get_default_screen(self) -> Screen[Any]:
        """The launcher or the briefing as the stack's base, drawn in the app's first frame.

        Pushed over Textual's blank screen once the app was mounted (as it was), it cost that
        screen's styles and layout and a second pass of its own: 17 ms before the briefing's
        first frame. Play is pushed over it as it was over the blank one; it stays below,
        never shown again. A subclass (the team seat) opens a screen of its own."""
        resuming = self.resume is not None and self.exercise is not None  # see on_mount
        if type(self) is not RacedayApp or resuming:
            return super().get_default_screen()
        if self.exercise is None and self.pending is None:
            from raceday.tui.screens.launcher import LauncherScreen

            return LauncherScreen()
        from raceday.tui.screens.briefing import BriefingScreen

        first = self.exercise if self.exercise is not None else self.pending
        assert first is not None
        return BriefingScreen(first, self.settings)

    def on_mount(self) -> None:
        if self.resume is not None and self.exercise is not None:
            self.resume_play(self.exercise, self.resume)
        self._check_size(self.size.width, self.size.height)
        self.call_after_refresh(collector.settle)  # Textual's, Rich's and the screens' own

    # -- the flow ------------------------------------------------------------------------

    def open_briefing(self, exercise: Exercise) -> None:
        from raceday.tui.screens.briefing import BriefingScreen

        self.exercise = exercise
        self.push_screen(BriefingScreen(exercise, self.settings))

    def open_cast(self, exercise: Exercise) -> None:
        from raceday.tui.screens.cast import CastScreen

        self.push_screen(CastScreen(exercise))

    def start_play(self, exercise: Exercise, cast: dict[str, str]) -> None:
        """Leave the briefing (and launcher) behind and play with `cast` (role -> name): all
        but the stack's base are popped (that one is never shown again)."""
        from raceday.tui.screens.play import PlayScreen

        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(PlayScreen(exercise, cast, self.settings))

    def resume_play(self, exercise: Exercise, folder: Path) -> None:
        """Go on with a session a crash cut short (`raceday resume`, or the launcher's list
        of unfinished sessions): the players and pace are the transcript's."""
        from raceday.transcript.events import Cast, Facilitation
        from raceday.transcript.log import read_events
        from raceday.tui.screens.play import PlayScreen

        readback = read_events(folder)
        names: dict[str, str] = {}
        if readback.start is not None:
            self.settings.pace = Pace(readback.start.pace)
            names = {role: "" for role in readback.start.players}
        for event in readback.events:
            if isinstance(event, Cast):
                names.update(event.names)
            elif isinstance(event, Facilitation) and event.action == "speed" and event.speed:
                self.settings.speed, self.settings.length = event.speed, None  # the last one
        self.exercise = exercise
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(PlayScreen(exercise, names, self.settings, resume=folder))

    def load_failed(self, error: Exception) -> None:
        """The briefing's exercise does not load: exit 2 for a bad exercise (the CLI prints
        its problems), 1 for anything else; `launch` raises `error` once the app is closed."""
        from raceday.errors import ExerciseError

        self.load_error = error
        self.exit(2 if isinstance(error, ExerciseError) else 1)

    # -- help, quit, size ----------------------------------------------------------------

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        own = getattr(self.screen, "help_text", None)  # a screen whose help is its exercise's
        text = (own() if callable(own) else None) or getattr(self.screen, "HELP", None) \
            or GENERAL_HELP
        self.push_screen(HelpScreen(text))

    async def action_quit(self) -> None:
        """ctrl+q: the screen in front says how it ends (the play screen asks, then scores).
        A dialog in front of such a screen closes first and the screen asks, as ctrl+q does
        without it: over F9 or the night-is-over question it quit at once, unscored. Only
        the question ctrl+q itself asked quits on the second press."""
        top = self.screen
        request = getattr(top, "request_quit", None)
        if request is not None:
            request()
            return
        if isinstance(top, ModalScreen) and len(self.screen_stack) > 1:
            means = getattr(top, "quit_means", "close")  # a ConfirmDialog's, else close it
            below = getattr(self.screen_stack[-2], "request_quit", None)
            if means is True:
                top.dismiss(True)
                return
            if means is not None and below is not None:
                top.dismiss(False if means is False else None)
                self.call_later(below)
                return
        self.exit(0)

    def on_resize(self, event: events.Resize) -> None:
        # Textual sends one Resize before the mount, before the app's styles are applied:
        # a screen pushed then draws its text in the background's colour
        if self.size_checked:
            self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        self.size_checked = True
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        top = self.screen_stack[-1] if self.screen_stack else None
        if small and not isinstance(top, TooSmallScreen):
            self.push_screen(TooSmallScreen(width, height, MIN_SIZE))
        elif small and isinstance(top, TooSmallScreen):
            top.resized(width, height)
        elif not small and isinstance(top, TooSmallScreen):
            self.pop_screen()

    def _handle_exception(self, error: Exception) -> None:
        """An error nothing caught ends the app (Textual's way): its traceback goes to the
        session's raceday.log first, so the crash is on record where the crash panel's are."""
        logging.getLogger("raceday.tui").error("the app ended on an unexpected error",
                                               exc_info=error)
        super()._handle_exception(error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that raised (the runner catches session errors; this is the backstop)."""
        from raceday.tui.screens.crash import report_failed_worker

        report_failed_worker(self, event)


def run_app(app: RacedayApp) -> int:
    """Run the app; its exit status (1 when an error nobody caught ended it)."""
    from raceday.logfile import current_log

    result: Any = app.run()
    if app.return_code:
        where = current_log()
        print("raceday: the app ended on an unexpected error"
              + (f" (its traceback is in {where}; raceday resume goes on with the session)"
                 if where is not None else ""), file=sys.stderr)
        return app.return_code
    return int(result) if isinstance(result, int) else 0
