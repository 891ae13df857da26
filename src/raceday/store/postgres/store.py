"""A world in PostgreSQL behind the same Store protocol as SQLite's WorldStore.

Each session's world is its own schema. Each exercise role is a PostgreSQL role (NOLOGIN)
holding the GRANTs of its `read`/`write` lists, so permissions are PostgreSQL's own, not an
authorizer's. What reference/sql-safety.md measured shaped the rest:

- A player's statement runs under `SET LOCAL ROLE` to its role, on a connection whose
  *login* is a member of that role only. The login matters: `set_config('role', ...)` (a
  plain function, also callable from a player's PL/pgSQL) reaches any role the session user
  is a member of, so a login that could reach raceday's own role would be an escape hatch.
  The same holds for the checker, which runs the exercise's checks (trusted SQL that may
  still call a view or function a player wrote) on a login of its own, read-only.
- Only the DSN's own login (the admin connection) builds the world and holds raceday's state;
  it never runs a statement that could call code a player wrote.
- Player SQL goes through the extended protocol (one statement per message: `select 1; set
  statement_timeout = 0` is refused by the server), after a first-keyword allow-list
  (admission.py).
  Every statement is its own transaction, opened by raceday with its limits set LOCAL
  (role, search_path, statement_timeout, lock_timeout), so nothing a player changed with
  `set_config` outlives it; a client-side watchdog cancels a statement that ran past its
  time anyway. Session advisory locks are released after each statement.
- Rows come through a server-side cursor (`DECLARE`), `row_cap + 1` at most.
- raceday's own state is in a schema no player role has USAGE on.

psycopg is imported lazily: SQLite users never load it.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from raceday.store.base import StoreBase, StoreError, capped_rows
from raceday.store.dialect import postgres as pgsql
from raceday.store.postgres.admission import (
    CODE_KEYWORDS,
    DDL_KEYWORDS,
    DML_KEYWORDS,
    Ready,
    error,
    to_send,
)
from raceday.store.postgres.counts import COUNTS_BY_NAME, counts_by_oid, tallies
from raceday.store.postgres.failures import classify, kept_in
from raceday.store.postgres.fork import ForkSource as ForkSource  # re-exported: the replay's
from raceday.store.postgres.fork import build_fork, read_source
from raceday.store.postgres.logins import Login, log_in, lost
from raceday.store.postgres.team_writes import team_made_writes
from raceday.store.postgres.terminate import TERMINATE_GRACE_S, Terminator
from raceday.store.postgres.unblind import unblind
from raceday.store.postgres.watchdog import WATCHDOG
from raceday.store.postgres.world import (
    SessionNames,
    build_world,
    connect,
    describe_schema,
    drop_schemas,
    drop_world,
    end_transaction,
    grant_rights,
    literal,
    quoted,
)
from raceday.store.protocol import RoleRights
from raceday.store.results import Answer, ErrorKind, Row, StatementResult, TableInfo

if TYPE_CHECKING:
    import psycopg

_log = logging.getLogger(__name__)

LOCK_TIMEOUT_MS = 1_000
"""How long a player's statement waits for a lock another connection holds."""
IDLE_TIMEOUT_MS = 30_000
"""A transaction left open this long is ended by the server (belt and braces)."""
WATCHDOG_GRACE_S = 0.5
"""How long past its time limit a statement runs before raceday cancels it from the client."""

ISOLATION_LEVELS = ("read committed", "repeatable read", "serializable")
_BEGIN_STATEMENTS = 2
"""How many statements `_begin_sql` gives (BEGIN, and the limits' SELECT)."""
_ROWS = "raceday_rows"
_FETCH = f"FETCH FORWARD {{}} FROM {_ROWS}"
_CLOSE_ROWS = f"CLOSE {_ROWS}".encode()
_LIMITS = ("SELECT pg_catalog.set_config('role', %s, true), "
           "pg_catalog.set_config('search_path', %s, true), "
           "pg_catalog.set_config('statement_timeout', %s, true), "
           "pg_catalog.set_config('lock_timeout', %s, true), "
           "pg_catalog.set_config('idle_in_transaction_session_timeout', %s, true), "
           "pg_catalog.set_config('row_security', %s, true), "
           "pg_catalog.set_config('synchronous_commit', 'off', true)")
