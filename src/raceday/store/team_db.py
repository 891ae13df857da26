"""Where a team session's host and seats meet, as both meeting places give it: the rows
(seats, commands, events, published state), their limits and the `TeamDb` protocol.

`session_db.py` (session.db, SQLite, one machine) and `postgres/session_db.py` (a schema of
its own, across machines) both implement it; neither imports the other, and the team
package sees only this module and `open_team_db`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from raceday.errors import RacedayError

SESSION_DB = "session.db"
SESSION_POSTGRES = "session.postgres"
"""In a PostgreSQL-hosted session's folder, instead of session.db: the address to join."""

MAX_SEAT_NAME = 64
"""The longest seat name a host gives out (and a command may carry)."""
MAX_COMMAND_KIND = 32
MAX_COMMAND_MAC = 128
MAX_COMMAND_PAYLOAD = 1_200_000
"""A submission's longest SQL (1,000,000 characters) with the JSON around it."""
MAX_QUEUED_PER_SEAT = 100
"""Commands one seat may have waiting for the host: a client waits for each answer."""

CommandStatus = Literal["queued", "done", "refused", "failed"]
"""A command's state (the commands table's CHECK says the same)."""


class SessionDbError(RacedayError):
    """session.db is missing, not a raceday session store, or could not be written."""


@dataclass(frozen=True)
class SeatRow:
    name: str
    role: str
    token_hash: str
    player: str | None
    joined_at: float | None
    last_nonce: int


@dataclass(frozen=True)
class CommandRow:
    id: int
    seat: str
    nonce: int
    kind: str
    payload: str
    mac: str
    status: CommandStatus
    submitted_at: float
    done_at: float | None = None
    result: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class EventRow:
    seq: int
    kind: str
    private: bool
    line: str


@dataclass(frozen=True)
class Outcome:
    """What the host decided for one command."""

    id: int
    status: CommandStatus
    done_at: float
    result: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class StateRow:
    version: int
    snapshot: str
    tables_version: int
    tables: str
    clock: str


@dataclass(frozen=True)
class Publication:
    """One step of the host, written in one transaction so a client sees it whole."""

    events: Sequence[EventRow] = ()
    outcomes: Sequence[Outcome] = ()
    snapshot: str | None = None
    tables: str | None = None
    clock: str | None = None
    seats: Sequence[tuple[str, str | None, float | None, int]] = ()
    """(seat, player, joined_at, last_nonce) for the seats this step changed."""
    meta: Mapping[str, str] | None = None


class TeamDb(Protocol):
    """Where a team session's host and seats meet: session.db on one machine (`SessionDb`),
    or a schema of its own in PostgreSQL across machines (`store.postgres.session_db`)."""

    woken: bool
    """True when `wait(since, timeout)` ends on the writer's own signal (LISTEN/NOTIFY) as
    soon as `data_version()` moves on, so a waiter may wait long; False when it only naps
    (SQLite: the waiter looks again after a short sleep)."""

    @property
    def where(self) -> str:
        """The address a seat joins: a folder's path, or a PostgreSQL session address."""
        ...

    def close(self) -> None: ...
    def data_version(self) -> int: ...
    def wait(self, since: int, timeout: float) -> bool: ...
    def wake(self) -> None: ...
    def meta(self) -> dict[str, str]: ...
    def seats(self) -> list[SeatRow]: ...
    def events_after(self, seq: int, *, private: bool = False, limit: int = 10_000,
                     ) -> list[EventRow]: ...
    def state(self) -> StateRow | None: ...
    def clock(self) -> str | None: ...
    def command(self, command_id: int) -> CommandRow | None: ...
    def commands_of(self, seat: str, kind: str | None = None) -> list[CommandRow]: ...
    def submit(self, seat: str, nonce: int, kind: str, payload: str, mac: str,
               submitted_at: float) -> int: ...
    def insert_raw(self, row: CommandRow) -> int: ...
    def add_seat(self, name: str, role: str, token_hash: str) -> None: ...
    def reseat(self, name: str, role: str, token_hash: str) -> None: ...
    def queued(self, limit: int = 100) -> list[CommandRow]: ...
    def last_seq(self) -> int: ...
    def publish(self, step: Publication) -> None: ...


def is_team_address(where: str | Path) -> bool:
    """Whether a session's address names a PostgreSQL meeting (else it is a folder)."""
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))
