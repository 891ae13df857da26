"""The world database, and the one path through which player and automation SQL runs.

Every statement a role runs goes through `WorldStore.execute` (or `probe`), on a connection
of that role's own with the full guard stack of reference/sql-safety.md: foreign keys ON,
trusted_schema OFF, recursive triggers ON, tight `setlimit()` limits, an allow-list
authorizer (authorizer.py), a per-statement deadline in the progress handler and a row cap.
Trusted exercise SQL (the world's schema and seed, invariants, milestones) runs on a separate
app connection with no authorizer, so no flag can be flipped to let a player in.

Role connections keep a statement cache (automation runs the same statements all night; a
replay's nights were 40% SQLite preparing them again). SQLite asks the authorizer only when
it prepares a statement, so a cached one is reused unchecked; that is safe because the
authorizer's answer for a text on a connection changes only with its names or its
`internal` flag, and each of those expires every prepared statement of the connection
(`_expire`: `set_authorizer` again, and SQLite prepares each again, asking the authorizer,
before its next run). What the authorizer recorded when it prepared a statement (the tables
it writes and reads) is kept per text (`verdicts`) for the runs that reuse it.

The store is called from worker threads: every call takes one lock, except `interrupt()`,
which only sets a flag the progress handler reads.

The names the authorizers rely on (WorldNames) are re-read whenever the schema may have
changed. Only this store's connections write the world while it is open (nothing else in
raceday opens a live world.db), and in SQLite only DDL changes the schema version (triggers
cannot run DDL), so it may have changed only after a role statement the authorizer saw as
DDL (a successful one re-reads the names at once) or a trusted statement that is neither a
query nor a row write (CREATE, DROP, ALTER, PRAGMA, BEGIN/ROLLBACK, ...). Only then is
`PRAGMA schema_version` compared, before the next statement, instead of before every one.
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from raceday.errors import ExerciseError, MachineError, RacedayError
from raceday.store.authorizer import RESERVED_PREFIX, Authorizer, StatementContext, WorldNames
from raceday.store.protocol import RoleRights, StoreKind
from raceday.store.reads import ReadCollector
from raceday.store.results import ColumnInfo, ForeignKeyInfo, Row, StatementResult, TableInfo
from raceday.store.split import called_functions, first_keyword, split_statements
from raceday.store.world import (
    MAX_WORLD_BYTES,
    WORLD_TIME_LIMIT,
    WorldError,
    build_world,
    limit_size,
)

if TYPE_CHECKING:
    from sqlite_utils.db import Table, View

# Where raceday remembers which tables and views the world had when first built: only
# those are guarded by role rights (see WorldNames). Roles can neither read nor touch it.
WORLD_TABLE = f"{RESERVED_PREFIX}_world"
# Which role made each trigger made during play: its body acts for that role (authorizer.py).
TRIGGER_OWNER_TABLE = f"{RESERVED_PREFIX}_trigger_owner"

# Limits for role connections (sql-safety.md §6); the app connection keeps SQLite's defaults.
ROLE_LIMITS: dict[int, int] = {
    sqlite3.SQLITE_LIMIT_LENGTH: 1_000_000,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 100_000,
    sqlite3.SQLITE_LIMIT_COLUMN: 200,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 100,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 50,
    sqlite3.SQLITE_LIMIT_VDBE_OP: 250_000,
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 32,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 1_000,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 100,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 10,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}
# A submission longer than this is refused before it is even split.
MAX_SUBMISSION_CHARS = 1_000_000
# A submission of more statements than this is refused whole, before any of them runs (one
# paste of 100,000 `SELECT 1;` would otherwise be 100,000 results and events).
MAX_STATEMENTS = 200
# The world may not grow past MAX_WORLD_BYTES (prepare.py; SQLite's max_page_count on every
# connection that writes it): a statement that would pass it fails and changes nothing.
# Error messages are one line; a RAISE text can be as long as any string.
MAX_ERROR_CHARS = 300
# Rows stop being collected once a result holds this much text and blob data.
MAX_RESULT_BYTES = 16_000_000
# How often (in SQLite VM instructions) the progress handler checks the deadline.
PROGRESS_EVERY = 1000
_clock = time.perf_counter  # the progress handler's clock, bound once

# Statements whose cursor.rowcount Python fills in (it looks at the first word only).
_PLAIN_DML = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE"})
# Trusted statements that cannot change the schema version, by first word. (With
# writable_schema on, an UPDATE of sqlite_master changes the schema but not its version:
# `PRAGMA schema_version` never caught that either.)
_NO_DDL = frozenset({"SELECT", "VALUES", "WITH", "EXPLAIN", "INSERT", "UPDATE", "DELETE", "REPLACE"})
_SYNTAX_MARKERS = ("syntax error", "incomplete input", "unrecognized token", "parser stack")


class StoreError(RacedayError):
    """A trusted call (app_query, create, open) failed; `kind` is an error_kind."""

    def __init__(self, message: str, kind: str = "error") -> None:
        super().__init__(message)
        self.kind = kind


class WorldUnavailable(StoreError, MachineError):
    """The world cannot be read or written any more: its file was deleted or moved, the disk
    is full, an I/O error. The session cannot go on; its transcript is whole."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "machine")


