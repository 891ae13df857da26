"""A player's screen at a seat of a team session: the play screen, run by a `SeatRunner`.

Everything a player does goes to the host as a command; the clock, injects and the end of
the session are the facilitator's, so those keys say so instead.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.binding import Binding
from textual.widgets import Static

from raceday.engine.clock import Pace
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise
from raceday.team.client import Client
from raceday.tui.play_runner import PlayRunner
from raceday.tui.screens.dialogs import ConfirmDialog
from raceday.tui.screens.play import PlayScreen
from raceday.tui.settings import Settings
from raceday.tui.team.seat_runner import HostClock, HostSilent, SeatRunner

FACILITATOR_ONLY = ("pause", "speed", "next", "inject")


class SeatScreen(PlayScreen):
    FACILITATOR_RULES = True  # the host's console rules on a finding in a player's own words
    # the clock's keys are the facilitator's here: pressed at a seat, they say so (hidden)
    BINDINGS = [
        Binding("ctrl+n", "facilitators('skips to the next task or inject')", show=False,
                priority=True),
        Binding("ctrl+t", "facilitators('pauses')", show=False, priority=True),
        Binding("ctrl+g", "facilitators('sets the speed')", show=False, priority=True),
        # the lobby's ready check only; ctrl+b too, for a browser that keeps F10 for its menu
        Binding("f10,ctrl+b", "ready", "Ready", priority=True),
    ]

    def __init__(self, exercise: Exercise, client: Client, settings: Settings) -> None:
        super().__init__(exercise, {client.role: client.player}, settings)
        self.client = client
        self.seat.history = client.history()
        self.seat.position = len(self.seat.history)
        self.timeline_asked = True  # the facilitator ends the session, not a seat
        self.lobby = False
        """The host holds the clock in the lobby: F10 says this seat is ready (or not)."""
        self.ready = False

    def make_runner(self) -> PlayRunner:
        return SeatRunner(self.app, self, self.client, self.exercise)

    def on_mount(self) -> None:
        self.sub_title = f"seat {self.client.seat}"

    @on(HostClock)
    def _host_clock(self, message: HostClock) -> None:
        clock = message.clock
        if self.settings.pace is not Pace.LIVE:
            return
        now = self.raceday.wall()
        if clock.speed != self.live.speed:
            self.live.set_speed(clock.speed, now)
        if clock.paused and not self.live.paused:
            self.live.pause(now)
        elif not clock.paused and self.live.paused:
            self.live.resume(now)
        if clock.lobby != self.lobby:
            self.lobby = clock.lobby
            self.refresh_bindings()
        self._lobby_title()
        self._show_header()

    def _show_header(self) -> None:
        """In the lobby the header says so, and whether this seat said it is ready (the
        play screen's own header would say the clock is paused)."""
        if not self.lobby:
            super()._show_header()
            return
        from rich.text import Text

        getattr(self, "_shown", {}).pop("header", None)  # the play screen's header comes back
        text = Text()
        text.append(f" {self.exercise.clock.start.strftime('%H:%M')} "
                    f"{self.exercise.clock.zone} ", style="bold reverse")
        text.append(" ")
        if self.ready:
            text.append("✓ READY", style="bold black on green")
            text.append("  the night starts when the facilitator starts it (F10: not ready)",
                        style="bold")
        else:
            text.append("⏳ LOBBY", style="bold black on yellow")
            text.append("  press F10 (or ctrl+b) when you are ready; the facilitator starts "
                        "the night", style="bold")
        text.append("  │ ")
        text.append(self.role, style="bold cyan")
        if self.seat.player:
            text.append(f" ({self.seat.player})", style="cyan")
        self.query_one("#play-header", Static).update(text, layout=False)

    def _lobby_title(self) -> None:
        seat = f"seat {self.client.seat}"
        if not self.lobby:
            self.sub_title = seat
        elif self.ready:
            self.sub_title = (f"{seat} · READY: the night starts when the facilitator starts "
                              "the clock (F10: not ready after all)")
        else:
            self.sub_title = (f"{seat} · the lobby: press F10 (or ctrl+b) when you are ready; "
                              "the night starts when the facilitator starts the clock")

    def action_ready(self) -> None:
        """The lobby's ready check: tell the facilitator this seat is ready (F10 again: not)."""
        if not self.lobby:
            return
        ready = not self.ready
        client = self.client

        def say() -> None:
            from raceday.team.client import event_of

            try:
                event_of(client.wait(client.ready(ready), timeout=10))
            except RacedayError as exc:
                self.app.call_from_thread(self.notify, str(exc), title="Ready check",
                                          severity="error")
                return
            self.app.call_from_thread(self._said_ready, ready)

        self.run_worker(say, thread=True, group="seat-ready", exit_on_error=False,
                        description="raceday: the ready check")

    def _said_ready(self, ready: bool) -> None:
        self.ready = ready
        self._lobby_title()
        self._show_header()
        self.notify("The facilitator sees you are ready." if ready else
                    "The facilitator sees you are not ready yet.", timeout=4)

    @on(HostSilent)
    def _host_silent(self, message: HostSilent) -> None:
        """A host that stopped answering: the clock stops here too, and the player is told
        (once), rather than watching a clock run on for a session that is not."""
        now = self.raceday.wall()
        if (message.refusal is not None or message.seconds > 0) and self._closes_on_host_gone():
            self._close_for_host_gone(message)
            return
        if message.refusal is not None:  # a restarted host: this seat's token is old
            self.sub_title = f"seat {self.client.seat} · join again (the host restarted)"
            self.notify(f"{message.refusal}.", severity="error", timeout=30)
        elif message.seconds > 0:
            if self.settings.pace is Pace.LIVE and not self.live.paused:
                self.live.pause(now)
            self.sub_title = f"seat {self.client.seat} · the host is not answering"
            self.notify(f"The host has not answered for {message.seconds:.0f} s: it may have "
                        "stopped. The clock is stopped here; your commands wait for it. If it "
                        "was restarted, run the new join line.", severity="warning",
                        timeout=30)
        else:
            self.sub_title = f"seat {self.client.seat}"
            runner = self.runner
            if isinstance(runner, SeatRunner):
                self.post_message(HostClock(runner.clock))  # the host's own clock again
            self.notify("The host answers again.", timeout=5)
        self._show_header()

    def _closes_on_host_gone(self) -> bool:
        """Set by `SeatApp` (a browser's seat); not imported here: the app imports this."""
        return bool(getattr(self.app, "host_gone_closes", False))

    def _close_for_host_gone(self, message: HostSilent) -> None:
        """A browser's seat ends with its host: one line for the server's log, and the page
        says the session ended (the seat stays the player's if the host comes back)."""
        runner = self.runner
        if isinstance(runner, SeatRunner):
            runner.leave()
        why = (f"{message.refusal}" if message.refusal is not None else
               f"the host has not answered for {message.seconds:.0f} s: it has stopped")
        app: Any = self.app  # a SeatApp (not imported: it imports this screen)
        app.closed_why = (f"seat {self.client.seat} of {self.client.folder}: {why}; this "
                          "browser's seat is closed")
        app.exit(2)

    def action_facilitators(self, what: str) -> None:
        self.notify(f"In a team session the facilitator's console {what}: the clock moves "
                    "for every seat at once.", title="The facilitator's key", timeout=5)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in FACILITATOR_ONLY:
            return False
        if action == "ready":
            return self.lobby
        return super().check_action(action, parameters)

    def request_quit(self) -> None:
        self.app.push_screen(ConfirmDialog(
            "Leave the session? It goes on without you; the same join command brings you "
            "back, with everything that happened meanwhile.", yes="Leave", no="Stay"),
            self._leave)

    def _leave(self, yes: bool | None) -> None:
        if not yes:
            return
        runner = self.runner
        if isinstance(runner, SeatRunner):
            runner.leave()
        self.app.exit(0)
