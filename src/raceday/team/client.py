"""A seat's side of a team session, without any UI: find the seat by its token, send signed
commands, read the events and the state the host publishes.

Clients never touch the world: they write commands into session.db (or the session's
schema in PostgreSQL, `raceday join postgresql://…?session=ID`) and read what the host made
of them. `View` is the read-only part (the projector view needs nothing more).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raceday.engine.actions import Action, action_to_record
from raceday.engine.snapshot import Snapshot
from raceday.errors import RacedayError
from raceday.store.results import StatementResult, TableInfo
from raceday.store.session_db import open_team_db
from raceday.store.team_db import CommandRow, TeamDb
from raceday.team import wire
from raceday.team.seats import sign, token_hash
from raceday.transcript import events as ev

WAIT_POLL_SECONDS = 0.003
WOKEN_WAIT_SECONDS = 0.25
"""The longest a waiter woken by NOTIFY (PostgreSQL) sleeps before it looks at its stop flag."""
BEAT_SECONDS = 2.0
HOST_SILENT_S = 3 * BEAT_SECONDS
"""A host that has answered none of a seat's beats for this long has stopped (it answers a
beat within its next pump, a few milliseconds)."""
"""How often a player's terminal tells the host it is alive."""


class TeamError(RacedayError):
    """A seat that cannot be taken, a session that is not there."""


class CommandFailed(TeamError):
    """The host refused or could not run a command; the message says why."""

    def __init__(self, message: str, event: ev.Event | None = None) -> None:
        super().__init__(message)
        self.event = event


@dataclass(frozen=True)
class Clock:
    """The host's clock as a client shows it."""

    pace: str = "live"
    paused: bool = False
    speed: float = 60.0
    minute: int = 0
    ended: bool = False
    lobby: bool = False
    """Held at the start until the facilitator starts the night."""
    projector_sql: bool = False
    """The facilitator lets the projector show the players' SQL (the hot wash)."""


class View:
    """Reads a team session: its events in order, the snapshot, the clock."""

    def __init__(self, session: Path | str) -> None:
        self.db: TeamDb = open_team_db(session)
        self.meta = self.db.meta()
        self.team = self.meta.get("team", "")
        self.folder = Path(self.meta.get("folder", self.db.where))
        """The host's folder (on the host's machine: across machines it may not be here)."""
        self.last_seq = 0
        self._data_version = -1
        self._state_version = -1
        self._tables_version = -1
        self._tables: tuple[TableInfo, ...] | None = None

    def changed(self) -> bool:
        """True when the host (or another seat) has written since the last call."""
        version = self.db.data_version()
        if version == self._data_version:
            return False
        self._data_version = version
        return True

    def idle(self, seconds: float) -> None:
        """Wait for news after `changed()` said there was none: a nap of `seconds` on
        session.db; on PostgreSQL until the host's NOTIFY (or a little longer)."""
        if self.db.woken:
            self.db.wait(self._data_version, max(seconds, WOKEN_WAIT_SECONDS))
        else:
            time.sleep(seconds)

    def new_events(self, private: bool = False) -> list[ev.Event]:
        rows = self.db.events_after(self.last_seq, private=private)
        events = [ev.from_record(json.loads(row.line)) for row in rows]
        if rows:
            self.last_seq = rows[-1].seq
        return events

    def snapshot(self, force: bool = False) -> Snapshot | None:
        """The newest snapshot, or None when it has not changed since the last call."""
        state = self.db.state()
        if state is None or (state.version == self._state_version and not force):
            return None
        tables = None
        if state.tables_version != self._tables_version or force:
            self._tables_version = state.tables_version
            self._tables = wire.tables_from_json(state.tables)
            tables = self._tables
        self._state_version = state.version
        return wire.snapshot_from_json(state.snapshot, tables)

    def clock(self) -> Clock:
        text = self.db.clock()
        data = json.loads(text) if text else {}
        fields = Clock.__dataclass_fields__
        return Clock(**{k: v for k, v in data.items() if k in fields})

    @property
    def ended(self) -> bool:
        return self.db.meta().get("state") == "ended"

    def close(self) -> None:
        self.db.close()