LOCK_WAIT_S = 1.0
"""How long a statement waits for SQLite's write lock, as long as PostgreSQL's lock timeout.
The engine runs one statement at a time, so a lock a role holds is only let go by a later
call: the wait is for someone outside the session (a facilitator's sqlite3 shell). While
another role of the session holds a transaction open, the lock is likely its: a statement
then does not wait at all (`_mind_own_locks`)."""
_LOCK_WAIT_MS = int(LOCK_WAIT_S * 1000)  # as SQLite's busy_timeout takes it


@dataclass
class _RoleConnection:
    conn: sqlite3.Connection
    auth: Authorizer
    held: str | None = None
    """How the transaction the role holds open began (`begin`: deferred, immediate,
    exclusive), or None: then each statement is its own transaction."""
    verdicts: dict[str, StatementContext] = field(default_factory=dict)
    """What the authorizer recorded when each statement text in the statement cache was
    last prepared (emptied whenever the cache is expired)."""
    wait_ms: int = _LOCK_WAIT_MS
    """The connection's busy timeout now (`_mind_own_locks`)."""


ROLE_CACHED_STATEMENTS = 128
"""Prepared statements kept per role connection (Python's LRU cache)."""
_MAX_VERDICTS = 512
"""Past this many records the connection's statements are expired and the records dropped
(a player typing many different statements must not grow memory without end)."""


FOREIGN_KEY_FAILED = "FOREIGN KEY constraint failed"


def _foreign_key_named(conn: sqlite3.Connection, written: Sequence[str], *,
                       deleting: bool = False) -> str:
    """SQLite's "FOREIGN KEY constraint failed" names no key: say which it can be, the keys
    from or to the tables the statement wrote (one, or the few it is one of; a DELETE
    cannot fail on a key that cascades or sets null)."""
    names = {t.lower() for t in written if t}
    keys: list[str] = []
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE ?",
            (f"{RESERVED_PREFIX}%",))]
        for table in tables:
            for src, parent, to, on_delete in conn.execute(
                    'SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(?)',
                    (table,)):
                if deleting and str(on_delete).upper() in ("CASCADE", "SET NULL", "SET DEFAULT"):
                    continue
                if table.lower() in names or str(parent).lower() in names:
                    keys.append(f"{table}.{src} -> {parent}" + (f".{to}" if to else ""))
    except sqlite3.Error:
        return FOREIGN_KEY_FAILED
    if not keys:
        return FOREIGN_KEY_FAILED
    if len(keys) == 1:
        return f"{FOREIGN_KEY_FAILED}: {keys[0]}"
    return f"{FOREIGN_KEY_FAILED}: one of {', '.join(keys)}"


def _expire(handle: _RoleConnection) -> None:
    """Make SQLite prepare every cached statement of the role's connection again (asking the
    authorizer) before its next run, and forget what was recorded for them."""
    handle.conn.set_authorizer(handle.auth)  # SQLite expires all prepared statements
    handle.verdicts.clear()


BEGIN_MODES = ("deferred", "immediate", "exclusive")
"""SQLite's BEGIN: when the transaction takes the write lock. There are no isolation levels:
every SQLite transaction is serializable, and there is one writer at a time."""


