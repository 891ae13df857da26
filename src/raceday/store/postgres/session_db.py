"""The meeting point of a team session across machines: a schema of its own in PostgreSQL.

The same tables as session.db (seats, commands, events, published state), in a schema
`rd_team_<id>` that only the DSN's login owns: no exercise role (the players' SQL runs as
those) has USAGE on it. A seat writes a command and NOTIFYs the host's channel in the same
transaction; the host publishes a step and NOTIFYs the seats' channel. Each connection
LISTENs in a thread of its own, so a waiting host or seat is woken by the server the moment
a transaction commits, and reads nothing while nothing happens.

A session's address is its DSN with `session=ID` in the query:
`postgresql://user@host:5432/db?session=ab12cd34`. It needs no shared folder.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from raceday.errors import first_line
from raceday.store.postgres import driver
from raceday.store.postgres.meeting_logins import (
    Login,
    login_address,
    login_sql,
    new_host_channel,
    new_login,
    pub_schema,
    public_sql,
)
from raceday.store.team_db import (
    MAX_COMMAND_KIND,
    MAX_COMMAND_MAC,
    MAX_COMMAND_PAYLOAD,
    MAX_SEAT_NAME,
    CommandRow,
    EventRow,
    Publication,
    SeatRow,
    SessionDbError,
    StateRow,
)

_log = logging.getLogger(__name__)
SESSION_PARAM = "session"
_ID = re.compile(r"^[a-z0-9]{4,32}$")
LISTEN_SLICE_S = 0.25
"""How long the listening thread waits on the socket before it looks at its stop flag."""
POLL_S = 0.05
"""A waiter's nap once the listening connection has broken (it polls from then on)."""

_SCHEMA = """
CREATE TABLE {s}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE {s}.seats (
    pos SERIAL,
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    player TEXT,
    joined_at DOUBLE PRECISION,
    last_nonce BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE {s}.commands (
    id BIGSERIAL PRIMARY KEY,
    seat TEXT NOT NULL CHECK (length(seat) <= {max_seat}),
    nonce BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (length(kind) <= {max_kind}),
    payload TEXT NOT NULL CHECK (length(payload) <= {max_payload}),
    mac TEXT NOT NULL CHECK (length(mac) <= {max_mac}),
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'done', 'refused', 'failed')),
    submitted_at DOUBLE PRECISION NOT NULL,
    done_at DOUBLE PRECISION,
    result TEXT,
    error TEXT
);
CREATE INDEX commands_queued ON {s}.commands (id) WHERE status = 'queued';
CREATE INDEX commands_seat ON {s}.commands (seat, id);
CREATE TABLE {s}.events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    private BOOLEAN NOT NULL DEFAULT false,
    line TEXT NOT NULL
);
CREATE TABLE {s}.state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    tables_version INTEGER NOT NULL,
    tables TEXT NOT NULL,
    clock TEXT NOT NULL
);
"""
_COMMAND_COLUMNS = ("id, seat, nonce, kind, payload, mac, status, submitted_at, done_at, "
                    "result, error")


def split_address(address: str) -> tuple[str, str | None]:
    """`postgresql://…?session=ID` -> (the DSN without it, ID or None)."""
    parts = urlsplit(address)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ids = [v for k, v in query if k == SESSION_PARAM]
    dsn = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query
                                                     if k != SESSION_PARAM])))
    if ids and not _ID.match(ids[-1]):
        raise SessionDbError(f"{SESSION_PARAM}={ids[-1]!r}: not a raceday session id "
                             "(the host printed the address to join)")
    return dsn, (ids[-1] if ids else None)


def session_address(dsn: str, session: str) -> str:
    parts = urlsplit(dsn)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k != SESSION_PARAM]
    return urlunsplit(parts._replace(query=urlencode([*query, (SESSION_PARAM, session)])))


def schema_of(session: str) -> str:
    return f"rd_team_{session}"


class _Listener:
    """A connection that LISTENs on one channel in a thread of its own and counts what it
    hears; `wait` blocks until the count moves."""

    def __init__(self, dsn: str, channel: str) -> None:
        self.conn = driver.connect(dsn)
        self.conn.execute(f'LISTEN "{channel}"')
        self.heard = 0
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"raceday-listen-{channel}",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for _ in self.conn.notifies(timeout=LISTEN_SLICE_S):
                    self.poke()
        except driver.Error as exc:  # the connection broke: `alive` says so, waiters poll
            if not self._stop.is_set():
                _log.warning("raceday: the LISTEN connection broke (%s); polling instead", exc)
        self.poke()  # whoever waits looks again

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def poke(self) -> None:
        with self._cond:
            self.heard += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.heard != seen, timeout)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=LISTEN_SLICE_S + 1)
        self.conn.close()


