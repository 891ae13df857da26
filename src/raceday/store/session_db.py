"""The meeting point of a team session on one machine: `session.db` beside `world.db`.

The host writes the seats, the events as it records them (mirroring `events.jsonl`) and the
state every client shows (clock, world, tasks); clients write only commands, and read the
rest. SQLite in WAL mode lets readers read while the host writes; a client notices a change
with `PRAGMA data_version`, which moves only when another connection commits. Values here
are plain text and numbers: what they mean (events, snapshots, results) is decided above.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.store.team_db import (
    MAX_COMMAND_KIND,
    MAX_COMMAND_MAC,
    MAX_COMMAND_PAYLOAD,
    MAX_QUEUED_PER_SEAT,
    MAX_SEAT_NAME,
    SESSION_DB,
    SESSION_POSTGRES,
    CommandRow,
    EventRow,
    Publication,
    SeatRow,
    SessionDbError,
    StateRow,
    TeamDb,
    is_team_address,
)

if TYPE_CHECKING:
    from raceday.store.postgres.session_db import PgSessionDb

BUSY_TIMEOUT_MS = 5000

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    player TEXT,
    joined_at REAL,
    last_nonce INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS commands (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    seat TEXT NOT NULL CHECK (length(seat) <= {MAX_SEAT_NAME}),
    nonce INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (length(kind) <= {MAX_COMMAND_KIND}),
    payload TEXT NOT NULL CHECK (length(payload) <= {MAX_COMMAND_PAYLOAD}),
    mac TEXT NOT NULL CHECK (length(mac) <= {MAX_COMMAND_MAC}),
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'done', 'refused', 'failed')),
    submitted_at REAL NOT NULL,
    done_at REAL,
    result TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS commands_queued ON commands (id) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS commands_queued_seat ON commands (seat) WHERE status = 'queued';
CREATE TRIGGER IF NOT EXISTS commands_from_seats BEFORE INSERT ON commands
BEGIN
    SELECT RAISE(ABORT, 'no such seat in this session')
        WHERE NEW.seat NOT IN (SELECT name FROM seats);
    SELECT RAISE(ABORT, 'too many commands of this seat are waiting for the host')
        WHERE (SELECT count(*) FROM commands WHERE seat = NEW.seat AND status = 'queued')
              >= {MAX_QUEUED_PER_SEAT};
END;
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    private INTEGER NOT NULL DEFAULT 0,
    line TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    tables_version INTEGER NOT NULL,
    tables TEXT NOT NULL,
    clock TEXT NOT NULL
);
"""


def open_team_db(where: str | Path) -> TeamDb:
    """A seat's (or a resuming host's) way in: a folder (or its session.db) on this machine,
    or a `postgresql://…?session=ID` address (psycopg is imported only then). The host's
    folder of a PostgreSQL-hosted session holds its address in `session.postgres`."""
    path = Path(where)
    if not is_team_address(where) and (path / SESSION_POSTGRES).is_file():
        where = (path / SESSION_POSTGRES).read_text(encoding="utf-8").strip()
    if is_team_address(where):
        return pg_session_db().open(str(where))
    if path.is_dir() or not path.suffix:
        path = path / SESSION_DB
    return SessionDb.open(path)


def pg_session_db() -> type[PgSessionDb]:
    """The PostgreSQL meeting's class; a one-line error when psycopg is not installed."""
    try:
        from raceday.store.postgres.session_db import PgSessionDb
    except ImportError as exc:
        raise SessionDbError("a team session on PostgreSQL needs psycopg: "
                             "pip install 'raceday[postgres]'") from exc
    return PgSessionDb