class WorldStore:
    """A world database and the roles that play in it. Build with `create` or `open`."""

    backend: StoreKind = "sqlite"

    reads_complete = True
    """A result's `reads` and `writes` name every table the statement read and wrote, through
    views, triggers and foreign-key actions (the authorizer sees them all): a session may
    keep a monitor's answer while none of the tables it read was written."""

    def __init__(
        self,
        path: Path,
        roles: Sequence[RoleRights],
        *,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
        max_world_bytes: int = MAX_WORLD_BYTES,
        durable: bool = True,
    ) -> None:
        self.path = Path(path)
        # A replay's world is thrown away when the replay is read: no fsync for it (on a
        # busy disk the syncs of a checkpoint and a close took longer than the night).
        self._durable = durable
        self.row_cap = row_cap
        self.time_limit_s = time_limit_s
        self.max_world_bytes = max_world_bytes
        self._roles = {role.id: role for role in roles}
        self._lock = threading.Lock()
        # Set from any thread by interrupt(): a plain flag, read by the progress handler
        # every PROGRESS_EVERY instructions (millions of times in a large world's night).
        self._cancelled = False
        self._deadline = float("inf")
        self._closed = False
        self._role_conns: dict[str, _RoleConnection] = {}
        self._names = WorldNames()
        self._schema_version = -1
        # True when the schema may have changed since the names were read (module docstring).
        self._schema_unsure = True
        self._file = str(self.path)  # checked at every call: os.path, not pathlib
        if not self.path.exists():
            raise StoreError(f"no world database at {self.path}")
        try:
            self._app = _connect(self.path, mode="rw")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        try:
            _harden(self._app)
            if not durable:
                _unhurried(self._app)
            limit_size(self._app, max_world_bytes)
            self._app.set_progress_handler(self._progress, PROGRESS_EVERY)
            self._ensure_world_table()
            self._refresh_names()
        except sqlite3.Error as exc:
            self._app.close()
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        except BaseException:
            self._app.close()
            raise

    # -- building and opening -----------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: Path,
        world_sql: str,
        roles: Sequence[RoleRights],
        *,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
        max_world_bytes: int = MAX_WORLD_BYTES,
    ) -> WorldStore:
        """Build a fresh world at `path` from the exercise's (trusted) SQL, then open it."""
        path = Path(path)
        if path.exists():
            raise StoreError(f"{path} already exists; a new world needs a fresh file")
        try:
            conn = _connect(path, mode="rwc")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot create {path}: {exc}") from exc
        try:
            _harden(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")  # a failed build is rebuilt, not recovered
            build_world(conn, world_sql, max_bytes=max_world_bytes)
            conn.execute("PRAGMA journal_mode=WAL")  # in case the world SQL changed it
            _record_world(conn)
        except (sqlite3.Error, WorldError) as exc:
            cause = exc.__cause__ if isinstance(exc, WorldError) else exc
            disk_full = cause is not None and _is_full(cause) and _disk_short(conn, path,
                                                                              max_world_bytes)
            conn.close()
            for leftover in (path, _sibling(path, "-wal"), _sibling(path, "-shm")):
                leftover.unlink(missing_ok=True)
            message = exc.message if isinstance(exc, WorldError) else str(exc)
            if disk_full:
                raise MachineError(f"{path}: cannot build the world here (the disk is full)"
                                   ) from exc
            if (getattr(cause, "sqlite_errorcode", 0) or 0) & 0xFF in _MACHINE_CODES:  # not the SQL's
                raise MachineError(f"{path}: cannot build the world here ({_one_line(str(cause))}"
                                   "; a full disk, a file-size limit or a read-only folder?)"
                                   ) from exc
            raise ExerciseError([f"world SQL failed: {_one_line(message)}"]) from exc
        conn.close()
        return cls(
            path, roles, row_cap=row_cap, time_limit_s=time_limit_s, max_world_bytes=max_world_bytes
        )

    @classmethod
    def open(
        cls,
        path: Path,
        roles: Sequence[RoleRights],
        *,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
        max_world_bytes: int = MAX_WORLD_BYTES,
        durable: bool = True,
    ) -> WorldStore:
        """Open an existing world (a saved session, a copy for the replay: `durable=False`,
        nothing is synced to disk, since nothing reads it after a crash)."""
        return cls(path, roles, row_cap=row_cap, time_limit_s=time_limit_s,
                   max_world_bytes=max_world_bytes, durable=durable)

    def __enter__(self) -> WorldStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- running role SQL ---------------------------------------------------------------

    def execute(self, role: str, sql: str, params: Mapping[str, Any] | None = None) -> list[StatementResult]:
        """Run a submission as `role`, statement by statement, stopping at the first error.

        Never raises for anything in `sql` or `params`: every problem is an error result.
        Statements after a failed one are not run and get no result. Raises KeyError for a
        role the store was not given (a bug in the caller, not player input).
        """
        with self._lock:
            self._begin_call()
            handle = self._role(role)
            self._mind_own_locks(handle)
            refusal = _check_text(sql)
            if refusal is not None:
                return [refusal]
            self._sync_names()
            statements = split_statements(sql)
            if len(statements) > MAX_STATEMENTS:
                return [_too_many(sql, len(statements))]
            results: list[StatementResult] = []
            for statement in statements:
                result = self._run(handle, statement, params)
                if handle.held is not None and (result.error is not None
                                                or not handle.conn.in_transaction):
                    handle.held = None  # an error ends a held transaction, as on PostgreSQL
                    if handle.conn.in_transaction:
                        self._internal(handle, "ROLLBACK")
                    if result.error is not None:
                        result = replace(result, error=f"{result.error} (the transaction was "
                                                       "rolled back)")
                results.append(result)
                if result.error is not None:
                    break
            return results

    def begin(self, role: str, isolation: str | None = None) -> StatementResult:
        """Hold a transaction open for `role` (the isolation lab): its statements then run in
        it until `commit` or `rollback`, or an error, which rolls it back. `isolation` is
        SQLite's DEFERRED (the default), IMMEDIATE or EXCLUSIVE."""
        mode = " ".join((isolation or "deferred").lower().split())
        sql = f"BEGIN {mode.upper()}"
        if mode not in BEGIN_MODES:
            return StatementResult(sql=sql, error_kind="error", error=(
                f"SQLite has no isolation level {mode!r}: every SQLite transaction is "
                "serializable, one writer at a time; BEGIN DEFERRED, IMMEDIATE or EXCLUSIVE "
                "says when it takes the write lock"))
        with self._lock:
            self._begin_call()
            handle = self._role(role)
            if handle.held is not None:
                return StatementResult(sql=sql, error_kind="error",
                                       error=f"{role} already holds a transaction ({handle.held})")
            self._mind_own_locks(handle)
            return self._end_or_begin(handle, sql, mode)

    def commit(self, role: str) -> StatementResult:
        """End `role`'s held transaction; if it cannot commit, nothing of it stays."""
        return self._finish(role, "COMMIT")

    def rollback(self, role: str) -> StatementResult:
        return self._finish(role, "ROLLBACK")

    def holds(self, role: str) -> str | None:
        """How the transaction `role` holds open began, or None."""
        with self._lock:
            return self._role(role).held

    def _finish(self, role: str, word: str) -> StatementResult:
        with self._lock:
            self._begin_call()
            handle = self._role(role)
            if handle.held is None:
                return StatementResult(sql=word, error_kind="error", error=f"{role} holds no transaction")
            self._mind_own_locks(handle)
            return self._end_or_begin(handle, word, None)

    def _end_or_begin(self, handle: _RoleConnection, sql: str, mode: str | None) -> StatementResult:
        """BEGIN (mode given) or COMMIT/ROLLBACK on the role's connection; the caller holds
        the lock. A lock SQLite cannot get within the busy timeout is an error result."""
        started = time.perf_counter()
        try:
            self._internal(handle, sql)
        except sqlite3.Error as exc:
            kind, message = self._classify(exc, None, started)
            if handle.conn.in_transaction and mode is None:
                self._internal(handle, "ROLLBACK")  # a COMMIT that failed: nothing stays
            handle.held = None
            return StatementResult(sql=sql, error=message, error_kind=kind,
                                   elapsed_ms=(time.perf_counter() - started) * 1000)
        handle.held = mode
        return StatementResult(sql=sql, elapsed_ms=(time.perf_counter() - started) * 1000)

    def probe(
        self, role: str, statements: Sequence[str], params: Mapping[str, Any] | None = None
    ) -> list[StatementResult]:
        """Run statements as `role` and roll everything back: would they pass, what would change.

        Used by the replay's good-path check and by "what if" questions. Stops at the first
        error like `execute`; the world is unchanged afterwards whatever happened.
        """
        with self._call():
            handle = self._role(role)
            if handle.held is not None:  # its rollback would end the held transaction
                return [StatementResult(sql=statements[0] if statements else "", error_kind="error",
                                        error=f"{role} holds a transaction: commit or roll it "
                                              "back first")]
            self._mind_own_locks(handle)
            self._sync_names()
            results: list[StatementResult] = []
            schema_touched = False
            self._internal(handle, "SAVEPOINT raceday_probe")
            try:
                for sql in statements:
                    refusal = _check_text(sql)
                    if refusal is not None:
                        results.append(refusal)
                        break
                    failed = False
                    statements = split_statements(sql)
                    if len(statements) > MAX_STATEMENTS:
                        results.append(_too_many(sql, len(statements)))
                        break
                    for statement in statements:
                        result = self._run(handle, statement, params)
                        results.append(result)
                        schema_touched = schema_touched or result.schema_changed
                        # An error, or a trigger's RAISE(ROLLBACK) that ended the transaction:
                        # nothing more may run, or it would run in autocommit and stay.
                        if result.error is not None or not handle.conn.in_transaction:
                            failed = True
                            break
                    if failed:
                        break
            finally:
                if handle.conn.in_transaction:
                    self._internal(handle, "ROLLBACK")
                if schema_touched:
                    self._refresh_names()
            return results

    def interrupt(self) -> None:
        """Cancel the running statement (Escape in the TUI). Safe from any thread; no lock."""
        self._cancelled = True

    # -- trusted SQL ----------------------------------------------------------------------

    def app_query(
        self, sql: str, params: Mapping[str, Any] | None = None
    ) -> tuple[tuple[str, ...], list[Row]]:
        """Run one trusted statement (an invariant, a milestone, a check) with no role limits.

        Still under the time limit, so a broken exercise query cannot hang the session.
        Raises StoreError (kind "timeout", "constraint", "syntax" or "error") on failure.
        """
        with self._lock:
            self._begin_call()
            started = time.perf_counter()
            self._deadline = started + self.time_limit_s
            cursor: sqlite3.Cursor | None = None
            try:
                cursor = self._app.execute(sql, dict(params or {}))
                columns = _columns(cursor)
                rows = cursor.fetchall()
            except Exception as exc:
                kind, message = self._classify(exc, None, started)
                if kind == "machine":
                    raise WorldUnavailable(message) from exc
                raise StoreError(message, kind) from exc
            finally:
                self._deadline = float("inf")
                if cursor is not None:
                    cursor.close()
                if _may_change_schema(sql):
                    self._schema_unsure = True  # whether it ran or failed half-way
            return columns, rows

    def reads_of(self, sql: str, params: Mapping[str, Any] | None = None) -> frozenset[str] | None:
        """The tables (lower case) a trusted query reads, when its answer can change only
        with them and the schema; None when it may change otherwise, or it cannot be
        prepared (store.reads). Prepared as `EXPLAIN`: nothing is run."""
        with self._lock:
            self._begin_call()
            collector = ReadCollector()
            self._app.set_authorizer(collector)  # expires the app's prepared statements
            try:
                self._app.execute(f"EXPLAIN {sql}", dict(params or {})).close()
            except Exception:  # the run itself says what is wrong
                return None
            finally:
                self._app.set_authorizer(None)
            return collector.result()

    # -- the schema -----------------------------------------------------------------------

    def tables(self) -> list[TableInfo]:
        """Tables and views of the world with columns, CREATE text and triggers, by name."""
        with self._call():
            return _describe(self._app)

    def backup_to(self, path: Path) -> None:
        """Write a consistent copy of the world to `path` (SQLite backup API, one file; not
        synced to disk: the replay's copy, read at once and deleted)."""
        with self._call():
            target = sqlite3.connect(str(path), isolation_level=None)
            try:
                target.execute("PRAGMA synchronous=OFF")  # a copy for the replay: no fsync
                self._app.backup(target)
                target.execute("PRAGMA journal_mode=DELETE")
            finally:
                target.close()

    def close(self) -> None:
        """Close every connection; the last close folds the WAL back into world.db."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for handle in self._role_conns.values():
                handle.conn.close()
            self._role_conns.clear()
            self._app.close()

    @property
    def role_ids(self) -> tuple[str, ...]:
        return tuple(self._roles)

    # -- internals ------------------------------------------------------------------------

    @contextmanager
    def _call(self) -> Iterator[None]:
        """One public call at a time; a cancel meant for an earlier call does not carry over.

        The statement paths (`execute`, `app_query`) do the same inline, without the cost
        of a generator-based context manager: `with self._lock: self._begin_call()`.
        """
        with self._lock:
            self._begin_call()
            yield

    def _begin_call(self) -> None:
        """The checks at the start of every public call; the caller holds the lock."""
        if self._closed:
            raise StoreError("the world store is closed")
        # deleted under us: SQLite would go on in a file nobody sees (a replay's world is
        # thrown away once played: a stat per statement, 5% of a replay, is not spent on it)
        if self._durable and not os.path.exists(self._file):
            raise WorldUnavailable(f"{self.path}: the world's file is gone (deleted or moved)")
        self._cancelled = False

    def _progress(self) -> int:
        """Progress handler: a truthy return makes SQLite stop with 'interrupted'."""
        if self._cancelled or _clock() >= self._deadline:
            return 1
        return 0

    def _mind_own_locks(self, handle: _RoleConnection) -> None:
        """Wait for SQLite's lock (`LOCK_WAIT_S`) only when no other role of this session
        holds a transaction open. If one does, the lock is most likely its, and it can only
        be let go by a later call of this session, after this one: waiting could only end in
        the same "database is locked", a second later (in the isolation lab, every write of
        the automation while a player held a transaction)."""
        if not self._durable:
            return  # a replay's world never waits (`_unhurried`)
        own = any(other is not handle and other.conn.in_transaction
                  for other in self._role_conns.values())
        wait = 0 if own else _LOCK_WAIT_MS
        if handle.wait_ms != wait:
            self._internal(handle, f"PRAGMA busy_timeout = {wait}")
            handle.wait_ms = wait

    def _role(self, role_id: str) -> _RoleConnection:
        handle = self._role_conns.get(role_id)
        if handle is None:
            role = self._roles.get(role_id)
            if role is None:
                raise KeyError(f"unknown role {role_id!r}")
            handle = self._open_role(role)
            self._role_conns[role_id] = handle
        return handle

    def _open_role(self, role: RoleRights) -> _RoleConnection:
        try:
            conn = _connect(self.path, mode="rw", cached_statements=ROLE_CACHED_STATEMENTS)
        except sqlite3.Error as exc:
            raise WorldUnavailable(f"{self.path}: the world cannot be opened ({exc})") from exc
        try:
            _harden(conn)
            if not self._durable:
                _unhurried(conn)
            limit_size(conn, self.max_world_bytes)
            for limit, value in ROLE_LIMITS.items():
                conn.setlimit(limit, value)
            conn.set_progress_handler(self._progress, PROGRESS_EVERY)
            auth = Authorizer(role, self._names, self._roles)
            # last: from here on, PRAGMAs are the role's too (and the ones above, cached,
            # are expired by it: typed by the role, they are prepared again and refused)
            conn.set_authorizer(auth)
        except BaseException:
            conn.close()
            raise
        return _RoleConnection(conn, auth)

    def _internal(self, handle: _RoleConnection, sql: str, params: Sequence[Any] = ()) -> None:
        """Raceday's own statement on a role connection; prepared with the authorizer
        waived, so it is expired at once (typed by the role, the same text is checked)."""
        handle.auth.internal = True
        try:
            handle.conn.execute(sql, params).close()
        finally:
            handle.auth.internal = False
            _expire(handle)

    def _run(
        self,
        handle: _RoleConnection,
        statement: str,
        params: Mapping[str, Any] | None,
    ) -> StatementResult:
        """Run one statement as the handle's role and describe what happened."""
        conn, auth = handle.conn, handle.auth
        keyword = first_keyword(statement)
        lowered = statement.lower()
        # Only printf/format matter to the authorizer; most statements never mention them.
        called = (
            frozenset(called_functions(statement))
            if "printf" in lowered or "format" in lowered
            else frozenset()
        )
        auth.begin(keyword, called)
        started = time.perf_counter()
        self._deadline = started + self.time_limit_s
        cursor: sqlite3.Cursor | None = None
        # A CREATE may make a trigger: who made it is recorded in the same transaction.
        guarded_ddl = keyword == "CREATE"
        if guarded_ddl:
            self._internal(handle, "SAVEPOINT raceday_ddl")
        try:
            # A dict binds only the names the statement uses; missing ones are an error.
            cursor = conn.execute(statement, dict(params or {}))
            ctx = self._verdict(handle, statement)
            # DDL has no result, though SQLite describes the check ADD COLUMN runs inside.
            columns = () if ctx.ddl else _columns(cursor)
            rows, truncated = self._fetch(cursor) if columns else ([], False)
            cursor_rowcount = cursor.rowcount
            cursor.close()
            cursor = None
            explain = keyword == "EXPLAIN"
            schema_changed = ctx.ddl and not explain
            rowcount: int | None = None
            if ctx.target is not None and not ctx.ddl and not explain:
                if not columns and keyword in _PLAIN_DML and cursor_rowcount >= 0:
                    rowcount = cursor_rowcount
                else:
                    # cursor.rowcount misses `WITH ... UPDATE` and capped RETURNING; changes()
                    # counts the statement's own rows (not its triggers' or cascades').
                    rowcount = _changes(handle)
            if guarded_ddl:
                if ctx.created_trigger is not None and not explain:
                    self._internal(
                        handle,
                        f"INSERT OR REPLACE INTO {TRIGGER_OWNER_TABLE} (name, role) VALUES (?, ?)",
                        (ctx.created_trigger, auth.role.id),
                    )
                guarded_ddl = False
                self._internal(handle, "RELEASE raceday_ddl")
            elapsed = (time.perf_counter() - started) * 1000
            if schema_changed:
                # From this connection: inside a probe the change is not committed yet.
                self._refresh_names(handle)
            return StatementResult(
                sql=statement,
                columns=columns,
                rows=tuple(rows),
                rowcount=rowcount,
                truncated=truncated,
                elapsed_ms=elapsed,
                writes=tuple(ctx.writes) if not (explain or ctx.ddl) else (),
                schema_changed=schema_changed,
                break_glass=tuple(ctx.break_glass) if not explain else (),
                reads=tuple(sorted({str(k[0]).lower() for k, why in ctx.reads.items()
                                    if k[0] and why is None})),
            )
        except Exception as exc:  # never raise for player input: every failure is a result
            failed = self._verdict(handle, statement)  # prepared, then failed: may be reused
            kind, message = self._classify(exc, auth, started)
            if kind == "constraint" and message == FOREIGN_KEY_FAILED:
                message = _foreign_key_named(self._app, failed.writes or [failed.target or ""],
                                             deleting=keyword == "DELETE")
            return StatementResult(
                sql=statement,
                elapsed_ms=(time.perf_counter() - started) * 1000,
                error=message,
                error_kind=kind,
            )
        finally:
            self._deadline = float("inf")
            if guarded_ddl and conn.in_transaction:
                try:
                    self._internal(handle, "ROLLBACK TO raceday_ddl")
                    self._internal(handle, "RELEASE raceday_ddl")
                except sqlite3.Error:
                    pass
            if auth.context.ddl:
                # Even after the names were re-read above: look again before the next
                # statement (DDL is rare; this also covers DDL that failed half-way).
                self._schema_unsure = True
            if cursor is not None:
                try:
                    cursor.close()
                except sqlite3.Error:
                    pass

    @staticmethod
    def _verdict(handle: _RoleConnection, statement: str) -> StatementContext:
        """The authorizer's record of the statement just run: kept when SQLite prepared it,
        the kept one when SQLite took it from the statement cache unchecked."""
        auth = handle.auth
        ctx = auth.context
        if ctx.prepared:
            if not ctx.denials:
                if len(handle.verdicts) >= _MAX_VERDICTS:
                    _expire(handle)
                handle.verdicts[statement] = ctx
            return ctx
        known = handle.verdicts.get(statement)
        if known is not None:
            ctx = auth.context = known.reused()
        return ctx

    def _fetch(self, cursor: sqlite3.Cursor) -> tuple[list[Row], bool]:
        """At most row_cap rows (and MAX_RESULT_BYTES of them); True if more were left.

        Reads one row past the cap to know whether there were more, like fetchmany(cap+1).
        The byte budget matters because one row may hold 200 columns of 1 MB each.
        """
        rows: list[Row] = []
        size = 0
        for row in cursor:
            if len(rows) >= self.row_cap or size > MAX_RESULT_BYTES:
                return rows, True
            rows.append(tuple(row))
            size += sum(len(v) if isinstance(v, str | bytes) else 8 for v in row)
        return rows, False

    def _classify(self, exc: BaseException, auth: Authorizer | None, started: float) -> tuple[str, str]:
        """Turn an exception into (error_kind, one clear line)."""
        message = str(exc)
        if isinstance(exc, sqlite3.Error):
            if auth is not None and auth.context.denials:
                return "refused", "refused: " + _one_line(auth.context.denials[0])
            if isinstance(exc, sqlite3.IntegrityError):
                return "constraint", _one_line(message)
            if message == "interrupted":
                seconds = time.perf_counter() - started
                if self._cancelled:
                    return "timeout", f"statement cancelled after {seconds:.1f} s"
                return (
                    "timeout",
                    f"statement interrupted after {self.time_limit_s:.1f} s (time limit)",
                )
            if _is_full(exc):
                full = self._full_message()
                return ("machine" if full.startswith("the disk is full") else "error"), full
            if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in _MACHINE_CODES:
                return "machine", f"the world cannot be written ({_one_line(message)})"
            if message == "query string is too large":
                limit = ROLE_LIMITS[sqlite3.SQLITE_LIMIT_SQL_LENGTH]
                return "error", f"statement is too long (the limit is {limit:,} bytes)"
            if any(marker in message for marker in _SYNTAX_MARKERS):
                return "syntax", _one_line(message)
            if message == "database is locked":
                return "timeout", ("database is locked (another connection holds SQLite's one "
                                   "write lock, or wrote after this transaction read)")
            if message.startswith("You did not supply a value for binding parameter"):
                name = message.rsplit(" ", 1)[-1].rstrip(".")
                return "error", f"no value was given for parameter {name}"
            if message.startswith("Binding ") and "has no name" in message:
                return "error", "use named parameters such as :plan; ? is not supported here"
            if "not authorized" in message or "may not be modified" in message:
                return "refused", "refused: " + _one_line(message)
            return "error", _one_line(message)
        if isinstance(exc, MemoryError):
            return "error", "out of memory"
        return "error", _one_line(f"{type(exc).__name__}: {message}")

    def _full_message(self) -> str:
        """Why a write failed with SQLITE_FULL: the world's size limit, or the disk itself.

        The failed statement was rolled back, so the world's size says little; the disk's
        free space says whether the world had the room its limit allows.
        """
        try:
            pages = self._app.execute("PRAGMA page_count").fetchone()[0]
            size = self._app.execute("PRAGMA page_size").fetchone()[0]
            free = shutil.disk_usage(self.path.parent).free
        except (sqlite3.Error, OSError):
            pages, size, free = 0, 1, 0
        if free >= self.max_world_bytes - pages * size:
            return (
                f"the world is full: this statement would grow it past its limit of "
                f"{_megabytes(self.max_world_bytes)}; nothing was changed"
            )
        return "the disk is full: nothing was changed"

    def _sync_names(self) -> None:
        """Reload the world's names if the schema changed since we last looked.

        Asks SQLite only when it may have (`_schema_unsure`, see the module docstring).
        """
        if not self._schema_unsure:
            return
        version = self._app.execute("PRAGMA schema_version").fetchone()[0]
        if version != self._schema_version:
            self._refresh_names()
        self._schema_unsure = False

    def _refresh_names(self, handle: _RoleConnection | None = None) -> None:
        """Re-read the world's tables and triggers (through `handle`'s connection if given)."""
        conn = self._app if handle is None else handle.conn
        if handle is not None:
            handle.auth.internal = True
        try:
            version = conn.execute("PRAGMA schema_version").fetchone()[0]
            listed = conn.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')"
            ).fetchall()
            recorded = conn.execute(f"SELECT name FROM {WORLD_TABLE}").fetchall()
            owners = conn.execute(f"SELECT name, role FROM {TRIGGER_OWNER_TABLE}").fetchall()
        finally:
            if handle is not None:
                handle.auth.internal = False
            # the authorizers' answers follow the names: no statement prepared before (nor
            # these, prepared with the authorizer waived) is reused unchecked
            for each in self._role_conns.values():
                _expire(each)
        tables: dict[str, str] = {}
        views: set[str] = set()
        triggers: set[str] = set()
        for kind, name in listed:
            if kind == "trigger":
                triggers.add(name.lower())
            else:
                tables[name.lower()] = name
                if kind == "view":
                    views.add(name.lower())
        original = frozenset(name.lower() for (name,) in recorded)
        # Mutate in place: every role's authorizer holds this same object.
        self._names.tables = tables
        self._names.views = frozenset(views)
        self._names.triggers = frozenset(triggers)
        self._names.original = original
        self._names.trigger_owners = {
            str(name).lower(): str(role) for name, role in owners if str(name).lower() in triggers
        }
        self._schema_version = version
        self._schema_unsure = False

    def _ensure_world_table(self) -> None:
        """A world built elsewhere has no record of its first tables: take them as they are."""
        found = self._app.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (WORLD_TABLE,)
        ).fetchone()
        if found is None:
            _record_world(self._app)
        self._app.execute(_CREATE_OWNER_TABLE)