class PgSessionDb:
    """One session's meeting tables in PostgreSQL; safe to share between threads."""

    woken = True

    def __init__(self, dsn: str, session: str, *, host: bool) -> None:
        self.dsn = dsn
        self.session = session
        self.schema = schema_of(session)
        self.host_channel = ""
        """Where the host is woken (a trigger on its commands NOTIFYs it); its name is in a
        table no seat can read."""
        self.seat_channel = ""
        """Where clients on the host's own login are woken (its console, `watch DIR`); a
        seat login has its own. Both names are secrets: a player's `pg_notify` wakes no one."""
        self._reads = self.schema
        """The schema this connection reads and submits in: the tables, for the host's
        login; the players' views (meeting_logins.py), for a seat's."""
        self.logins: list[Login] = []
        self.path = Path(f"{self.schema}.postgres")  # for messages: there is no file
        try:
            self._conn = driver.connect(dsn)
        except driver.Error as exc:
            raise SessionDbError(f"PostgreSQL at {_safe(dsn)}: {first_line(exc)}") from None
        self._lock = threading.Lock()
        self._listener: _Listener | None = None
        self._host = host

    @property
    def where(self) -> str:
        return session_address(self.dsn, self.session)

    def _listen(self) -> None:
        try:
            self._listener = _Listener(self.dsn, self.host_channel if self._host
                                       else self.seat_channel)
        except driver.Error as exc:
            self.close()
            raise SessionDbError(f"PostgreSQL at {_safe(self.dsn)}: {first_line(exc)}") from None

    @classmethod
    def create(cls, dsn: str) -> PgSessionDb:
        """The host's: a new session schema with a fresh id on the DSN's server."""
        dsn, given = split_address(dsn)
        db = cls(dsn, given or secrets.token_hex(4), host=True)
        with db._tx() as conn:
            if conn.execute("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s",
                            (db.schema,)).fetchone():
                db.close()
                raise SessionDbError(f"session {db.session} already exists on that server: "
                                     "this session has a host")
            conn.execute(f'CREATE SCHEMA "{db.schema}"')
            conn.execute(f'REVOKE ALL ON SCHEMA "{db.schema}" FROM PUBLIC')
            conn.execute(_SCHEMA.format(
                s=f'"{db.schema}"', max_seat=MAX_SEAT_NAME, max_kind=MAX_COMMAND_KIND,
                max_payload=MAX_COMMAND_PAYLOAD, max_mac=MAX_COMMAND_MAC))
            conn.execute(public_sql(db.schema))
            db.host_channel, db.seat_channel = new_host_channel(), new_host_channel()
            conn.execute(f"INSERT INTO {db._t('secrets')} VALUES ('host_channel', %s), "
                         "('seat_channel', %s)", (db.host_channel, db.seat_channel))
        db._listen()
        return db

    def issue_login(self, index: int | None, seat: str | None) -> str:
        """A login of its own for seat number `index` (None: the projector); returns the
        address it joins with (the DSN's server, the login's name and password)."""
        login = new_login(self.session, index, seat)
        with self._tx() as conn:
            for sql, params in login_sql(self.schema, login):
                conn.execute(sql, params)
        self.logins.append(login)
        return session_address(login_address(self.dsn, login), self.session)

    @classmethod
    def open(cls, address: str, *, host: bool = False) -> PgSessionDb:
        """A seat's: the session named in the address must be on the server already."""
        dsn, session = split_address(address)
        if session is None:
            raise SessionDbError(f"{_safe(address)}: name the session: add "
                                 f"?{SESSION_PARAM}=ID (the host printed the address to join)")
        db = cls(dsn, session, host=host)
        try:
            db._find_my_schema()
            db.meta()
        except SessionDbError:
            db.close()
            raise SessionDbError(f"{_safe(address)}: no team session {session} on that server "
                                 "(is the host running `raceday host --db`?)") from None
        db._listen()
        return db

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock:
            try:
                with self._conn.transaction():
                    yield self._conn
            except driver.Error as exc:
                raise SessionDbError(f"session {self.session}: {first_line(exc)}") from exc

    def _notify(self, conn: Any, channel: str) -> None:
        conn.execute("SELECT pg_notify(%s, '')", (channel,))

    def _find_my_schema(self) -> None:
        """The host's login reads the tables; a seat's login, the players' views, and
        listens on the channel its login was given."""
        with self._tx() as conn:
            owner = conn.execute("SELECT pg_catalog.has_schema_privilege(%s, 'USAGE')",
                                 (self.schema,)).fetchone()
            if owner is None:
                return
            if owner[0]:
                channels = dict(conn.execute(f"SELECT key, value FROM {self._t('secrets')}"))
                self.host_channel = str(channels.get("host_channel", ""))
                self.seat_channel = str(channels.get("seat_channel", self.seat_channel))
                return
            self._reads = pub_schema(self.schema)
            mine = conn.execute(f"SELECT channel FROM {self._t('me')}").fetchone()
            if mine is not None:
                self.seat_channel = str(mine[0])
    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with self._lock:
            self._conn.close()

    def drop(self) -> None:
        """Remove the session from the server: its seats' logins (their connections ended
        first, whatever they made dropped: a large object a seat created with its own login
        would otherwise keep its role), its schemas; then close. Each login is dropped on
        its own: one that cannot be leaves the others and the schemas gone, and is named."""
        try:
            with self._tx() as conn:
                conn.execute("SET LOCAL lock_timeout = '5s'")
                logins = [str(r[0]) for r in conn.execute(
                    f'SELECT login FROM "{self.schema}".logins')] if conn.execute(
                    "SELECT to_regclass(%s)", (f'"{self.schema}".logins',)).fetchone()[0] else []
                conn.execute("SELECT pg_terminate_backend(pid, 5000) "
                             "FROM pg_catalog.pg_stat_activity WHERE usename = ANY(%s)", (logins,))
                conn.execute(f'DROP SCHEMA IF EXISTS "{pub_schema(self.schema)}" CASCADE')
                conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
            left = [login for login in logins if not self._drop_login(login)]
        finally:
            self.close()
        if left:
            raise SessionDbError(f"session {self.session}: could not drop the logins "
                                 f"{', '.join(left)} (they own objects in another database)")

    def _drop_login(self, login: str) -> bool:
        """DROP OWNED (its large objects, its grants) then DROP ROLE; False if it stays."""
        try:
            with self._tx() as conn:
                if conn.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s",
                                (login,)).fetchone() is not None:
                    conn.execute(f'DROP OWNED BY "{login}" CASCADE')
                    conn.execute(f'DROP ROLE "{login}"')
        except SessionDbError:
            return False
        return True

    # -- waking ----------------------------------------------------------------------------

    def data_version(self) -> int:
        """Moves each time the other side has NOTIFYed (no query: the listener counts). If
        the listening connection broke, it moves at every call: the caller reads again each
        time, polling, rather than missing news for good."""
        listener = self._listener
        if listener is None:
            return 0
        if not listener.alive:
            listener.poke()
        return listener.heard

    def wait(self, since: int, timeout: float) -> bool:
        """Block until `data_version()` is no longer `since` (the other side NOTIFYed, or
        `wake`), at most `timeout` seconds (a nap of POLL_S if the listener broke)."""
        listener = self._listener
        if listener is None:
            return False
        if not listener.alive:
            time.sleep(min(timeout, POLL_S))
            return True
        return listener.wait(since, timeout)

    def wake(self) -> None:
        if self._listener is not None:
            self._listener.poke()

    # -- both sides ------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        with self._tx() as conn:
            return {str(k): str(v) for k, v in
                    conn.execute(f"SELECT key, value FROM {self._t('meta')}")}

    def seats(self) -> list[SeatRow]:
        with self._tx() as conn:
            rows = conn.execute("SELECT name, role, token_hash, player, joined_at, last_nonce "
                                f"FROM {self._t('seats')} ORDER BY pos").fetchall()
        return [SeatRow(*row) for row in rows]

    def events_after(self, seq: int, *, private: bool = False, limit: int = 10_000,
                     ) -> list[EventRow]:
        sql = f"SELECT seq, kind, private, line FROM {self._t('events')} WHERE seq > %s"
        if not private:
            sql += " AND NOT private"
        with self._tx() as conn:
            rows = conn.execute(sql + " ORDER BY seq LIMIT %s", (seq, limit)).fetchall()
        return [EventRow(s, k, bool(p), line) for s, k, p, line in rows]

    def state(self) -> StateRow | None:
        with self._tx() as conn:
            row = conn.execute("SELECT version, snapshot, tables_version, tables, clock "
                               f"FROM {self._t('state')} WHERE id = 1").fetchone()
        return StateRow(*row) if row else None

    def clock(self) -> str | None:
        with self._tx() as conn:
            row = conn.execute(f"SELECT clock FROM {self._t('state')} WHERE id = 1").fetchone()
        return str(row[0]) if row else None

    def command(self, command_id: int) -> CommandRow | None:
        with self._tx() as conn:
            row = conn.execute(f"SELECT {_COMMAND_COLUMNS} FROM {self._t('commands')} "
                               "WHERE id = %s", (command_id,)).fetchone()
        return CommandRow(*row) if row else None

    def commands_of(self, seat: str, kind: str | None = None) -> list[CommandRow]:
        sql = f"SELECT {_COMMAND_COLUMNS} FROM {self._t('commands')} WHERE seat = %s"
        params: tuple[object, ...] = (seat,)
        if kind is not None:
            sql += " AND kind = %s"
            params += (kind,)
        with self._tx() as conn:
            rows = conn.execute(sql + " ORDER BY id", params).fetchall()
        return [CommandRow(*row) for row in rows]

    # -- a seat ----------------------------------------------------------------------------

    def submit(self, seat: str, nonce: int, kind: str, payload: str, mac: str,
               submitted_at: float) -> int:
        with self._tx() as conn:
            row = conn.execute(
                f"INSERT INTO {self._t('commands')} (seat, nonce, kind, payload, mac, "
                "submitted_at) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (seat, nonce, kind, payload, mac, submitted_at)).fetchone()
        return int(row[0])

    def insert_raw(self, row: CommandRow) -> int:
        """A command row as it is (tests of forged and replayed commands use it)."""
        return self.submit(row.seat, row.nonce, row.kind, row.payload, row.mac,
                           row.submitted_at)

    # -- the host --------------------------------------------------------------------------

    def add_seat(self, name: str, role: str, token_hash: str) -> None:
        with self._tx() as conn:
            conn.execute(f"INSERT INTO {self._t('seats')} (name, role, token_hash) "
                         "VALUES (%s, %s, %s)", (name, role, token_hash))

    def reseat(self, name: str, role: str, token_hash: str) -> None:
        with self._tx() as conn:
            conn.execute(f"INSERT INTO {self._t('seats')} (name, role, token_hash) "
                         "VALUES (%s, %s, %s) ON CONFLICT (name) DO UPDATE SET "
                         "role = excluded.role, token_hash = excluded.token_hash, "
                         "player = NULL, joined_at = NULL", (name, role, token_hash))

    def queued(self, limit: int = 100) -> list[CommandRow]:
        with self._tx() as conn:
            rows = conn.execute(f"SELECT {_COMMAND_COLUMNS} FROM {self._t('commands')} "
                                "WHERE status = 'queued' ORDER BY id LIMIT %s",
                                (limit,)).fetchall()
        return [CommandRow(*row) for row in rows]

    def last_seq(self) -> int:
        with self._tx() as conn:
            row = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {self._t('events')}"
                               ).fetchone()
        return int(row[0])

    def publish(self, step: Publication) -> None:
        """One step in one transaction, then one NOTIFY that wakes every seat."""
        with self._tx() as conn, conn.cursor() as cur:
            if step.meta:
                cur.executemany(f"INSERT INTO {self._t('meta')} (key, value) VALUES (%s, %s) "
                                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                list(step.meta.items()))
            if step.events:
                cur.executemany(f"INSERT INTO {self._t('events')} (seq, kind, private, line) "
                                "VALUES (%s, %s, %s, %s)",
                                [(e.seq, e.kind, e.private, e.line) for e in step.events])
            if step.outcomes:
                cur.executemany(f"UPDATE {self._t('commands')} SET status = %s, done_at = %s, "
                                "result = %s, error = %s WHERE id = %s",
                                [(o.status, o.done_at, o.result, o.error, o.id)
                                 for o in step.outcomes])
            if step.seats:
                cur.executemany(f"UPDATE {self._t('seats')} SET player = %s, joined_at = %s, "
                                "last_nonce = %s WHERE name = %s",
                                [(player, joined, nonce, seat)
                                 for seat, player, joined, nonce in step.seats])
            if step.snapshot is not None or step.tables is not None or step.clock is not None:
                cur.execute(
                    f"INSERT INTO {self._t('state')} AS s (id, version, snapshot, "
                    "tables_version, tables, clock) VALUES (1, %(sv)s, coalesce(%(snap)s, "
                    "'{}'), %(tv)s, coalesce(%(tables)s, '[]'), coalesce(%(clock)s, '{}')) "
                    "ON CONFLICT (id) DO UPDATE SET "
                    "version = s.version + %(sv)s, snapshot = coalesce(%(snap)s, s.snapshot), "
                    "tables_version = s.tables_version + %(tv)s, "
                    "tables = coalesce(%(tables)s, s.tables), clock = coalesce(%(clock)s, s.clock)",
                    {"sv": int(step.snapshot is not None), "snap": step.snapshot,
                     "tv": int(step.tables is not None), "tables": step.tables,
                     "clock": step.clock})
            if _news(step):
                self._notify(cur, self.seat_channel)
                cur.execute(f"SELECT pg_notify(channel, '') FROM {self._t('logins')}")

    def _t(self, table: str) -> str:
        return f'"{self._reads}".{table}'


def _news(step: Publication) -> bool:
    """Whether a step is worth waking every seat for: not when it only answers heartbeats
    (20 seats beating every 2 s would wake every seat 10 times a second for nothing)."""
    return bool(step.events or step.meta or step.snapshot is not None or step.tables is not None
                or step.clock is not None
                or any(o.result is not None or o.error is not None for o in step.outcomes))



def _safe(dsn: str) -> str:
    """A DSN as messages show it: without its password."""
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
