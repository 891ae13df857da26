"""A team seat's runner: the play screen's actions become commands in session.db (each the
action's own record, `Client.send`), and what the host publishes comes back as the same
messages the hot seat's runner posts.

One thread worker follows the session (a `PRAGMA data_version` every few milliseconds);
others only submit commands (a short insert, never on the UI's event loop). None of them
touch a widget.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.worker import get_current_worker

from raceday.engine.actions import Action, AskReplay, RunSql, Wait
from raceday.errors import RacedayError
from raceday.team.client import (
    BEAT_SECONDS,
    HOST_SILENT_S,
    Client,
    Clock,
    CommandFailed,
    Heartbeat,
    TeamError,
    event_of,
    results_of,
)
from raceday.transcript import events as ev
from raceday.tui.messages import (
    ActionDone,
    EngineEvent,
    JobFailed,
    Refreshed,
    ReplayReady,
    SessionEnded,
    SessionOpened,
    StatementsRan,
)

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump

    from raceday.engine.clock import Pace
    from raceday.engine.session import Session
    from raceday.engine.unknown_night import DrawnNight
    from raceday.exercise.model import Exercise
    from raceday.store.team_db import CommandRow

_log = logging.getLogger(__name__)

FOLLOW_SECONDS = 0.01
"""How often the seat looks for news (a `PRAGMA data_version`, nearly free)."""
JOIN_TIMEOUT_S = 30.0
"""How long a seat waits for the host to answer its join before it says it could not."""
HIDDEN = (ev.SeatCommand,)
"""Events the seat's feed leaves out: the statement or action that follows says enough."""
HOST_RECORDS = ("cast", "facilitation")
"""What the play screen records around a session that, at a seat, is the host's to record."""


@dataclass
class HostClock(Message):
    """The host's clock changed (paused, resumed, a new speed)."""

    clock: Clock


@dataclass
class HostSilent(Message):
    """The host stopped answering (`seconds` since its last answer), or answers again (0);
    `refusal`: the host restarted and this seat must join again."""

    seconds: float
    refusal: str | None = None


@dataclass
class _Pending:
    action: str
    role: str
    sql: str = ""