# -- the world without a store ------------------------------------------------------------

def describe_world(world_sql: str, *, time_limit_s: float = WORLD_TIME_LIMIT) -> list[TableInfo]:
    """The tables and views `world_sql` builds, as `WorldStore.tables()` describes them.

    For a briefing's schema cheat-sheet before any session exists: the world is built in
    memory, as `WorldStore.create` builds it (trusted exercise SQL, one script), and thrown
    away. Raises ExerciseError when the script fails, tries to ATTACH a file or runs longer
    than `time_limit_s`.
    """
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        _harden(conn)
        try:
            build_world(conn, world_sql, time_limit_s=time_limit_s)
        except WorldError as exc:
            raise ExerciseError([f"world SQL failed: {_one_line(exc.message)}"]) from exc
        return _describe(conn)
    finally:
        conn.close()


def _describe(conn: sqlite3.Connection) -> list[TableInfo]:
    """Tables and views (not raceday's or SQLite's own) with columns, CREATE text, triggers
    and foreign keys, read through sqlite-utils' introspection (its own PRAGMA queries)."""
    from sqlite_utils.db import Database, Table  # 80 ms to import: only when asked

    db = Database(conn, recursive_triggers=False, execute_plugins=False)
    triggers: dict[str, list[str]] = {}
    for trigger in db.triggers:
        triggers.setdefault(trigger.table.lower(), []).append(trigger.name)
    objects: list[tuple[str, Table | View]] = [("table", db.table(n)) for n in db.table_names()]
    objects += [("view", db.view(n)) for n in db.view_names()]
    infos: list[TableInfo] = []
    for kind, item in sorted(objects, key=lambda o: o[1].name):
        if _hidden(item.name):
            continue
        foreign_keys = (
            tuple(
                ForeignKeyInfo(tuple(fk.columns), fk.other_table, tuple(fk.other_columns))
                for fk in item.foreign_keys
            )
            if isinstance(item, Table)
            else ()
        )
        infos.append(
            TableInfo(
                name=item.name,
                kind=kind,
                columns=tuple(
                    ColumnInfo(name=c.name, type=c.type or "", notnull=bool(c.notnull), pk=bool(c.is_pk))
                    for c in item.columns
                ),
                sql=item.schema or "",
                triggers=tuple(sorted(triggers.get(item.name.lower(), ()))),
                foreign_keys=foreign_keys,
            )
        )
    return infos