class SessionDb:
    """One connection to session.db, safe to share between threads (one call at a time)."""

    woken = False

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return str(self.path.parent)

    def wait(self, since: int, timeout: float) -> bool:
        """A nap (SQLite has no signal to wait on): the caller looks again after it."""
        time.sleep(timeout)
        return True

    def wake(self) -> None:
        """Nothing to do: a nap ends by itself."""

    @classmethod
    def create(cls, path: Path) -> SessionDb:
        """The host's: a new store (refused if one is there: a session has one host)."""
        if path.exists():
            raise SessionDbError(f"{path} already exists: this session has a host")
        db = cls(path, _connect(path))
        with db._lock, db._conn:
            db._conn.execute("PRAGMA journal_mode=WAL")
            db._conn.executescript(_SCHEMA)
        return db

    @classmethod
    def open(cls, path: Path) -> SessionDb:
        """A client's (or a resuming host's): the store must be there already."""
        if path.is_dir():
            path = path / SESSION_DB
        if not path.is_file():
            raise SessionDbError(f"{path}: no team session here (no {SESSION_DB}; is the host "
                                 "running `raceday host`?)")
        db = cls(path, _connect(path))
        try:
            db.meta()
        except sqlite3.DatabaseError as exc:
            db.close()
            raise SessionDbError(f"{path}: not a raceday session store ({exc})") from None
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                with self._conn:
                    yield self._conn
            except sqlite3.Error as exc:
                raise SessionDbError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- both sides ------------------------------------------------------------------------

    def data_version(self) -> int:
        """Changes when another connection has committed since the last call."""
        with self._tx() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def meta(self) -> dict[str, str]:
        with self._tx() as conn:
            return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}

    def seats(self) -> list[SeatRow]:
        with self._tx() as conn:
            rows = conn.execute("SELECT name, role, token_hash, player, joined_at, last_nonce "
                                "FROM seats ORDER BY rowid").fetchall()
        return [SeatRow(*row) for row in rows]

    def events_after(self, seq: int, *, private: bool = False, limit: int = 10_000,
                     ) -> list[EventRow]:
        sql = "SELECT seq, kind, private, line FROM events WHERE seq > ?"
        if not private:
            sql += " AND private = 0"
        with self._tx() as conn:
            rows = conn.execute(sql + " ORDER BY seq LIMIT ?", (seq, limit)).fetchall()
        return [EventRow(s, k, bool(p), line) for s, k, p, line in rows]

    def state(self) -> StateRow | None:
        with self._tx() as conn:
            row = conn.execute("SELECT version, snapshot, tables_version, tables, clock "
                               "FROM state WHERE id = 1").fetchone()
        return StateRow(*row) if row else None

    def clock(self) -> str | None:
        with self._tx() as conn:
            row = conn.execute("SELECT clock FROM state WHERE id = 1").fetchone()
        return str(row[0]) if row else None

    def command(self, command_id: int) -> CommandRow | None:
        with self._tx() as conn:
            row = conn.execute(f"SELECT {_COMMAND_COLUMNS} FROM commands WHERE id = ?",
                               (command_id,)).fetchone()
        return CommandRow(*row) if row else None

    def commands_of(self, seat: str, kind: str | None = None) -> list[CommandRow]:
        sql = f"SELECT {_COMMAND_COLUMNS} FROM commands WHERE seat = ?"
        params: tuple[object, ...] = (seat,)
        if kind is not None:
            sql += " AND kind = ?"
            params += (kind,)
        with self._tx() as conn:
            rows = conn.execute(sql + " ORDER BY id", params).fetchall()
        return [CommandRow(*row) for row in rows]

    # -- a client ------------------------------------------------------------------------

    def submit(self, seat: str, nonce: int, kind: str, payload: str, mac: str,
               submitted_at: float) -> int:
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT INTO commands (seat, nonce, kind, payload, mac, submitted_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (seat, nonce, kind, payload, mac, submitted_at))
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def insert_raw(self, row: CommandRow) -> int:
        """A command row as it is (tests of forged and replayed commands use it)."""
        return self.submit(row.seat, row.nonce, row.kind, row.payload, row.mac,
                           row.submitted_at)

    # -- the host ------------------------------------------------------------------------

    def add_seat(self, name: str, role: str, token_hash: str) -> None:
        with self._tx() as conn:
            conn.execute("INSERT INTO seats (name, role, token_hash) VALUES (?, ?, ?)",
                         (name, role, token_hash))

    def reseat(self, name: str, role: str, token_hash: str) -> None:
        """A resumed host's seat with a new token (the old ones were never stored): whoever
        held it joins again."""
        with self._tx() as conn:
            conn.execute("INSERT INTO seats (name, role, token_hash) VALUES (?, ?, ?) "
                         "ON CONFLICT (name) DO UPDATE SET role = excluded.role, "
                         "token_hash = excluded.token_hash, player = NULL, joined_at = NULL",
                         (name, role, token_hash))

    def queued(self, limit: int = 100) -> list[CommandRow]:
        with self._tx() as conn:
            rows = conn.execute(f"SELECT {_COMMAND_COLUMNS} FROM commands "
                                "WHERE status = 'queued' ORDER BY id LIMIT ?",
                                (limit,)).fetchall()
        return [CommandRow(*row) for row in rows]

    def last_seq(self) -> int:
        with self._tx() as conn:
            return int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])

    def publish(self, step: Publication) -> None:
        with self._tx() as conn:
            if step.meta:
                conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                 list(step.meta.items()))
            conn.executemany("INSERT INTO events (seq, kind, private, line) VALUES (?, ?, ?, ?)",
                             [(e.seq, e.kind, int(e.private), e.line) for e in step.events])
            conn.executemany(
                "UPDATE commands SET status = ?, done_at = ?, result = ?, error = ? "
                "WHERE id = ?",
                [(o.status, o.done_at, o.result, o.error, o.id) for o in step.outcomes])
            conn.executemany(
                "UPDATE seats SET player = ?, joined_at = ?, last_nonce = ? WHERE name = ?",
                [(player, joined, nonce, seat) for seat, player, joined, nonce in step.seats])
            if step.snapshot is not None or step.tables is not None or step.clock is not None:
                old = conn.execute("SELECT version, snapshot, tables_version, tables, clock "
                                   "FROM state WHERE id = 1").fetchone()
                version, snapshot, tables_version, tables, clock = old or (0, "{}", 0, "[]", "{}")
                if step.snapshot is not None:
                    version, snapshot = version + 1, step.snapshot
                if step.tables is not None:
                    tables_version, tables = tables_version + 1, step.tables
                if step.clock is not None:
                    clock = step.clock
                conn.execute("INSERT OR REPLACE INTO state (id, version, snapshot, "
                             "tables_version, tables, clock) VALUES (1, ?, ?, ?, ?, ?)",
                             (version, snapshot, tables_version, tables, clock))


_COMMAND_COLUMNS = ("id, seat, nonce, kind, payload, mac, status, submitted_at, done_at, "
                    "result, error")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level="DEFERRED",
                           timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn
