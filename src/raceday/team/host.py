"""The host of a team session: it owns the session (clock, automation, monitors, score,
transcript) and meets its players in `session.db`, or, with `meeting` (a PostgreSQL DSN), in
a schema of its own on that server, where seats on other machines join it.

The host runs in one thread. Each `pump` runs the facilitator's queued calls, then one
queued command of each seat in turn (each through the one statement path, as the seat's
role; team/turns.py), letting the live clock run between any two, and publishes what
happened in one transaction: the events as the session recorded them (already in
`events.jsonl`), each command's outcome, the snapshot the players' screens show. A command
the seat may not send (another role, a forged MAC, a used number) is refused and recorded,
and the session goes on.
"""

from __future__ import annotations

import json
import logging
import queue
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from raceday.engine import aside
from raceday.engine.actions import (
    BY_KIND,
    RemoveMonitor,
    RevealHint,
    SaveMonitor,
    Wait,
    action_from_record,
)
from raceday.engine.clock import LiveClock, Pace
from raceday.engine.headless import open_session, stopped_words
from raceday.engine.session import Session, SessionError
from raceday.engine.snapshot import Snapshot, WorldPlan, take_snapshot
from raceday.engine.unknown_night import DrawnNight
from raceday.errors import MachineError, RacedayError, first_line
from raceday.exercise.model import Exercise
from raceday.inert import has_controls
from raceday.store.session_db import SessionDb, pg_session_db
from raceday.store.team_db import (
    MAX_SEAT_NAME,
    SESSION_DB,
    SESSION_POSTGRES,
    CommandRow,
    CommandStatus,
    EventRow,
    Outcome,
    Publication,
    SessionDbError,
    TeamDb,
)
from raceday.team import wire
from raceday.team.facilitator import FacilitatorActions
from raceday.team.gate import Gate, Verdict, shown_seat
from raceday.team.inject_file import PreparedInject
from raceday.team.inject_plan import InjectPlan
from raceday.team.monitor_owners import MonitorOwners
from raceday.team.program import program
from raceday.team.rulings import rulings_in
from raceday.team.seat import Seat
from raceday.team.seats import SeatSpec, new_token, token_hash, verify
from raceday.team.shown import BACKSTAGE, shown_to_players
from raceday.team.turns import Turns
from raceday.transcript import events as ev
from raceday.transcript.events import to_json_line

_log = logging.getLogger(__name__)
T = TypeVar("T")

POLL_SECONDS = 0.01
"""How often an idle host looks for commands (a `PRAGMA data_version`, nearly free)."""
WOKEN_IDLE_SECONDS = 0.1
"""The longest an idle host on PostgreSQL sleeps: a seat's NOTIFY (or a console call) wakes
it sooner; the clock is read every CLOCK_SECONDS anyway."""
CLOCK_SECONDS = 0.25
"""How often the live clock is read."""
TURNS_S = 1.0
"""How long one pump goes on taking the seats' turns before the console's calls and the
heartbeats get theirs (what is left waits for the next pump)."""
SEAT_ACTIONS = tuple(kind for kind in BY_KIND if kind != Wait.kind)
"""The player's actions a seat sends (engine/actions.py); the clock is the facilitator's."""
PLAYER_ACTIONS = ("join", "leave", "ready", *SEAT_ACTIONS)
BEAT = "beat"
"""A seat's heartbeat: a signed command that says only "this terminal is alive"."""
HEARTBEAT_TIMEOUT_S = 10.0
"""Silence after which a beating seat counts as lost (at least three missed beats)."""
HEARTBEAT_CHECK_S = 0.5
DROP_GRACE_S = 1.0
"""How long an ended PostgreSQL meeting stays up after its last publication, so a seat
woken by it reads the score before its login is dropped."""
MAX_BEAT_S = 60.0
"""The longest heartbeat a seat may promise (a longer one would never be missed)."""


class CommandRefusal(Exception):
    """Why a seat's command is not run (recorded as `command_refused`)."""


class HostStopped(MachineError):
    """The machine stopped the host (a full disk, session.db gone): the session is closed
    without a score, and the words say how to resume it."""