# -- helpers ------------------------------------------------------------------------------


def _connect(path: Path, *, mode: str, cached_statements: int = 128) -> sqlite3.Connection:
    uri = f"{Path(path).resolve().as_uri()}?mode={mode}"
    return sqlite3.connect(
        uri,
        uri=True,
        isolation_level=None,
        timeout=LOCK_WAIT_S,
        check_same_thread=False,
        cached_statements=cached_statements,
    )


def _harden(conn: sqlite3.Connection) -> None:
    """Settings every connection needs before anything else runs on it."""
    # Text a player stored as invalid UTF-8 must not make every later read fail.
    conn.text_factory = _decode
    # In autocommit, right after connect: inside a transaction this PRAGMA is a silent no-op.
    conn.execute("PRAGMA foreign_keys=ON")
    if conn.execute("PRAGMA foreign_keys").fetchone()[0] != 1:
        raise StoreError("SQLite refused to turn foreign keys on")
    conn.execute("PRAGMA trusted_schema=OFF")
    conn.execute("PRAGMA recursive_triggers=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")  # no temp files, anywhere


def _unhurried(conn: sqlite3.Connection) -> None:
    """A replay's world: thrown away once read, so never synced; and played by one thread,
    every role on a connection of this store, so a lock one role holds cannot be let go
    while another waits for it, and nobody else opens the file. Waiting (`LOCK_WAIT_S`)
    could only end in the same "database is locked": it fails at once (a team that never
    commits made the final replay wait 5 s a write, over two minutes in all)."""
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA busy_timeout=0")


