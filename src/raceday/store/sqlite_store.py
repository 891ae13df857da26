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
(`expire`: `set_authorizer` again, and SQLite prepares each again, asking the authorizer,
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
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from raceday.store.authorizer import Authorizer, StatementContext, WorldNames
from raceday.store.base import (
    StoreBase,
    StoreError,
    WorldUnavailable,
    capped_rows,
)
from raceday.store.dialect.sqlite import called_functions, first_keyword, split_statements
from raceday.store.protocol import RoleRights
from raceday.store.reads import ReadCollector
from raceday.store.results import (
    ErrorKind,
    Row,
    StatementResult,
    TableInfo,
)
from raceday.store.sqlite_failures import build_failed, classify, full_message, kept_in
from raceday.store.sqlite_world import (
    CREATE_OWNER_TABLE,
    FOREIGN_KEY_FAILED,
    LOCK_WAIT_MS,
    ROLE_LIMITS,
    TRIGGER_OWNER_TABLE,
    WORLD_TABLE,
    ForeignKey,
    RoleConnection,
    changes_of,
    columns_of,
    connect_world,
    describe_tables,
    disk_short,
    expire,
    foreign_key_named,
    foreign_keys,
    harden,
    is_full,
    record_world,
    unhurried,
)
from raceday.store.world import (
    MAX_WORLD_BYTES,
    WorldError,
    build_world,
    limit_size,
)

# The world may not grow past MAX_WORLD_BYTES (prepare.py; SQLite's max_page_count on every
# connection that writes it): a statement that would pass it fails and changes nothing.
# How often (in SQLite VM instructions) the progress handler checks the deadline.
PROGRESS_EVERY = 1000
_clock = time.perf_counter  # the progress handler's clock, bound once

# Statements whose cursor.rowcount Python fills in (it looks at the first word only).
_PLAIN_DML = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE"})
# Trusted statements that cannot change the schema version, by first word. (With
# writable_schema on, an UPDATE of sqlite_master changes the schema but not its version:
# `PRAGMA schema_version` never caught that either.)
_NO_DDL = frozenset({"SELECT", "VALUES", "WITH", "EXPLAIN", "INSERT", "UPDATE", "DELETE", "REPLACE"})


ROLE_CACHED_STATEMENTS = 128
"""Prepared statements kept per role connection (Python's LRU cache)."""
_MAX_VERDICTS = 512
"""Past this many records the connection's statements are expired and the records dropped
(a player typing many different statements must not grow memory without end)."""


BEGIN_MODES = ("deferred", "immediate", "exclusive")
"""SQLite's BEGIN: when the transaction takes the write lock. There are no isolation levels:
every SQLite transaction is serializable, and there is one writer at a time."""


class WorldStore(StoreBase[RoleConnection]):
    """A world database and the roles that play in it. Build with `create` or `open`."""

    backend = "sqlite"

    reads_complete = True
    writes_complete = True
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
        self._steps_left = -1  # the progress handler's calls left in a work budget (-1: none)
        self._budget_spent = False
        self._closed = False
        self._role_conns: dict[str, RoleConnection] = {}
        self._names = WorldNames()
        self._schema_version = -1
        self._keys: tuple[int, tuple[ForeignKey, ...]] | None = None  # by schema_version
        # True when the schema may have changed since the names were read (module docstring).
        self._schema_unsure = True
        self._file = str(self.path)  # checked at every call: os.path, not pathlib
        if not self.path.exists():
            raise StoreError(f"no world database at {self.path}")
        try:
            self._app = connect_world(self.path, mode="rw")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        try:
            harden(self._app)
            if not durable:
                unhurried(self._app)
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

    @property
    def world_file(self) -> Path | None:
        """This world's file: a replay forks it by copying the file (`replay_world.py`), and
        plays its nights in forked children that open their copies."""
        return self.path

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
            conn = connect_world(path, mode="rwc")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot create {path}: {exc}") from exc
        try:
            harden(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")  # a failed build is rebuilt, not recovered
            build_world(conn, world_sql, max_bytes=max_world_bytes)
            conn.execute("PRAGMA journal_mode=WAL")  # in case the world SQL changed it
            record_world(conn)
        except (sqlite3.Error, WorldError) as exc:
            cause = exc.__cause__ if isinstance(exc, WorldError) else exc
            disk_full = cause is not None and is_full(cause) and disk_short(conn, path,
                                                                              max_world_bytes)
            conn.close()
            for leftover in (path, _sibling(path, "-wal"), _sibling(path, "-shm")):
                leftover.unlink(missing_ok=True)
            # a WorldError's message says its line, as PostgreSQL's build does
            raise build_failed(exc, cause, path, disk_full) from exc
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

    # -- running role SQL ---------------------------------------------------------------

    def _role_call(self, role: str) -> AbstractContextManager[RoleConnection]:
        return self._role_held(role)

    @contextmanager
    def _role_held(self, role: str) -> Iterator[RoleConnection]:
        """The store's lock, its checks, and the role's connection (statements run one at a
        time: SQLite has one writer)."""
        with self._lock:
            self._begin_call()
            handle = self._role(role)
            self._mind_own_locks(handle)
            yield handle

    def _prepare(self, handle: RoleConnection) -> None:
        self._sync_names()

    def _split(self, sql: str) -> list[str]:
        return split_statements(sql)

    def _held(self, handle: RoleConnection) -> str | None:
        return handle.held

    def _statement(self, handle: RoleConnection, statement: str,
                   params: Mapping[str, Any] | None) -> StatementResult:
        result = self._run(handle, statement, params)
        if handle.held is not None and (result.error is not None or not handle.conn.in_transaction):
            handle.held = None  # an error ends a held transaction, as on PostgreSQL
            if handle.conn.in_transaction:
                self._internal(handle, "ROLLBACK")
            if result.error is not None:
                result = replace(result, error=f"{result.error} (the transaction was rolled back)")
        return result

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

    def _end_or_begin(self, handle: RoleConnection, sql: str, mode: str | None) -> StatementResult:
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

    # -- the probe (StoreBase.probe): a savepoint rolled back ----------------------------

    def _probe_begin(self, handle: RoleConnection) -> None:
        self._internal(handle, "SAVEPOINT raceday_probe")

    def _probe_statement(self, handle: RoleConnection, statement: str,
                         params: Mapping[str, Any] | None) -> StatementResult:
        return self._run(handle, statement, params)

    def _probe_over(self, handle: RoleConnection) -> bool:
        # a trigger's RAISE(ROLLBACK) ended the transaction: nothing more may run, or it
        # would run in autocommit and stay
        return not handle.conn.in_transaction

    def _probe_end(self, handle: RoleConnection, results: Sequence[StatementResult]) -> None:
        if handle.conn.in_transaction:
            self._internal(handle, "ROLLBACK")
        if any(r.schema_changed for r in results):
            self._refresh_names()

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
            self._budget_spent = False
            cursor: sqlite3.Cursor | None = None
            try:
                cursor = self._app.execute(sql, dict(params or {}))
                columns = columns_of(cursor)
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
            return describe_tables(self._app)

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
        if self._steps_left > 0:
            self._steps_left -= 1
            if self._steps_left == 0:  # the automation's work budget: the same on any machine
                self._budget_spent = True
                return 1
        return 0

    def _mind_own_locks(self, handle: RoleConnection) -> None:
        """Wait for SQLite's lock (`LOCK_WAIT_S`) only when no other role of this session
        holds a transaction open. If one does, the lock is most likely its, and it can only
        be let go by a later call of this session, after this one: waiting could only end in
        the same "database is locked", a second later (in the isolation lab, every write of
        the automation while a player held a transaction)."""
        if not self._durable:
            return  # a replay's world never waits (`unhurried`)
        own = any(other is not handle and other.conn.in_transaction
                  for other in self._role_conns.values())
        wait = 0 if own else LOCK_WAIT_MS
        if handle.wait_ms != wait:
            self._internal(handle, f"PRAGMA busy_timeout = {wait}")
            handle.wait_ms = wait

    def _role(self, role_id: str) -> RoleConnection:
        handle = self._role_conns.get(role_id)
        if handle is None:
            role = self._roles.get(role_id)
            if role is None:
                raise KeyError(f"unknown role {role_id!r}")
            handle = self._open_role(role)
            self._role_conns[role_id] = handle
        return handle

    def _open_role(self, role: RoleRights) -> RoleConnection:
        try:
            conn = connect_world(self.path, mode="rw", cached_statements=ROLE_CACHED_STATEMENTS)
        except sqlite3.Error as exc:
            raise WorldUnavailable(f"{self.path}: the world cannot be opened ({exc})") from exc
        try:
            harden(conn)
            if not self._durable:
                unhurried(conn)
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
        return RoleConnection(conn, auth)

    def _internal(self, handle: RoleConnection, sql: str, params: Sequence[Any] = ()) -> None:
        """Raceday's own statement on a role connection; prepared with the authorizer
        waived, so it is expired at once (typed by the role, the same text is checked)."""
        handle.auth.internal = True
        try:
            handle.conn.execute(sql, params).close()
        finally:
            handle.auth.internal = False
            expire(handle)

    def _run(
        self,
        handle: RoleConnection,
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
        budget = self.work_budget
        self._steps_left = -1 if budget is None else max(1, budget // PROGRESS_EVERY)
        self._budget_spent = False
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
            columns = () if ctx.ddl else columns_of(cursor)
            rows, truncated = capped_rows(cursor, self.row_cap) if columns else ([], False)
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
                    rowcount = changes_of(handle)
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
                made_writes=tuple(ctx.made_writes) if not (explain or ctx.ddl) else (),
                reads=tuple(sorted({str(k[0]).lower() for k, why in ctx.reads.items()
                                    if k[0] and why is None})),
            )
        except Exception as exc:  # never raise for player input: every failure is a result
            failed = self._verdict(handle, statement)  # prepared, then failed: may be reused
            kind, message = self._classify(exc, auth, started)
            if kind == "constraint" and message == FOREIGN_KEY_FAILED:
                message = foreign_key_named(self._world_keys(),
                                            failed.writes or [failed.target or ""],
                                             deleting=keyword == "DELETE")
            return StatementResult(
                sql=statement,
                elapsed_ms=(time.perf_counter() - started) * 1000,
                error=message,
                error_kind=kind,
                kept_in=kept_in(handle, statement, failed, kind),
            )
        finally:
            self._deadline = float("inf")
            self._steps_left = -1
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
    def _verdict(handle: RoleConnection, statement: str) -> StatementContext:
        """The authorizer's record of the statement just run: kept when SQLite prepared it,
        the kept one when SQLite took it from the statement cache unchecked."""
        auth = handle.auth
        ctx = auth.context
        if ctx.prepared:
            if not ctx.denials:
                if len(handle.verdicts) >= _MAX_VERDICTS:
                    expire(handle)
                handle.verdicts[statement] = ctx
            return ctx
        known = handle.verdicts.get(statement)
        if known is not None:
            ctx = auth.context = known.reused()
        return ctx

    def _classify(self, exc: BaseException, auth: Authorizer | None, started: float) -> tuple[ErrorKind, str]:
        """Turn an exception into (error_kind, one clear line) (sqlite_failures.py)."""
        return classify(exc, auth.context.denials if auth is not None else (),
                        interrupted=lambda: self._interrupted(started),
                        full=lambda: full_message(self._app, self.path, self.max_world_bytes))

    def _interrupted(self, started: float) -> str:
        """Why the progress handler stopped the statement that began at `started`."""
        if self._cancelled:
            return f"statement cancelled after {time.perf_counter() - started:.1f} s"
        if self._budget_spent:
            return (f"statement stopped after {self.work_budget or 0:,} "
                    "steps of work (the automation's work limit)")
        return f"statement interrupted after {self.time_limit_s:.1f} s (time limit)"

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

    def _world_keys(self) -> tuple[ForeignKey, ...] | None:
        """The world's foreign keys, read again only when its schema changed: a flagship
        night's clean-ups fail on a key ~150 times, each once re-reading every table's."""
        try:
            version = self._app.execute("PRAGMA schema_version").fetchone()[0]
            if self._keys is None or self._keys[0] != version:
                self._keys = (version, foreign_keys(self._app))
        except sqlite3.Error:
            return None
        return self._keys[1]

    def _refresh_names(self, handle: RoleConnection | None = None) -> None:
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
                expire(each)
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
            record_world(self._app)
        self._app.execute(CREATE_OWNER_TABLE)


# -- helpers ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _may_change_schema(sql: str) -> bool:
    """Whether a trusted statement may change the schema version (the same checks run often)."""
    return first_keyword(sql) not in _NO_DDL


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)