class StaleBeat(CommandRefusal):
    """A heartbeat signed with a token from before the host restarted: refused and answered
    (the seat learns to join again), never recorded; a beat carries nothing, and an old
    terminal beats every 2 s."""


@dataclass
class _Step:
    events: list[EventRow] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    seats: dict[str, Seat] = field(default_factory=dict)
    schema_changed: bool = False


DEFAULT_GRACE_MINUTES = 5
"""How long a held step of a seat nobody is at waits for a person (simulated minutes)."""


class Host(FacilitatorActions):
    """Owns one team session. Build it, `start()` it, then `pump()` (or `run()`)."""

    origin = ""  # "script": `raceday run --team` (the history keeps it apart from plays)
    grace: int | None = DEFAULT_GRACE_MINUTES
    """Minutes a due story task of a seat nobody is at waits before the automation does it
    (None: it waits for the facilitator)."""
    grace_all = False
    """Every seat counts as nobody's (a headless host, script seats): the grace applies to
    all; otherwise only to seats never taken."""

    def __init__(self, exercise: Exercise, seats: Sequence[SeatSpec], *,
                 exercise_ref: str | None = None, transcripts: Path = Path("transcripts"),
                 pace: Pace = Pace.LIVE, speed: float = 60.0,
                 wall: Callable[[], float] = time.monotonic,
                 tokens: dict[str, str] | None = None, time_limit_s: float = 2.0,
                 live: LiveClock | None = None, team: str = "",
                 foreign: Callable[[CommandRow], str | None] | None = None,
                 heartbeat_timeout_s: float = HEARTBEAT_TIMEOUT_S,
                 meeting: str | None = None, lobby: bool = False,
                 night: DrawnNight | None = None) -> None:
        names = [s.name for s in seats]
        if len(set(names)) != len(names):
            raise SessionError("two seats have the same name")
        for name in names:
            if not name or len(name) > MAX_SEAT_NAME or has_controls(name, one_line=True):
                raise SessionError(f"a seat's name must be 1 to {MAX_SEAT_NAME} printable "
                                   f"characters: {shown_seat(name)!r}")
        aside.set_enabled(False)  # a host's other threads use SQLite: its replays fork no child
        for spec in seats:
            if spec.role not in exercise.role_ids:
                raise SessionError(f"unknown role {spec.role!r} for seat {spec.name!r}; roles "
                                   f"are {', '.join(exercise.role_ids)}")
        self.exercise = exercise
        self.night = night
        """An unknown night's drawn night: the facilitator may know it, the seats do not."""
        self.exercise_ref = exercise_ref or exercise.id
        self.seats = {s.name: Seat(s.name, s.role, (tokens or {}).get(s.name) or new_token())
                      for s in seats}
        self.transcripts = transcripts
        self.pace = pace
        self.live = live if live is not None else LiveClock(speed=speed)
        self._own_clock = live is None  # a shared clock is started by the group that owns it
        self.team = team
        """The team's name when one facilitator hosts several (signed into every command)."""
        self.foreign = foreign
        """Names the seat of another team that signed a command, when it is one (a group's)."""
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.meeting = meeting
        """A PostgreSQL DSN: the seats meet the host there, not in the folder's session.db."""
        self._last_beat_check = 0.0
        self.wall = wall
        self.time_limit_s = time_limit_s
        self.session: Session | None = None
        self.db: TeamDb | None = None
        self.resumed = False  # came back after a crash (`raceday resume`): tokens are new
        self.plan = WorldPlan()
        self.snapshot: Snapshot | None = None
        self.ended = False
        self.commands_done = 0
        self.handling: int | None = None
        """The seat command the host is running now: a seat waiting on its answer waits as
        long as it runs (a replay of a long night takes minutes on a loaded machine)."""
        self._calls: queue.Queue[tuple[Callable[[Session], Any], Future[Any]]] = queue.Queue()
        self._turns = Turns()
        self.monitor_owners = MonitorOwners()
        self._step = _Step()
        self._private = False
        self._signed = -1
        self._data_version = -1
        self._tables_json = ""
        self._clock_json = ""
        self._last_clock_read = 0.0
        self.gate = Gate(self.seats.keys())
        self.stopped: str | None = None
        """Why the machine stopped the host, and how to resume (None while it runs)."""
        self.addresses: dict[str, str] = {}
        """On PostgreSQL: each seat's address, with the login the host issued it."""
        self.projector_address: str | None = None
        self.projector_sql = False
        """The projector shows the players' SQL (the facilitator's choice, for the hot wash)."""
        self.in_lobby = lobby and pace is Pace.LIVE
        self.rewritten: set[str] = set()
        """Seats whose row in the seat table someone other than the host changed (or added)."""
        self.injects = InjectPlan(exercise)
        self.prepared: tuple[tuple[PreparedInject, ...], str] | None = None
        """The facilitator's prepared injects and the file they came from (`--injects`): put
        in the master list when the host starts."""
        """The master list: the exercise's injects, the facilitator's prepared and live ones."""
        """The live clock is held at the start until the facilitator starts it (`start_clock`):
        seats join and look at the world meanwhile."""

    # -- start --------------------------------------------------------------------------

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles people hold, in the exercise's order; the automation plays the rest."""
        held = {s.role for s in self.seats.values()}
        return tuple(r for r in self.exercise.role_ids if r in held)

    @property
    def folder(self) -> Path:
        return self.need().folder

    def need(self) -> Session:
        if self.session is None:
            raise RuntimeError("the host has not started")
        return self.session

    def start(self) -> Session:
        """Open the world and the transcript, create session.db, seat nobody yet."""
        session = open_session(self.exercise, self.roles, self.transcripts, self.pace,
                               self.time_limit_s, origin=self.origin, night=self.night)
        self.session = session
        self.db = self._create_db(session.folder)
        for seat in self.seats.values():
            self.db.add_seat(seat.name, seat.role, token_hash(seat.token))
        self.plan = WorldPlan.for_exercise(session.exercise, session.store.tables(),
                                           onboarding=False)
        for event in session.events:  # session_start and whatever the first minute fired
            self._on_event(event)
        session.subscribe(self._on_event)
        if self.prepared is not None:
            self.plan_injects(*self.prepared)
        if self.pace is Pace.LIVE and self._own_clock and not self.in_lobby:
            self.live.start(self.wall(), 0)
        self._publish(meta={
            "exercise": self.exercise_ref, "exercise_id": self.exercise.id,
            "title": self.exercise.title, "folder": str(session.folder.resolve()),
            "pace": self.pace.value, "state": "running",
            **({"team": self.team} if self.team else {}),
        }, tables=True)
        _log.info("team session hosted in %s with seats %s", session.folder,
                  ", ".join(f"{s.name}={s.role}" for s in self.seats.values()))
        return session

    def _create_db(self, folder: Path) -> TeamDb:
        if self.meeting is None:
            return SessionDb.create(folder / SESSION_DB)
        db = pg_session_db().create(self.meeting)
        (folder / SESSION_POSTGRES).write_text(db.where + "\n", encoding="utf-8")
        try:  # each seat and the projector join with a login of their own, never the host's
            for index, seat in enumerate(self.seats.values(), start=1):
                self.addresses[seat.name] = db.issue_login(index, seat.name)
            self.projector_address = db.issue_login(None, None)
        except RacedayError:
            db.drop()
            raise
        return db

    @property
    def where(self) -> str:
        """The address seats join: the session's folder, or its PostgreSQL address."""
        assert self.db is not None
        return self.db.where

    def resume_session(self, folder: Path) -> Session:
        """Go on with a team session whose host was killed (`raceday resume DIR`).

        The session is played again from its transcript (engine/resume.py); session.db keeps
        the seats, each with a new token (the old ones were never stored, only their hashes),
        so everyone joins again with the join lines printed anew; commands still queued from
        before the crash are failed, to be sent again."""
        from raceday.engine.resume import resume_session

        db = SessionDb.open(Path(folder) / SESSION_DB)
        try:
            session = resume_session(Path(folder), self.exercise,
                                     time_limit_s=self.time_limit_s).session
        except BaseException:
            db.close()
            raise
        self.session, self.db = session, db
        self.resumed = True
        before = {row.name: row for row in db.seats()}
        for seat in self.seats.values():
            db.reseat(seat.name, seat.role, token_hash(seat.token))
            if seat.name in before:
                seat.last_nonce = before[seat.name].last_nonce
        for row in db.queued(10_000):
            self._done(row.id, "failed", error="the host restarted: join again with the new "
                                               "token and send it again")
        if not session.ended:  # resumed only to end (it stopped while the night played out)
            self.plan = WorldPlan.for_exercise(session.exercise, session.store.tables(),
                                               onboarding=False)
        published = db.last_seq()
        for event in session.events:  # what the crash never published, and the resume's own
            if event.seq > published:
                self._on_event(event)
        session.subscribe(self._on_event)
        session.facts.rulings[:] = rulings_in(session.events)
        self.monitor_owners.rebuild(session.events)
        self._plan_again(session)
        if self.pace is Pace.LIVE:
            self.live.start(self.wall(), session.minute)
        self.ended = session.ended
        self._publish(meta={"folder": str(session.folder.resolve()), "state": "running"},
                      tables=True)
        _log.info("team session resumed in %s with seats %s", session.folder,
                  ", ".join(f"{s.name}={s.role}" for s in self.seats.values()))
        return session

    def _plan_again(self, session: Session) -> None:
        """The master list as it was: the prepared injects the session started with, and
        what the transcript says was added, moved, cancelled and sent."""
        from raceday.exercise.times import parse_time
        from raceday.team.inject_plan import load_prepared, rebuild

        try:
            prepared = load_prepared(session.folder)
        except ValueError as exc:
            _log.warning("%s", exc)
            prepared = ()
        for inject in prepared:
            self.injects.add(inject, "prepared")
        start = session.exercise.clock.start
        rebuild(self.injects, session.events,
                lambda at, after: parse_time(at, start, after))

    def join_lines(self, where: Path | None = None) -> list[str]:
        """How each seat joins: one command line per seat (`where`: the group's folder)."""
        # a folder's path, absolute (a player's shell may stand anywhere), or an address
        folder = str(Path(where if where is not None else self.where).resolve()) \
            if where is not None or self.meeting is None else self.where
        team = f" --team {self.team}" if self.team else ""
        return [f"{program()} join {shlex.quote(self.addresses.get(s.name, folder))}{team} "
                f"--as NAME --role {s.role} --token {s.token}"
                + (f"   (seat {s.name})" if s.name != s.role else "")
                for s in self.seats.values()]

    # -- the loop ----------------------------------------------------------------------

    def call(self, fn: Callable[[Session], T]) -> Future[T]:
        """Run `fn(session)` in the host's thread at its next pump (the console's way in)."""
        future: Future[T] = Future()
        if self.stopped is not None:
            future.set_exception(HostStopped(self.stopped))
            return future
        self._calls.put((fn, future))
        if self.db is not None:
            self.db.wake()  # a host waiting on NOTIFY runs it now
        return future

    def pump(self) -> int:
        """One round: facilitator calls, seats' commands, the clock; publish. Returns how
        many calls and commands it handled. HostStopped when the machine stops it."""
        if self.stopped is not None:
            raise HostStopped(self.stopped)
        try:
            return self._pump()
        except (MachineError, SessionDbError) as exc:
            raise self._stop_for(exc) from exc

    def unattended(self) -> dict[str, int]:
        """The roles nobody is at, with the grace after which the automation does their due
        story tasks: seats never taken or lost, and, on a headless host (`grace_all`), seats
        that have never acted. A seat that acts and leaves a step undone chose to (the
        refusal a play may be); `grace` None: never (the facilitator hands it over, `a`)."""
        if self.grace is None:
            return {}
        return {seat.role: self.grace for seat in self.seats.values()
                if seat.joined_at is None or seat.lost or (self.grace_all and not seat.acted)}

    def _stop_for(self, exc: BaseException) -> HostStopped:
        """Close the session as a solo one is closed on a full disk: no score, no team_left,
        the transcript whole; say once how to resume."""
        session = self.need()
        if isinstance(exc, HostStopped):
            return exc
        self.stopped = stopped_words(session, exc)
        _log.error("the host stopped: %s", self.stopped)
        session.close()
        while not self._calls.empty():
            _, future = self._calls.get_nowait()
            future.set_exception(HostStopped(self.stopped))
        return HostStopped(self.stopped)

    def _pump(self) -> int:
        session = self.need()
        if self.ended:
            return 0
        session.unattended = self.unattended()
        handled = 0
        while not self._calls.empty():
            fn, future = self._calls.get_nowait()
            handled += 1
            if not future.set_running_or_notify_cancel():
                continue  # the caller gave up on it before it was taken
            try:
                future.set_result(fn(session))
            except MachineError as exc:  # a full disk under the clock: the host stops
                stopped = self._stop_for(exc)
                future.set_exception(stopped)
                raise stopped from exc
            except BaseException as exc:  # the console shows it; the host goes on
                future.set_exception(exc)
        db = self.db
        assert db is not None
        version = db.data_version()
        if version != self._data_version and not session.ended:
            self._data_version = version
            self._turns.add(db.queued(Turns.read_limit(len(self.seats))))
        began = time.monotonic()
        while self._turns and not session.ended and time.monotonic() - began < TURNS_S:
            for row in self._turns.next_round():  # one command of each seat, in turn
                handled += 1
                self._handle(row)
                if session.ended:
                    break
                self._tick_clock(session)  # never behind one seat's whole queue
        self._tick_clock(session)
        self.send_due_injects()
        now = self.wall()
        drained = not self._turns  # no seat's beat still waits in the queue
        if drained and not session.ended and now - self._last_beat_check >= HEARTBEAT_CHECK_S:
            self._last_beat_check = now
            self._check_heartbeats(now)
            self._guard_seats()
        if session.ended:
            self.ended = True
        self._publish()
        return handled

    def _tick_clock(self, session: Session) -> None:
        """Let the live clock run to the minute the wall says (every CLOCK_SECONDS at most),
        the seats' answers so far published first."""
        now = self.wall()
        if (self.pace is not Pace.LIVE or self.live.paused or session.ended
                or now - self._last_clock_read < CLOCK_SECONDS):
            return
        self._last_clock_read = now
        target = int(self.live.minutes(now))
        planned = self.injects.next_minute(session.minute)  # stop there to send it
        if planned is not None:
            target = min(target, planned)
        if target > session.minute and session.minute < session.end_minute:
            self._publish()
            session.advance_to(target)

    def run(self, stop: threading.Event, poll: float = POLL_SECONDS) -> None:
        """Pump until `stop` is set, the session has ended or the machine stopped it
        (`stopped` then says why and how to resume)."""
        while not stop.is_set() and not self.ended:
            try:
                if not self.pump():
                    self.idle(stop, poll)
            except HostStopped:
                return

    def idle(self, stop: threading.Event, poll: float = POLL_SECONDS) -> None:
        """Wait for work: a nap of `poll` on session.db; on PostgreSQL until a seat's NOTIFY
        (or a console call, or the next look at the clock)."""
        db = self.db
        if db is not None and db.woken:
            db.wait(self._data_version, WOKEN_IDLE_SECONDS)
        else:
            stop.wait(poll)

    # -- seats' commands ---------------------------------------------------------------

    def _handle(self, row: CommandRow) -> None:
        session = self.need()
        verdict = self.gate.check(row, self.wall())
        if verdict.refusal is not None:
            self._refuse(session, row, None, verdict)
            return
        seat = self.seats.get(row.seat)
        self._signed = -1
        try:
            payload = self._admit(row, seat)
            assert seat is not None
            if row.kind == BEAT:
                self._done(row.id, "done")
                return
            self.handling = row.id
            try:
                result = self._run(session, seat, row, payload)
            finally:
                self.handling = None
        except StaleBeat as exc:
            self._refuse(session, row, seat, Verdict(str(exc), record=False))
            return
        except CommandRefusal as exc:
            self._refuse(session, row, seat,
                         self.gate.refused(row.seat, self.wall(), str(exc)))
            return
        except MachineError:
            raise  # the host stops, as a solo session does (see pump)
        except (RacedayError, SessionError) as exc:
            self._done(row.id, "failed", error=first_line(exc))
            return
        except Exception as exc:  # a bug: the seat is told, the log keeps the trace
            _log.error("command %s of seat %s failed", row.id, row.seat, exc_info=exc)
            self._done(row.id, "failed", error=f"internal error: {first_line(exc)}")
            return
        self.commands_done += 1
        self._done(row.id, "done", result=result)

    def _refuse(self, session: Session, row: CommandRow, seat: Seat | None,
                verdict: Verdict) -> None:
        """A refused command: one line to its seat, and one event in the transcript while
        the seat's minute has room for it (past that, one warning in the log)."""
        error = verdict.refusal or "refused"
        if not verdict.record:
            if verdict.first_unrecorded:
                _log.warning("seat %s: more refusals this minute than the transcript keeps; "
                             "the rest are refused unrecorded", shown_seat(row.seat))
            self._done(row.id, "refused", error=error)
            return
        signed = seat is not None and self._signed == row.id  # its MAC and number passed
        event = session.record(ev.CommandRefused(
            seat=shown_seat(row.seat), action=row.kind[:40], error=error, command=row.id,
            role=seat.role if seat else None,
            player=seat.player if seat is not None and signed else None))
        self._done(row.id, "refused", error=error,
                   result=wire.dumps({"event": ev.to_record(event)}))

    def _admit(self, row: CommandRow, seat: Seat | None) -> dict[str, Any]:
        if seat is None:
            self._guard_seats()  # a seat added to the seat table is said now
            raise CommandRefusal(f"no seat {row.seat!r} in this session")
        if not verify(seat.token, row.seat, row.nonce, row.kind, row.payload, row.mac,
                      self.team):
            other = self.foreign(row) if self.foreign is not None else None
            if other is not None:
                raise CommandRefusal(f"signed by {other}: a seat of another team cannot act "
                                     f"in team {self.team}'s world")
            if self.resumed:
                kind = StaleBeat if row.kind == BEAT else CommandRefusal
                raise kind("the command is not signed with this seat's token: the host "
                           "restarted with new tokens, join again with yours (or forged?)")
            self._guard_seats()  # a rewritten seat table is put back, and said, now
            if seat.name in self.rewritten:
                raise CommandRefusal(f"the command is not signed with seat {seat.name}'s token: "
                                     "its row in the seat table was rewritten, and the host "
                                     "keeps the seats it issued")
            raise CommandRefusal("the command is not signed with this seat's token (forged?)")
        if row.nonce <= seat.last_nonce:
            raise CommandRefusal(f"command number {row.nonce} was already used by this seat "
                                 "(replayed?)")
        seat.last_nonce = row.nonce
        self._signed = row.id  # from here on, the seat's player sent it
        self._step.seats[seat.name] = seat
        self._heard(seat, back=row.kind != "join")  # a join says so itself
        if row.kind == BEAT:
            return {}
        if row.kind not in PLAYER_ACTIONS:
            raise CommandRefusal(f"a seat may not {row.kind!r}")
        try:
            payload = json.loads(row.payload)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            raise CommandRefusal("the command's payload is not an object")
        role = payload.get("role")  # none named: the seat's own (a replay names none)
        if role is not None and role != seat.role:
            raise CommandRefusal(f"seat {seat.name} was given role {seat.role}, not {role}")
        if row.kind != "join" and seat.player is None:
            raise CommandRefusal("the seat has not been joined")
        return payload

    def _run(self, session: Session, seat: Seat, row: CommandRow,
             payload: dict[str, Any]) -> str | None:
        kind, role = row.kind, seat.role
        if kind == "join":
            player = " ".join(str(payload.get("player") or "").split())[:40] or seat.name
            rejoin = seat.joined_at is not None
            seat.player, seat.joined_at = player, time.time()
            beat = payload.get("beat")
            seat.beat_every = (min(float(beat), MAX_BEAT_S) if isinstance(beat, (int, float))
                               and beat > 0 else None)
            seat.lost = False
            event: ev.Event | None = session.record(ev.SeatJoined(
                seat=seat.name, role=role, player=player, rejoin=rejoin))
            return _event_result(event)
        player = seat.player or seat.name
        if kind == "ready":
            return _event_result(self._ready(seat, payload.get("ready", True) is not False))
        if kind == "leave":
            seat.beat_every = None  # a goodbye: the silence that follows is not a lost seat
            seat.ready = False
            return _event_result(session.record(ev.SeatLeft(seat=seat.name, role=role,
                                                            player=player)))
        if payload.get("kind", kind) != kind:
            raise CommandRefusal(f"the command is {kind!r} but its action is "
                                 f"{str(payload.get('kind'))[:40]!r}")
        seat.acted = True
        try:  # always as the seat's own role, whatever role the record names
            action = action_from_record({**payload, "kind": kind}, role=role)
        except ev.EventError as exc:
            raise CommandRefusal(f"the action cannot be read: {exc}") from None
        if isinstance(action, RevealHint) and action.to:
            raise CommandRefusal("only the facilitator gives a hint to chosen roles")
        if isinstance(action, (SaveMonitor, RemoveMonitor)):  # a monitor is its seat's
            monitor = session.monitors.get(action.name.strip())
            why = self.monitor_owners.refusal(seat.name, role, action.name,
                                              monitor.role if monitor is not None else None)
            if why is not None:
                raise CommandRefusal(why)
        session.record(ev.SeatCommand(seat=seat.name, role=role, player=player, action=kind,
                                      command=row.id))
        done = session.perform(action)
        if isinstance(action, (SaveMonitor, RemoveMonitor)) and not isinstance(done, list):
            self.monitor_owners.note(seat.name, done)
        if isinstance(done, list):
            self._step.schema_changed |= any(r.schema_changed for r in done)
            return wire.results_to_json(done)
        return _event_result(done)

    def _ready(self, seat: Seat, ready: bool) -> ev.Event | None:
        """The lobby's ready check: the seat says it is ready (or not after all); recorded
        when it changes. Once the night has started there is nothing to be ready for."""
        if not self.in_lobby:
            raise SessionError("the night has started: there is no lobby to be ready in")
        if seat.ready == ready:
            return None
        seat.ready = ready
        return self.need().record(ev.SeatReady(seat=seat.name, role=seat.role,
                                               player=seat.player or seat.name, ready=ready))

    # -- heartbeats ----------------------------------------------------------------------

    def _heard(self, seat: Seat, back: bool) -> None:
        """Any signed command is a sign of life; a lost seat that beats again is back."""
        seat.last_heard = self.wall()
        if back and seat.lost and seat.player is not None and seat.beat_every is not None:
            seat.lost = False
            self.need().record(ev.SeatJoined(seat=seat.name, role=seat.role, player=seat.player,
                                             rejoin=True))

    def heartbeat_timeout(self, seat: Seat) -> float:
        return max(self.heartbeat_timeout_s, 3 * (seat.beat_every or 0.0))

    def _check_heartbeats(self, now: float) -> None:
        for seat in self.seats.values():
            if seat.player is None or seat.beat_every is None or seat.lost:
                continue
            silent = now - seat.last_heard
            if silent > self.heartbeat_timeout(seat):
                seat.lost = True
                seat.ready = False
                self.need().record(ev.SeatLost(seat=seat.name, role=seat.role,
                                               player=seat.player, silent_seconds=int(silent)))
                _log.warning("seat %s (%s) lost: silent for %.0f s", seat.name, seat.player,
                             silent)

    def _guard_seats(self) -> None:
        """The seats are the ones the host issued: a row of the seat table a client rewrote
        (another seat's token, its role) or deleted is put back, its player joins again with
        their own token, and it is recorded; a row a client added opens nothing (its
        commands are refused: no such seat), and is recorded once."""
        db, session = self.db, self.need()
        assert db is not None
        rows = {row.name: row for row in db.seats()}
        for seat in self.seats.values():
            issued = token_hash(seat.token)
            row = rows.get(seat.name)
            if row is not None and row.role == seat.role and row.token_hash == issued:
                continue
            db.reseat(seat.name, seat.role, issued)
            self._step.seats[seat.name] = seat  # its player and join time, published again
            self.rewritten.add(seat.name)
            what = "deleted" if row is None else "rewritten"
            _log.warning("seat %s's row in the seat table was %s: put back", seat.name, what)
            session.record(ev.CommandRefused(
                seat=seat.name, action="seat table", command=0, role=seat.role,
                error=f"seat {seat.name}'s row in the seat table was {what} by someone other "
                      "than the host; the host keeps the seats it issued and put it back"))
        for name in rows.keys() - self.seats.keys() - self.rewritten:
            self.rewritten.add(name)
            session.record(ev.CommandRefused(
                seat=shown_seat(name), action="seat table", command=0,
                error=f"a seat {shown_seat(name)!r} was added to the seat table by someone "
                      "other than the host: it opens nothing"))

    def _done(self, command_id: int, status: CommandStatus, *, result: str | None = None,
              error: str | None = None) -> None:
        self._step.outcomes.append(Outcome(command_id, status, time.time(), result, error))

    # -- the end (the facilitator's other actions: team/facilitator.py) -----------------

    def end(self, reason: str = "ended by the facilitator") -> ev.ScoreEvent:
        session = self.need()
        if not session.ended:
            for task in list(session.held):  # the rest of the night plays as the exercise has it
                session.hold_task(task, False)
        session.end(reason)
        self.ended = True
        self._publish()
        _write_debrief(session.folder)
        return next(e for e in reversed(session.events) if isinstance(e, ev.ScoreEvent))

    # -- publishing ----------------------------------------------------------------------

    def _on_event(self, event: ev.Event) -> None:
        self.injects.note(event, event.sim_time)
        private = (self._private and isinstance(event, ev.Note)) or (
            isinstance(event, ev.Facilitation) and event.action in BACKSTAGE)
        self._step.events.append(EventRow(event.seq, event.kind, private,
                                          to_json_line(shown_to_players(event))))
        if isinstance(event, ev.Statement) and event.schema_changed:
            self._step.schema_changed = True

    def clock_state(self) -> dict[str, Any]:
        session = self.need()
        return {"pace": self.pace.value, "paused": self.live.paused, "speed": self.live.speed,
                "minute": session.minute, "ended": session.ended, "lobby": self.in_lobby,
                "projector_sql": self.projector_sql}

    def _publish(self, meta: dict[str, str] | None = None, tables: bool = False) -> None:
        session = self.need()
        step, self._step = self._step, _Step()
        clock = wire.dumps(self.clock_state())
        clock_changed = clock != self._clock_json
        if not (step.events or step.outcomes or step.seats or meta or tables or clock_changed):
            return
        snapshot_json = tables_json = None
        # a heartbeat's outcome (no result, no error, no event) changes nothing on a screen
        answered = any(o.result is not None or o.error is not None for o in step.outcomes)
        if step.events or answered or tables or clock_changed:
            snap = take_snapshot(session, self.plan,
                                 tables=(tables or step.schema_changed) and not session.ended)
            self.snapshot = snap
            snapshot_json = wire.snapshot_to_json(snap)
            if snap.tables is not None:
                candidate = wire.tables_to_json(snap.tables)
                if candidate != self._tables_json:
                    self._tables_json = tables_json = candidate
        if session.ended:
            meta = {**(meta or {}), "state": "ended"}
        self._clock_json = clock
        db = self.db
        assert db is not None
        db.publish(Publication(
            events=step.events, outcomes=step.outcomes, snapshot=snapshot_json,
            tables=tables_json, clock=clock if clock_changed else None, meta=meta,
            seats=[(s.name, s.player, s.joined_at, s.last_nonce) for s in step.seats.values()],
        ))

    def close(self) -> None:
        """Close the meeting; on PostgreSQL, a session that has ended takes its schemas and
        its seats' logins with it (a killed host leaves them, for `raceday resume`)."""
        if self.db is None:
            return
        drop = getattr(self.db, "drop", None)
        if self.ended and drop is not None:
            time.sleep(DROP_GRACE_S)  # the seats read the score the end published first
            try:
                drop()
            except RacedayError as exc:
                _log.warning("the meeting on PostgreSQL was not removed: %s", exc)
                self.db.close()
        else:
            self.db.close()


def _event_result(event: ev.Event | None) -> str:
    return wire.dumps({"event": ev.to_record(event) if event is not None else None})




def _write_debrief(folder: Path) -> None:
    from raceday.transcript.debrief import write_debrief  # heavy, needed only at the end

    try:
        write_debrief(folder)
    except Exception:  # the session is scored and saved; `raceday debrief` writes it again
        _log.exception("debrief.md not written in %s", folder)