def _is_full(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)


# SQLite's primary result codes when the machine, not the SQL, stops a read or a write.
_MACHINE_CODES = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY,
                            sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB,
                            sqlite3.SQLITE_CORRUPT})


def _disk_short(conn: sqlite3.Connection, path: Path, max_bytes: int) -> bool:
    """Did a write stop for the disk (less room left than the world's limit allows), not
    for the world's own size limit?"""
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        free = shutil.disk_usage(path.parent).free
    except (sqlite3.Error, OSError):
        return False
    return bool(free < max_bytes - pages * size)


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


def _too_many(sql: str, count: int) -> StatementResult:
    return StatementResult(
        sql=_printable(sql[:200]) + ("…" if len(sql) > 200 else ""),
        error=(
            f"submission has {count:,} statements; the limit is {MAX_STATEMENTS:,} "
            "(nothing was run: send them in smaller parts)"
        ),
        error_kind="error",
    )


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


_CREATE_OWNER_TABLE = (
    f"CREATE TABLE IF NOT EXISTS {TRIGGER_OWNER_TABLE} (name TEXT PRIMARY KEY, role TEXT NOT NULL)"
)


def _record_world(conn: sqlite3.Connection) -> None:
    """Remember the world's tables and views as first built (see WorldNames.original)."""
    conn.execute(f"CREATE TABLE IF NOT EXISTS {WORLD_TABLE} (name TEXT PRIMARY KEY, kind TEXT)")
    conn.execute(
        f"INSERT OR IGNORE INTO {WORLD_TABLE} (name, kind) "
        "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
        f"AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
        f"AND name NOT LIKE '\\{RESERVED_PREFIX}%' ESCAPE '\\'"
    )
    conn.execute(_CREATE_OWNER_TABLE)