class SeatRunner:
    """The play screen's runner for a seat of a team session (see `tui/play_runner.py`)."""

    def __init__(self, app: App[Any], target: MessagePump, client: Client,
                 exercise: Exercise) -> None:
        self._app = app
        self.target = target
        self.client = client
        self.exercise = exercise
        self.session: Client | None = None
        self.events: list[ev.Event] = []
        self.clock = Clock()
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heartbeat: Heartbeat | None = None
        self._told_silent = False

    @property
    def statement_running(self) -> bool:
        with self._lock:
            return any(p.action == "run" for p in self._pending.values())

    # -- following the session --------------------------------------------------------------

    def open(self, exercise: Exercise, players: Sequence[str], transcripts: Path,
             pace: Pace, night: DrawnNight | None = None) -> None:
        self._app.run_worker(self._follow, name="follow", group="seat-follow", thread=True,
                             exit_on_error=False, description="raceday: follow the session")

    def _follow(self) -> None:
        client = self.client
        worker = get_current_worker()
        told: tuple[bool, str | None] = (False, None)
        try:
            row = self._join(client, worker)
            if row is None:
                return  # closed while the host was silent
            event_of(row)
        except RacedayError as exc:
            self.target.post_message(JobFailed("open", str(exc)))
            return
        if self._told_silent:
            told = (True, None)  # the host answered after all: "answers again" is said
        self._heartbeat = Heartbeat(client).start()  # the host notices when it stops
        events = client.new_events()
        self.events.extend(events)
        snapshot = client.snapshot(force=True)
        assert snapshot is not None
        self.clock = client.clock()
        # open before the screen hears it: the keys pressed while it opened are done then,
        # and each asks whether the session is open (a key asked early again is lost)
        self.session = client
        self.target.post_message(SessionOpened(tuple(e for e in events if self._shows(e)),
                                               snapshot))
        self.target.post_message(HostClock(self.clock))  # after: opening starts the clock
        if self._ended(events):
            return
        while not self._stop.is_set() and not worker.is_cancelled:
            told = self._tell_silence(told)
            if not client.changed():
                client.idle(FOLLOW_SECONDS)  # on PostgreSQL: until the host NOTIFYs
                continue
            if self._catch_up():
                return

    def _join(self, client: Client, worker: Any) -> CommandRow | None:
        """The host's answer to this seat's join. A host that does not answer (it is gone) is
        told as the heartbeat tells it, after HOST_SILENT_S, not when the wait gives up; a
        seat closed meanwhile stops waiting (None)."""
        command = client.join(beat=BEAT_SECONDS)
        asked = time.monotonic()
        while not self._stop.is_set() and not worker.is_cancelled:
            try:
                return client.wait(command, timeout=BEAT_SECONDS)
            except TeamError:
                silent = time.monotonic() - asked
                if silent >= JOIN_TIMEOUT_S:
                    raise
                if silent >= HOST_SILENT_S and not self._told_silent:
                    self._told_silent = True
                    self.target.post_message(HostSilent(silent))
        return None

    def _tell_silence(self, told: tuple[bool, str | None]) -> tuple[bool, str | None]:
        """Post HostSilent when the host stops answering the beats, or answers again."""
        beat = self._heartbeat
        if beat is None:
            return told
        silent = beat.host_silent_for()
        now = (silent >= HOST_SILENT_S, beat.refusal)
        if now != told:
            self.target.post_message(HostSilent(silent if now[0] else 0.0, beat.refusal))
        return now

    def _catch_up(self) -> bool:
        """Post what is new; True once the session has ended."""
        client = self.client
        events = client.new_events()
        self.events.extend(events)
        for event in events:
            if self._shows(event):
                self.target.post_message(EngineEvent(event))
        self._answer()
        snapshot = client.snapshot()
        if snapshot is not None and not snapshot.ended:
            self.target.post_message(Refreshed(snapshot))
        clock = client.clock()
        if clock != self.clock:
            self.clock = clock
            self.target.post_message(HostClock(clock))
        return self._ended(events)

    def _ended(self, events: Sequence[ev.Event]) -> bool:
        score = next((e for e in events if isinstance(e, ev.ScoreEvent)), None)
        if score is None:
            return False
        if self._heartbeat is not None:
            self._heartbeat.stop()  # nobody listens to a session that is over
        self.target.post_message(SessionEnded(score, self.client.folder, tuple(self.events)))
        return True

    def _shows(self, event: ev.Event) -> bool:
        if isinstance(event, HIDDEN):
            return False
        if isinstance(event, ev.Inject | ev.Hint) and event.to:
            return self.client.role in event.to
        return True

    def _answer(self) -> None:
        with self._lock:
            waiting = list(self._pending.items())
        for command_id, pending in waiting:
            row = self.client.outcome(command_id)
            if row is None:
                continue
            with self._lock:
                self._pending.pop(command_id, None)
            try:
                message = self._message_for(pending, row)
            except CommandFailed as exc:
                message = JobFailed(pending.action, str(exc))
            except Exception as exc:  # a result this seat cannot read: say so, keep following
                _log.error("the answer to command %s could not be read", command_id,
                           exc_info=exc)
                message = JobFailed(pending.action, f"the host's answer was unreadable: {exc}")
            self.target.post_message(message)

    def _message_for(self, pending: _Pending, row: Any) -> Message:
        if pending.action == "run":
            return StatementsRan(pending.role, pending.sql, results_of(row))
        event = event_of(row)
        if pending.action == "replay" and isinstance(event, ev.Replay):
            return ReplayReady(event, self._walk(event))
        return ActionDone(pending.action, event)

    def _walk(self, event: ev.Replay) -> Any:
        from raceday.engine.replaywalk import load_walk, unavailable

        try:
            return load_walk(self.exercise, event, self.client.folder)
        except Exception as exc:
            return unavailable(f"the replayed night could not be read: {exc}")

    # -- sending commands ------------------------------------------------------------------

    def _send(self, pending: _Pending, action: Action) -> None:
        """Send the action's record to the host (a short insert, on a worker thread)."""
        def job() -> None:
            try:
                command_id = self.client.send(action)
            except RacedayError as exc:
                self.target.post_message(JobFailed(pending.action, str(exc)))
                return
            with self._lock:
                self._pending[command_id] = pending

        self._app.run_worker(job, name=pending.action, group="seat-send", thread=True,
                             exit_on_error=False, description=f"raceday: {pending.action}")

    def execute(self, role: str, sql: str) -> None:
        self._send(_Pending("run", role, sql), RunSql(role=role, sql=sql))

    def perform(self, action: str, act: Action) -> None:
        """A player's action, sent to the host as this seat's; the clock is not a seat's."""
        if isinstance(act, Wait):
            self.target.post_message(JobFailed(action, "the facilitator runs the clock in a "
                                                       "team session"))
            return
        if isinstance(act, RunSql):
            self.execute(act.role, act.sql)
            return
        self._send(_Pending(action, self.client.role), act)

    def act(self, action: str, call: Callable[[Session], ev.Event | None],
            *, tables: bool = False) -> None:
        """A session call other than a player's action: the host's to make (the cast, the
        facilitator's hand on the clock, injects and notes), never a seat's."""
        if action not in HOST_RECORDS:
            self.target.post_message(JobFailed(action, f"a seat cannot {action} in a team "
                                                       "session: it is the facilitator's"))

    def replay(self) -> None:
        self._send(_Pending("replay", self.client.role), AskReplay())

    def tick(self, minute: int) -> None:
        """The host owns the clock: a seat's ticks do nothing."""

    def interrupt(self) -> None:
        """A statement runs on the host, which stops it at its time limit."""

    def end(self, reason: str = "ended") -> None:
        self.leave()

    def leave(self) -> None:
        """Say goodbye (the seat stays ours to come back to) and stop following."""
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.stop()
        try:
            self.client.submit("leave", {})
        except RacedayError:
            pass