class Client(View):
    """A seat: joins with its token, sends commands signed with it."""

    def __init__(self, session: Path | str, token: str, player: str,
                 role: str | None = None) -> None:
        super().__init__(session)
        mine = [s for s in self.db.seats() if s.token_hash == token_hash(token)]
        if not mine:
            self.close()
            raise TeamError("that token opens no seat of this session (ask the host for "
                            "the join command)")
        seat = mine[0]
        if role is not None and role != seat.role:
            self.close()
            raise TeamError(f"that token is for seat {seat.name} ({seat.role}), not {role}")
        self.seat = seat.name
        self.role = seat.role
        self.player = " ".join(player.split()) or seat.name
        self._token = token
        self._nonce = seat.last_nonce
        self._submitting = threading.Lock()  # numbers reach the host in the order they grow

    def send(self, action: Action) -> int:
        """Queue a player's action for the host: its record (`action_to_record`), which the
        host reads back as this seat's role whatever role it names (None: the seat's);
        returns the command's id at once."""
        return self._queue(action.kind, action_to_record(action))

    def submit(self, kind: str, payload: dict[str, Any]) -> int:
        """Queue one of the seat's own commands (join, ready, leave, a beat) for the host;
        returns its id at once."""
        return self._queue(kind, {"role": self.role, **payload})

    def _queue(self, kind: str, record: dict[str, Any]) -> int:
        with self._submitting:
            self._nonce = max(self._nonce + 1, time.time_ns() // 1000)
            body = wire.dumps(record)
            mac = sign(self._token, self.seat, self._nonce, kind, body, self.team)
            return self.db.submit(self.seat, self._nonce, kind, body, mac, time.time())

    def outcome(self, command_id: int) -> CommandRow | None:
        """The command as the host left it, or None while it is queued."""
        row = self.db.command(command_id)
        return row if row is not None and row.status != "queued" else None

    def wait(self, command_id: int, timeout: float = 30.0) -> CommandRow:
        deadline = time.monotonic() + timeout
        while True:
            seen = self.db.data_version()  # before the read: a NOTIFY after it ends the wait
            row = self.outcome(command_id)
            if row is not None:
                return row
            left = deadline - time.monotonic()
            if left < 0:
                raise TeamError(f"the host has not answered in {timeout:g} s (is it running?)")
            self.db.wait(seen, min(left, WOKEN_WAIT_SECONDS) if self.db.woken
                         else WAIT_POLL_SECONDS)

    def join(self, beat: float | None = None) -> int:
        """Take the seat; with `beat`, promise a heartbeat that often (the host watches it)."""
        payload: dict[str, Any] = {"player": self.player}
        if beat:
            payload["beat"] = beat
        return self.submit("join", payload)

    def beat(self) -> int:
        return self.submit("beat", {})

    def ready(self, ready: bool = True) -> int:
        """Say, in the lobby, that this seat is ready to start (or not after all)."""
        return self.submit("ready", {"ready": ready})

    def history(self) -> list[str]:
        """This seat's statements so far, oldest first (a rejoined editor's history)."""
        out: list[str] = []
        for row in self.db.commands_of(self.seat, "sql"):
            try:
                sql = json.loads(row.payload).get("sql")
            except (ValueError, AttributeError):
                continue
            if isinstance(sql, str) and (not out or out[-1] != sql):
                out.append(sql)
        return out


class Heartbeat:
    """Beats for a client in a thread of its own until stopped (or the process dies, which
    is the point: the host hears the silence). It listens too: a beat the host leaves
    unanswered says the host has stopped (`host_silent_for`), and a beat refused because the
    host restarted says the seat must join again (`refusal`)."""

    def __init__(self, client: Client, every: float = BEAT_SECONDS,
                 wall: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.every = every
        self.wall = wall
        self.refusal: str | None = None
        self._unanswered: deque[tuple[int, float]] = deque()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="raceday-heartbeat",
                                        daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.beat_once()

    def beat_once(self) -> None:
        """One beat, and a look at what became of the earlier ones."""
        try:
            self._unanswered.append((self.client.beat(), self.wall()))
            self._listen()
        except RacedayError:  # session.db busy or gone: the next beat tries again
            pass

    def _listen(self) -> None:
        while self._unanswered:
            command, _ = self._unanswered[0]
            row = self.client.outcome(command)
            if row is None:
                return
            self._unanswered.popleft()
            if row.status == "refused" and row.error and "restarted" in row.error:
                self.refusal = row.error

    def host_silent_for(self) -> float:
        """Seconds since the oldest beat the host has not answered (0: it answers)."""
        try:
            return self.wall() - self._unanswered[0][1]
        except IndexError:
            return 0.0

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.every + 1)


def results_of(row: CommandRow) -> list[StatementResult]:
    """A done `sql` command's results; `CommandFailed` for a refused or failed one."""
    if row.status != "done":
        raise _failure(row)
    return wire.results_from_json(row.result or "[]")


def event_of(row: CommandRow) -> ev.Event | None:
    """The event a done action recorded; `CommandFailed` for a refused or failed one."""
    if row.status != "done":
        raise _failure(row)
    data = json.loads(row.result or "{}")
    record = data.get("event") if isinstance(data, dict) else None
    return ev.from_record(record) if record is not None else None


def _failure(row: CommandRow) -> CommandFailed:
    """Why a refused or failed command did nothing, and the event the host recorded."""
    event = None
    if row.result:
        record = json.loads(row.result).get("event")
        event = ev.from_record(record) if record else None
    return CommandFailed(row.error or f"the command {row.status}", event)