@functools.lru_cache(maxsize=512)
def _may_change_schema(sql: str) -> bool:
    """Whether a trusted statement may change the schema version (the same checks run often)."""
    return first_keyword(sql) not in _NO_DDL


def _changes(handle: _RoleConnection) -> int:
    """changes() of the statement just run, asked as the role (its authorizer allows it:
    the prepared statement may stay in the cache) on a record of its own, so the statement's
    record is kept."""
    auth = handle.auth
    kept = auth.context
    auth.context = StatementContext()
    try:
        row = handle.conn.execute("SELECT changes()").fetchone()
    finally:
        auth.context = kept
    return int(row[0])


def _columns(cursor: sqlite3.Cursor) -> tuple[str, ...]:
    if cursor.description is None:
        return ()
    return tuple(str(column[0]) for column in cursor.description)


def _hidden(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("sqlite_") or lowered.startswith(RESERVED_PREFIX)


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _one_line(message: str) -> str:
    line = " ".join(message.splitlines()).strip()
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    return line


def _printable(sql: str) -> str:
    """The submission as it can be shown and logged: NULs and lone surrogates escaped."""
    return sql.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def _check_text(sql: str) -> StatementResult | None:
    """Refuse text SQLite cannot take, before it reaches the splitter or SQLite."""
    if len(sql) > MAX_SUBMISSION_CHARS:
        return StatementResult(
            sql=_printable(sql[:200]) + "…",
            error=f"submission is too long ({len(sql):,} characters; the limit is {MAX_SUBMISSION_CHARS:,})",
            error_kind="error",
        )
    if "\x00" in sql:
        return StatementResult(
            sql=_printable(sql), error="statement contains a NUL character", error_kind="syntax"
        )
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = sql[exc.start : exc.end].encode("utf-8", "backslashreplace").decode("utf-8")
        return StatementResult(
            sql=_printable(sql),
            error=f"statement contains text that is not valid UTF-8 ({bad})",
            error_kind="syntax",
        )
    return None