"""The transaction's limits in one statement (`set_config` with is_local is SET LOCAL): its
role, search_path, statement_timeout, lock_timeout, idle_in_transaction_session_timeout,
row_security (off for the checker: see unblind.py); and a COMMIT that does not wait for the
WAL's flush, as SQLite's world commits (WAL, synchronous=NORMAL): a crash of the server may
lose the last moment's commits, never make the world inconsistent. The automation commits
each statement; waiting on a flush each (10 ms under load) held recovery-under-load's
4,000-droplet morning to 17-29 ms a statement, some 14,000 of them."""


class PostgresStore(StoreBase[Login]):
    """A world schema in PostgreSQL and the roles that play in it. Build with `create`."""

    backend = "postgresql"
    can_fork = True
    asks_together = True  # a round of checks in one round trip: see `app_queries`
    writes_complete = True  # the server's own counts, and its catalogs' (`counts.CATALOG_ROW`)

    def __init__(
        self,
        dsn: str,
        session: str,
        roles: Sequence[RoleRights],
        *,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
        _passwords: Mapping[str, str] | None = None,
        _admin: psycopg.Connection[Any] | None = None,
    ) -> None:
        self.dsn = dsn
        self.session = session
        self.row_cap = row_cap
        self.time_limit_s = time_limit_s
        self.idle_timeout_ms = IDLE_TIMEOUT_MS
        self._roles = {role.id: role for role in roles}
        self.names = SessionNames(session, list(self._roles))
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._running: set[psycopg.Connection[Any]] = set()
        self._closed = False
        self._logins: dict[str, Login] = {}
        self._checker: Login | None = None
        self._tables: tuple[int, str] | None = None
        """`catalog_writes` when the world's tables were last found, and `counts_by_oid`
        for them."""
        # `create` and `fork` hand over the connection that built the world: a connection
        # costs a password exchange (SCRAM) and a new server process
        self._admin = _admin if _admin is not None else connect(dsn)
        self._terminator = Terminator(dsn)
        try:
            self._admin.execute(f"SET search_path = {quoted(self.names.world)}")
            if _passwords is None:
                _passwords = self._new_passwords()
            self._passwords = dict(_passwords)
        except BaseException:
            self._admin.close()
            raise

    # -- building and opening -----------------------------------------------------------

    @classmethod
    def create(
        cls,
        dsn: str,
        world_sql: str,
        roles: Sequence[RoleRights],
        *,
        session: str | None = None,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
    ) -> PostgresStore:
        """Build a fresh world schema from the exercise's (trusted) SQL, with its roles."""
        session = session or secrets.token_hex(4)
        if not re.fullmatch(r"[a-z0-9]{1,16}", session):
            raise StoreError(f"a PostgreSQL session id is 1-16 lower-case letters or digits, not {session!r}")
        names = SessionNames(session, [r.id for r in roles])
        passwords = {SessionNames.login(role): secrets.token_hex(16) for role in names.all_roles()}
        admin = connect(dsn)
        taken = admin.execute(
            "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname LIKE %(p)s UNION ALL "
            "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname LIKE %(p)s",
            {"p": f"rd\\_{session}\\_%"}).fetchone()
        if taken is not None:
            admin.close()
            raise StoreError(f"a raceday world {session!r} already exists on this server")
        try:
            build_world(admin, names, world_sql, roles, passwords)
        except BaseException:
            drop_schemas(admin, session)
            admin.close()
            raise
        return cls(dsn, session, roles, row_cap=row_cap, time_limit_s=time_limit_s, _passwords=passwords,
                   _admin=admin)

    @classmethod
    def open(
        cls,
        dsn: str,
        session: str,
        roles: Sequence[RoleRights],
        *,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
    ) -> PostgresStore:
        """Open an existing session's world (its logins get new passwords)."""
        return cls(dsn, session, roles, row_cap=row_cap, time_limit_s=time_limit_s)

    def reopen(self) -> PostgresStore:
        """The same world on new connections (this store may be closed)."""
        return PostgresStore.open(self.dsn, self.session, list(self._roles.values()),
                                  row_cap=self.row_cap, time_limit_s=self.time_limit_s)

    def new_world(self, world_sql: str, roles: Sequence[RoleRights]) -> PostgresStore:
        """A fresh world of the exercise's own on this server, with this store's limits."""
        return PostgresStore.create(self.dsn, world_sql, roles, row_cap=self.row_cap,
                                    time_limit_s=self.time_limit_s)

    def _new_passwords(self) -> dict[str, str]:
        """Give every login of the session a fresh password (they live in memory only)."""
        found = self._admin.execute(
            "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = %s", [self.names.world]
        ).fetchone()
        if found is None:
            raise StoreError(f"no raceday world {self.session!r} in this database")
        passwords: dict[str, str] = {}
        for role in self.names.all_roles():
            login = SessionNames.login(role)
            passwords[login] = secrets.token_hex(16)
            self._admin.execute(f"ALTER ROLE {quoted(login)} PASSWORD {literal(passwords[login])}")
        return passwords

    def fork_source(self) -> ForkSource:
        """What `fork` copies of this world (`fork.read_source`): read once, it serves every
        fork of a replay."""
        with self._call():
            return read_source(self.dsn, self._admin, self.names)

    def fork(self, seed_sql: str, renumber: str = "", source: ForkSource | None = None,
             ) -> tuple[PostgresStore, list[str]]:
        """A new world: this one's schema as the team left it, with the exercise's seed rows.

        What the replay needs (store/replay_world.py does it for SQLite): the team's tables,
        constraints, indexes, triggers and functions, holding the rows of the world as the
        exercise built it; tables the team added keep the rows they hold now. Rows the team's
        schema refuses are warnings. Objects keep their owners (mapped to the new session's
        roles), so a function acts for the same role as before. Needs pg_dump (fork.py).

        `renumber` is the exercise's trusted SQL run on the seed rows (foreign keys off, as
        on SQLite) before they are copied: the shifted race's other plan numbers.

        `source`: this world's schema as `fork_source` read it (a replay forks several
        worlds from one reading); without it, it is read now. The new world is built on
        connections of its own: several forks run side by side.
        """
        if source is None:
            source = self.fork_source()
        if source.session != self.session:
            raise ValueError(f"a fork source of world {source.session!r}, not {self.session!r}")
        roles = list(self._roles.values())
        new, passwords, admin, warnings = build_fork(self.dsn, self.names, roles, seed_sql,
                                                     renumber, source)
        store = PostgresStore(self.dsn, new, roles, row_cap=self.row_cap,
                              time_limit_s=self.time_limit_s, _passwords=passwords, _admin=admin)
        return store, warnings

    # -- running role SQL ---------------------------------------------------------------

    # -- the statement loop (StoreBase.execute): one transaction a statement -------------
    # Each statement is its own transaction, unless the role holds one open (`begin`): then
    # they run in it, and an error ends it (rolled back). Roles run side by side: one role's
    # statement waiting for another's lock does not stop the rest.

    @contextmanager
    def _role_call(self, role: str) -> Iterator[Login]:
        login = self._role_login(role)
        with login.lock:
            yield login

    def _split(self, sql: str) -> list[str]:
        return pgsql.split(sql)

    def _held(self, handle: Login) -> str | None:
        return handle.held

    def _statement(self, handle: Login, statement: str,
                   params: Mapping[str, Any] | None) -> StatementResult:
        login = handle
        held = login.held is not None
        ready = to_send(statement, params)
        catalogs = self.catalog_writes
        if isinstance(ready, StatementResult) and not held:
            return ready  # refused before anything was sent: no transaction to end
        # A statement of its own transaction opens it, runs and commits in one exchange with
        # the server: see `_run`.
        result = ready if isinstance(ready, StatementResult) else self._run(
            login, statement, ready, begin=not held, commit=not held)
        if login.conn.broken or login.conn.closed:
            return lost(login, statement, None)
        if held and not result.ok:
            end_transaction(login.conn, "ROLLBACK")
            login.held = None
            result = replace(result, error=f"{result.error} (the transaction was rolled back)")
        elif not held and not result.ok:
            # committed by _run when it passed; a refused COMMIT (a deferred constraint, a
            # serialization failure) is its failed result, rolled back here
            end_transaction(login.conn, "ROLLBACK")
        if result.ok and (result.schema_changed or self.catalog_writes != catalogs
                          or pgsql.first_keyword(statement) in CODE_KEYWORDS):
            with self._call():  # (a function a SELECT called may have run DDL too)
                self._apply_rights()  # a table made again under a world table's name
        return result

    def begin(self, role: str, isolation: str | None = "read committed") -> StatementResult:
        """Hold a transaction open for `role` at an isolation level (the isolation lab).

        The role's statements then run in it until `commit` or `rollback`, or an error.
        The server ends it if it stays idle (idle_in_transaction_session_timeout).
        """
        level = " ".join((isolation or "read committed").lower().split())
        sql = f"BEGIN ISOLATION LEVEL {level.upper()}"
        if level not in ISOLATION_LEVELS:
            return error(sql, f"isolation level {isolation!r} is not one of PostgreSQL's "
                               f"{', '.join(ISOLATION_LEVELS)}")
        login = self._role_login(role)
        with login.lock:
            if login.held is not None:
                return error(sql, f"{role} already holds a transaction ({login.held})")
            self._begin(login, isolation=level)
            login.held = level
            return StatementResult(sql=sql)

    def commit(self, role: str) -> StatementResult:
        """End `role`'s held transaction. It may fail (a serialization failure): then nothing
        of it stays."""
        return self._finish(role, "COMMIT")

    def rollback(self, role: str) -> StatementResult:
        return self._finish(role, "ROLLBACK")

    def holds(self, role: str) -> str | None:
        """The isolation level of the transaction `role` holds open, or None."""
        return self._role_login(role).held

    def _finish(self, role: str, word: str) -> StatementResult:
        login = self._role_login(role)
        with login.lock:
            if login.held is None:
                return error(word, f"{role} holds no transaction")
            login.held = None
            started = time.perf_counter()
            try:
                with self._watch(login):
                    end_transaction(login.conn, word)
            except Exception as exc:
                if login.conn.closed or login.conn.broken:
                    return lost(login, word, exc)
                end_transaction(login.conn, "ROLLBACK")
                return self._failed(word, exc, started)
            return StatementResult(sql=word, elapsed_ms=(time.perf_counter() - started) * 1000)

    # -- the probe (StoreBase.probe): one transaction rolled back -------------------------

    def _probe_begin(self, handle: Login) -> None:
        self._begin(handle)

    def _probe_statement(self, handle: Login, statement: str,
                         params: Mapping[str, Any] | None) -> StatementResult:
        ready = to_send(statement, params)
        return ready if isinstance(ready, StatementResult) else self._run(handle, statement, ready)

    def _probe_end(self, handle: Login, results: Sequence[StatementResult]) -> None:
        if not (handle.conn.closed or handle.conn.broken):
            end_transaction(handle.conn, "ROLLBACK")

    def interrupt(self) -> None:
        """Cancel the running statements. Safe from any thread; no lock."""
        self._cancel.set()
        for conn in list(self._running):
            conn.cancel_safe()

    # -- trusted SQL ----------------------------------------------------------------------

    def app_query(
        self, sql: str, params: Mapping[str, Any] | None = None
    ) -> tuple[tuple[str, ...], list[Row]]:
        """Run one of the exercise's checks, read-only, on the checker's own login."""
        try:
            query, values = pgsql.bind(sql, params)
        except pgsql.MissingParameter as exc:
            raise StoreError(f"no value was given for parameter :{exc.name}") from exc
        started = time.perf_counter()
        try:
            return self._read_only([query], values)[0]
        except StoreError:
            raise
        except Exception as exc:
            kind, message = self._classify(exc, started)
            raise StoreError(message, kind) from exc

    def app_queries(self, sqls: Sequence[str]) -> list[Answer]:
        """Several of the exercise's checks (no parameters), read in one exchange with the
        server: after every write a night asks its harms and milestones together, each a
        round trip of its own before. One transaction sees them all, as it would have seen
        each one alone (nothing is written between them). Any that fails (a check the team's
        schema broke) aborts the rest on the server, so then each is asked alone and gives
        its own answer or error, as `app_query` would."""
        pieces: list[str] = []
        values: list[Any] = []
        for sql in sqls:
            try:
                query, bound = pgsql.bind(sql, None)
            except pgsql.MissingParameter:
                query = ""
            if not query or len(pgsql.split(sql)) != 1:  # not one statement: asked alone
                return super().app_queries(sqls)
            pieces.append(query)
            values += bound
        try:
            return list(self._read_only(pieces, values))
        except Exception:  # asked alone, each with its own error
            return super().app_queries(sqls)

    def reads_of(self, sql: str, params: Mapping[str, Any] | None = None) -> frozenset[str] | None:
        """The world tables (lower case) a trusted query without parameters reads, named by
        its plan (`plan_reads`); None when its answer may change otherwise, or it has
        parameters (a value can fold away a part of the plan another value keeps), or it
        cannot be planned. Two exchanges with the server, once a query and schema."""
        from raceday.store.postgres.plan_reads import EXPLAIN, VERDICT, read_plan

        try:
            query, values = pgsql.bind(sql, params)
            if values or len(pgsql.split(sql)) != 1:
                return None
            plan = read_plan(self._read_only([EXPLAIN + query], [])[0][1][0][0])
            world = self.names.world
            verdict = self._read_only([VERDICT], plan.verdict_values(world))[0][1][0]
        except Exception:  # the run itself says what is wrong
            return None
        return plan.tables(world, tuple(verdict))

    def _read_only(self, queries: Sequence[str], values: Sequence[Any],
                   ) -> list[tuple[tuple[str, ...], list[Row]]]:
        """Each query's columns and rows, all in one message on the checker's own login:
        BEGIN with the limits, the queries, ROLLBACK (one round trip, where it was three a
        query: a night on PostgreSQL asks about ten thousand checks). The values are bound
        by psycopg on this side (the checks are the exercise's SQL, never a player's); the
        transaction is rolled back, so nothing a function a check calls sets outlives it.
        Raises what the server said, the transaction ended."""
        from raceday.store.postgres import driver

        with self._call():
            checker = self._checker_login()
            batch = (f"{self._begin_sql(checker, read_only=True)};\n"
                     + "\n;\n".join(queries)
                     + "\n; ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()")
            answers = []
            try:
                with self._watch(checker):
                    cur = driver.ClientCursor(checker.conn)
                    cur.execute(batch, list(values))
                    for _ in range(_BEGIN_STATEMENTS):  # to the first query's own result
                        cur.nextset()
                    for _ in queries:
                        columns = tuple(c.name for c in cur.description or ())
                        answers.append((columns, [tuple(r) for r in cur.fetchall()]
                                        if columns else []))
                        cur.nextset()
            except Exception:
                if not (checker.conn.closed or checker.conn.broken):
                    end_transaction(checker.conn, "ROLLBACK")
                raise
            return answers

    # -- the schema -----------------------------------------------------------------------

    def tables(self) -> list[TableInfo]:
        """Tables and views of the world with columns, primary keys, foreign keys, triggers."""
        with self._call():
            return describe_schema(self._admin, self.names.world)

    def close(self) -> None:
        """Close every connection; the world schema and its roles stay (see `drop`)."""
        self._shut(keep_admin=False)

    def _shut(self, *, keep_admin: bool) -> psycopg.Connection[Any] | None:
        """`close`; `keep_admin`: but the admin connection, returned while it is usable."""
        with self._lock:
            if self._closed:
                return None
            self._closed = True
            for login in [*self._logins.values(), *([self._checker] if self._checker else [])]:
                login.conn.close()
            self._logins.clear()
            self._checker = None
            admin = self._admin
            if keep_admin and not (admin.closed or admin.broken):
                return admin
            admin.close()
            return None

    def drop(self) -> None:
        """Remove the session's schemas and roles from the server, then close: on the admin
        connection the store has (a replay drops about ten worlds a night), else a new one."""
        admin = self._shut(keep_admin=True)
        if admin is None:
            drop_world(self.dsn, self.session)
            return
        try:
            drop_schemas(admin, self.session)
        except Exception:  # that connection could not: a new one, as for a closed store
            _log.info("dropping world %s again on a new connection", self.session, exc_info=True)
            drop_world(self.dsn, self.session)
        finally:
            admin.close()

    # -- internals ------------------------------------------------------------------------

    @contextmanager
    def _call(self) -> Iterator[None]:
        with self._lock:
            if self._closed:
                raise StoreError("the world store is closed")
            self._cancel.clear()
            yield

    def _role_login(self, role_id: str) -> Login:
        """The role's connection, opened on first use (under the store's lock)."""
        with self._call():
            return self._login(role_id)

    def _login(self, role_id: str) -> Login:
        login = self._logins.get(role_id)
        if login is not None and (login.conn.closed or login.conn.broken):
            login = None  # the server ended it (a transaction left idle, a restart): log in again
        if login is None:
            if role_id not in self._roles:
                raise KeyError(f"unknown role {role_id!r}")
            login = log_in(self.dsn, self.names.roles[role_id], self._passwords)
            self._logins[role_id] = login
        return login

    def _checker_login(self) -> Login:
        if self._checker is not None and (self._checker.conn.closed or self._checker.conn.broken):
            self._checker = None
        if self._checker is None:
            self._checker = log_in(self.dsn, self.names.checker, self._passwords)
        return self._checker

    def _begin_sql(self, login: Login, *, read_only: bool = False,
                   isolation: str | None = None) -> str:
        """BEGIN and the transaction's limits, set LOCAL (`_LIMITS`, its values written in),
        for the simple protocol: _BEGIN_STATEMENTS statements (each one the server parses
        and runs on its own: a round of checks sends them some ten thousand times a night)."""
        limits = _LIMITS.replace("%s", "{}").format(*(literal(v) for v in self._limits(login)))
        return (f"BEGIN{' READ ONLY' if read_only else ''}"
                f"{' ISOLATION LEVEL ' + isolation.upper() if isolation else ''}; {limits}")

    def _begin(self, login: Login, *, read_only: bool = False, isolation: str | None = None) -> None:
        """Open raceday's transaction for one statement, with every limit set LOCAL."""
        cur = login.conn.execute(
            self._begin_sql(login, read_only=read_only, isolation=isolation) + "; "
            + COUNTS_BY_NAME.replace("%s", literal(self.names.world))
        )
        while cur.nextset():
            pass
        self._counted(login, cur.fetchall())

    @contextmanager
    def _watch(self, login: Login) -> Iterator[None]:
        """Cancel from the client if the server's own timeout did not stop the statement;
        end its server process if it ran on past the cancel too (terminate.py)."""
        conn = login.conn
        pid = conn.info.backend_pid
        name = SessionNames.login(login.role)
        limit = self.time_limit_s + WATCHDOG_GRACE_S
        self._running.add(conn)
        try:
            with WATCHDOG.watching(limit, conn.cancel_safe), WATCHDOG.watching(
                    limit + TERMINATE_GRACE_S, lambda: self._terminator.terminate(pid, name)):
                yield
        finally:
            self._running.discard(conn)
            if self._terminator.ended(pid):
                login.stopped = True

    def _run(self, login: Login, statement: str, ready: Ready,
             *, begin: bool = False, commit: bool = False) -> StatementResult:
        """Run one statement; `begin`: in a transaction of its own, opened first with its
        limits; `commit`: and commit it.

        Everything goes in one pipeline (one exchange with the server), the player's statement
        still one statement in a message of its own (the extended protocol), between raceday's
        own: BEGIN and the SET LOCALs, the counts of rows written before and after, COMMIT.
        A query's rows come through a server-side cursor (DECLARE, then one FETCH of
        row_cap + 1 rows: the server computes no more than that), so a huge result is never
        computed. A refused COMMIT is the statement's error."""
        started = time.perf_counter()
        keyword, query, values = ready
        conn = login.conn
        is_query = pgsql.is_query(statement)
        from raceday.store.postgres import driver  # loaded when the store connected

        try:
            with self._watch(login):
                with self._exchange(conn, commit):
                    before = self._open(login) if begin else None
                    cur = driver.ExtendedCursor(conn)
                    if is_query:
                        driver.ExtendedCursor(conn).execute(_declare(query), values,
                                                            prepare=False)
                        cur.execute(_FETCH.format(self.row_cap + 1).encode())
                        if not commit:
                            conn.execute(_CLOSE_ROWS)
                    else:
                        cur.execute(query, values)
                    after = self._close(login, commit=commit)
                if before is not None:
                    self._counted(login, before.fetchall())
                columns = tuple(c.name for c in cur.description or ())
                rowcount = None
                if is_query:
                    rows, truncated = capped_rows(iter(cur.fetchall()), self.row_cap)
                else:
                    rows, truncated = self._fetch(cur) if columns else ([], False)
                    is_dml = keyword in DML_KEYWORDS or (
                        keyword == "WITH" and bool(DML_KEYWORDS & set(pgsql.words(statement))))
                    rowcount = cur.rowcount if is_dml and cur.rowcount >= 0 else None
                writes, reads = self._writes(login, statement, after.fetchall())
        except Exception as exc:
            if begin and (conn.broken or conn.closed):
                return lost(login, statement, exc)
            return self._failed(statement, exc, started)
        schema_changed = (keyword in DDL_KEYWORDS and keyword != "TRUNCATE") or (
            keyword == "SELECT" and not is_query)  # SELECT ... INTO
        made = (team_made_writes(conn, self.names.world, self.names.roles.values(), statement,
                                 writes) if commit and writes and not schema_changed else ())
        return StatementResult(
            sql=statement,
            columns=columns,
            rows=tuple(rows),
            rowcount=rowcount,
            truncated=truncated,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            writes=writes if not schema_changed else (),
            schema_changed=schema_changed,
            reads=reads,
            made_writes=made,
        )

    @staticmethod
    def _exchange(conn: psycopg.Connection[Any], commit: bool) -> AbstractContextManager[Any]:
        """A pipeline when the statement's transaction ends in it. A transaction left open
        (held by the role, a probe's) is not pipelined: the server's idle-in-transaction
        limit is not armed again after the flush psycopg may send once the pipeline is
        synced, so a held transaction a player walked away from would never be ended."""
        return conn.pipeline() if commit else nullcontext()

    def _open(self, login: Login) -> psycopg.Cursor[Any]:
        """In a pipeline: BEGIN, then the limits (`_LIMITS`, as
        `set_config(..., true)`) and the counts before the statement, in one statement: each
        message costs psycopg a cursor and the server a round of its protocol."""
        conn = login.conn
        conn.execute(b"BEGIN")
        counts, values = self._counts(login)
        return conn.execute(f"WITH limits AS MATERIALIZED ({_LIMITS}) "
                            f"SELECT counts.* FROM limits, ({counts}) AS counts",
                            [*self._limits(login), *values])

    def _limits(self, login: Login) -> list[str]:
        """A transaction's limits for this login (`_LIMITS`' values): its role, search_path,
        statement_timeout, lock_timeout and idle_in_transaction_session_timeout."""
        ms = int(self.time_limit_s * 1000)
        schemas = quoted(self.names.world)
        if login.role == self.names.checker:
            schemas = f"{quoted(self.names.compat)}, {schemas}"
        return [login.role, schemas, str(ms), str(min(ms, LOCK_TIMEOUT_MS)),
                str(self.idle_timeout_ms), "off" if login.role == self.names.checker else "on"]

    def _close(self, login: Login, *, commit: bool) -> psycopg.Cursor[Any]:
        """In a pipeline: the counts after the statement; `commit`: COMMIT first (the
        transaction's counts are the backend's until it next goes idle, after the pipeline),
        then the counts with the advisory locks a player took released (as
        `end_transaction`)."""
        conn = login.conn
        counts, values = self._counts()
        if not commit:
            return conn.execute(counts, values)
        conn.execute(b"COMMIT")  # a trigger deferred to it writes now: counted after it
        return conn.execute(f"SELECT counts.* FROM (SELECT pg_catalog.pg_advisory_unlock_all()) "
                            f"AS unlocked, ({counts}) AS counts", values)

    def _counts(self, login: Login | None = None) -> tuple[str, list[Any]]:
        """The counts' query (`counts_by_oid`) and its values; by the schema's name when the
        catalogs changed since the world's tables were last read (`COUNTS_BY_NAME`): then
        `login` (the counts before a statement) notes it, for `_counted` to keep them."""
        tables = self._tables
        if tables is None or tables[0] != self.catalog_writes:
            if login is not None:
                login.found_at = self.catalog_writes
            return COUNTS_BY_NAME, [self.names.world]
        return tables[1], []

    def _counted(self, login: Login, found: Sequence[Row]) -> None:
        login.counts, login.scans = tallies(found)
        if login.found_at is not None:  # the tables were found by the schema's name
            query = counts_by_oid(found)
            with self._lock:
                self._tables = (login.found_at, query)
            login.found_at = None

    def _writes(self, login: Login, statement: str, found: Sequence[Row],
                ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The world's tables this statement wrote: rows it changed (triggers included, as
        the server counts them) and the table a plain DML names (0 rows too); and the tables
        it read (scanned, a view's tables included), lower case as SQLite's store gives them.
        `found`: the counts after it (the login's are from before)."""
        counts, scans = tallies(found)
        catalog = counts.pop("", 0)
        if catalog != login.counts.get("", 0):
            with self._lock:
                self.catalog_writes += 1  # and the world's tables are found by name again
        writes = sorted(name for name, n in counts.items() if n != login.counts.get(name, 0))
        counts[""] = catalog
        reads = tuple(sorted(name.lower() for name, n in scans.items()
                             if n != login.scans.get(name, 0)))
        login.counts = counts
        login.scans = scans
        target = pgsql.dml_target(statement)
        if target is not None and target not in writes:
            writes.insert(0, target)
        return tuple(writes), reads

    def _fetch(self, cursor: psycopg.Cursor[Any]) -> tuple[list[Row], bool]:
        """At most row_cap rows (and MAX_RESULT_BYTES of them); True if more were left.
        Fetched in batches, never more than one row past the cap from the server."""
        return capped_rows(_batched(cursor, self.row_cap + 1), self.row_cap)

    def _failed(self, statement: str, exc: BaseException, started: float) -> StatementResult:
        kind, message = self._classify(exc, started)
        return StatementResult(sql=statement, elapsed_ms=(time.perf_counter() - started) * 1000,
                               error=message, error_kind=kind, kept_in=kept_in(exc))

    def _classify(self, exc: BaseException, started: float) -> tuple[ErrorKind, str]:
        """(error_kind, one line) from the server's SQLSTATE (failures.py)."""
        return classify(exc, time.perf_counter() - started, cancelled=self._cancel.is_set(),
                        time_limit_s=self.time_limit_s)

    def _apply_rights(self) -> None:
        """GRANT each role its rights on the world's tables as they are now.

        Tables of the world as first built are guarded by the role's rights (also when a
        role dropped one and made it again); tables made during play are open to all roles.
        """
        grant_rights(self._admin, self.names, list(self._roles.values()))
        unblind(self._admin, self.names.world)


def _declare(query: str) -> str:
    """The cursor a query's rows come through (psycopg's ServerCursor says the same)."""
    return f"DECLARE {_ROWS} NO SCROLL CURSOR FOR {query}"


def _batched(cursor: psycopg.Cursor[Any], most: int) -> Iterator[Row]:
    """The cursor's rows, `most` at most, fetched 200 at a time."""
    given = 0
    while given < most:
        batch = cursor.fetchmany(min(200, most - given))
        if not batch:
            return
        given += len(batch)
        yield from batch


def describe_world(dsn: str, world_sql: str) -> list[TableInfo]:
    """The tables and views `world_sql` builds on this server, as `tables()` describes them:
    for a briefing's cheat-sheet before any session exists (a world built and dropped)."""
    store = PostgresStore.create(dsn, world_sql, ())
    try:
        return store.tables()
    finally:
        store.drop()
