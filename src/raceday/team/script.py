"""Play a script as a team session: a host in its own thread and one client per seat, each
step sent by its seat's client and answered before the next (players taking turns).

The clock steps of a script (`at:`, `wait:`) and unseated steps (a hint or replay without
`as:`) are the facilitator's: they go to the host as console calls do. Playing the same
script headless (`raceday run`) records the same session, seats aside.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from raceday.engine.clock import Pace
from raceday.engine.headless import DEFAULT_TRANSCRIPTS, minute_of
from raceday.engine.script import Script, Step
from raceday.engine.session import Session
from raceday.engine.unknown_night import DrawnNight
from raceday.exercise.model import Exercise
from raceday.store.team_db import CommandRow
from raceday.team.client import Client, CommandFailed, TeamError
from raceday.team.host import Host, HostStopped
from raceday.team.seats import SeatSpec, seats_from_roles

_log = logging.getLogger(__name__)
T = TypeVar("T")
ANSWER_SECONDS = 30.0
"""How long the host may take to pick up a call or a seat's command. Once it has, the wait
lasts as long as the host works on it: the end of a recovery-under-load night (its final
replay) took 10 s on a quiet machine and more than 30 s on a loaded one, and a fixed limit
crashed a team script that was only slow."""
STOP_LOOK_S = 0.5
"""How often a seat waiting for an answer looks whether the host has stopped."""


def script_seats(exercise: Exercise, script: Script) -> list[SeatSpec]:
    if script.seats:
        return [SeatSpec(name, role) for name, role in script.seats]
    return seats_from_roles(script.roles if script.roles is not None else exercise.default_roles)


class TeamPlay:
    """A host running in a thread and a client per seat, driven one step at a time."""

    def __init__(self, exercise: Exercise, seats: list[SeatSpec],
                 transcripts: Path = DEFAULT_TRANSCRIPTS, players: dict[str, str] | None = None,
                 host: Host | None = None, pumping: threading.Thread | None = None,
                 night: DrawnNight | None = None) -> None:
        """`host` and `pumping`: a group's team, its host run by the group's thread; `night`:
        an unknown night's (`raceday run --team --unknown`)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pumping = pumping
        if host is None:  # a team of its own; a group's team is given its (running) host
            host = Host(exercise, seats, transcripts=transcripts, pace=Pace.TURNS, night=night)
            host.origin = "script"
            host.start()
            self._thread = threading.Thread(target=host.run, args=(self._stop,),
                                            name="raceday-host", daemon=True)
            self._thread.start()
            self._pumping = self._thread
        self.host = host
        self.clients: dict[str, Client] = {}
        for seat in self.host.seats.values():
            client = Client(self.host.folder, seat.token, (players or {}).get(seat.name, seat.name))
            client.wait(client.join(), ANSWER_SECONDS)
            self.clients[seat.name] = client

    def facilitate(self, fn: Callable[[Session], T]) -> T:
        """Run a facilitator's call on the host and wait for it: for the host to take it
        (ANSWER_SECONDS at most), then for as long as the host runs it."""
        future = self.host.call(fn)
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            try:
                return future.result(STOP_LOOK_S)
            except TimeoutError:
                self._check_host()
                if not future.running() and time.monotonic() >= deadline:
                    future.cancel()
                    raise TimeoutError(f"the host did not take the facilitator's call in "
                                       f"{ANSWER_SECONDS:g} s (is it running?)") from None

    def _check_host(self) -> None:
        """HostStopped when the machine stopped the host; RuntimeError when its thread is
        gone (nothing would ever answer)."""
        if self.host.stopped is not None:
            raise HostStopped(self.host.stopped)
        if self._pumping is not None and not self._pumping.is_alive():
            raise RuntimeError("the host's thread has ended: nothing will answer")

    def seat_for(self, step: Step) -> Client:
        if step.seat is not None:
            return self.clients[step.seat]
        return next(c for c in self.clients.values() if c.role == step.role)

    def play(self, step: Step, where: str) -> None:
        host = self.host
        if step.at is not None and step.at.text == "next":

            def to_next(s: Session) -> None:  # a fault's inject on the way stops it too
                s.run_to_next_inject()
                host.advance_to(s.minute)  # the live clock follows

            self.facilitate(to_next)
        elif step.at is not None:
            at = step.at
            self.facilitate(lambda s: host.advance_to(minute_of(at, s, where)))
        if step.action == "wait":
            assert step.until is not None
            until = step.until

            def wait(s: Session) -> None:
                host.wait_until(None if until.text == "next" else minute_of(until, s, where))

            self.facilitate(wait)
            return
        action = step.player_action()
        if action is None:
            return
        if step.role is None:  # a hint or a replay nobody at a seat asked for
            self.facilitate(lambda s: s.perform(action))
            return
        client = self.seat_for(step)
        row = self._answer(client, client.send(action))
        if row.status != "done":
            raise CommandFailed(f"{where}: {row.error}")

    def _answer(self, client: Client, command: int) -> CommandRow:
        """The host's answer, waited for as long as the host runs the command (ANSWER_SECONDS
        at most before it does); HostStopped at once if the machine stops the host."""
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            self._check_host()
            try:
                return client.wait(command, max(0.0, min(STOP_LOOK_S,
                                                         deadline - time.monotonic())))
            except TeamError:
                if self.host.handling == command:
                    deadline = time.monotonic() + ANSWER_SECONDS  # running: no limit
                elif time.monotonic() >= deadline:
                    raise

    def finish(self, reason: str = "ended") -> None:
        """End the session on the host (the clock left to run out unless `end`) and stop;
        a host the machine stopped is closed unscored, for `raceday resume`."""
        if self.host.stopped is None:
            self.facilitate(lambda s: self.host.end(reason))
        for client in self.clients.values():
            client.close()
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=ANSWER_SECONDS)
            self.host.close()


def run_team_script(exercise: Exercise, script: Script,
                    transcripts: Path = DEFAULT_TRANSCRIPTS,
                    players: dict[str, str] | None = None,
                    night: DrawnNight | None = None) -> TeamPlay:
    """Play a whole script through a host and its seats, then score (as `run_script`)."""
    team = TeamPlay(exercise, script_seats(exercise, script), transcripts, players,
                    night=night)
    try:
        for step in script.steps:
            if step.action == "end":
                break
            team.play(step, f"{script.path}:{step.line}")
        else:
            team.facilitate(lambda s: team.host.advance_to(s.end_minute))
    except HostStopped:
        team.finish()
        raise
    except BaseException:
        _log.exception("the team script %s stopped", script.path)
        team.finish("aborted")
        raise
    team.finish()
    return team
