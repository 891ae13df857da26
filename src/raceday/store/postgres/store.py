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
  statement_timeout = 0` is refused by the server), after a first-keyword allow-list.
  Every statement is its own transaction, opened by raceday with its limits set LOCAL
  (role, search_path, statement_timeout, lock_timeout), so nothing a player changed with
  `set_config` outlives it; a client-side watchdog cancels a statement that ran past its
  time anyway. Session advisory locks are released after each statement.
- Rows come through a server-side cursor (`DECLARE`), `row_cap + 1` at most.
- raceday's own state is in a schema no player role has USAGE on.

psycopg is imported lazily: SQLite users never load it.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from raceday.errors import ExerciseError
from raceday.store.postgres import pgsql
from raceday.store.protocol import RoleRights, StoreKind
from raceday.store.results import ColumnInfo, ForeignKeyInfo, Row, StatementResult, TableInfo
from raceday.store.sqlite_store import (
    MAX_ERROR_CHARS,
    MAX_RESULT_BYTES,
    MAX_STATEMENTS,
    MAX_SUBMISSION_CHARS,
    StoreError,
)

if TYPE_CHECKING:
    import psycopg

WORLD_TIME_LIMIT_MS = 30_000
"""How long the exercise's world script may run while it is built."""
LOCK_TIMEOUT_MS = 1_000
"""How long a player's statement waits for a lock another connection holds."""
IDLE_TIMEOUT_MS = 30_000
"""A transaction left open this long is ended by the server (belt and braces)."""
WATCHDOG_GRACE_S = 0.5
"""How long past its time limit a statement runs before raceday cancels it from the client."""

# First words a player's statement may start with. Anything else (SET, RESET, BEGIN, COMMIT,
# COPY, LISTEN, NOTIFY, LOAD, VACUUM, ALTER SYSTEM via ALTER, DISCARD, ...) is refused
# before it is sent; the server's privileges are the second line.
ALLOWED_KEYWORDS = frozenset({
    "SELECT", "WITH", "VALUES", "TABLE", "INSERT", "UPDATE", "DELETE", "MERGE", "EXPLAIN",
    "SHOW", "CREATE", "ALTER", "DROP", "COMMENT", "TRUNCATE", "DO", "CALL",
})
# After CREATE / ALTER / DROP, the kinds of object a player may touch.
ALLOWED_OBJECTS = frozenset({
    "TABLE", "INDEX", "VIEW", "FUNCTION", "PROCEDURE", "TRIGGER", "SEQUENCE", "TYPE", "DOMAIN",
    "UNIQUE", "OR", "TEMP", "TEMPORARY", "UNLOGGED", "MATERIALIZED", "RECURSIVE", "CONSTRAINT",
    "AGGREGATE", "RULE", "POLICY", "STATISTICS",
})
DDL_KEYWORDS = frozenset({"CREATE", "ALTER", "DROP", "COMMENT", "TRUNCATE"})

_REFUSED_WORDS = {
    "SET": "SET is not allowed here (raceday sets the session's limits itself)",
    "RESET": "RESET is not allowed here (raceday sets the session's limits itself)",
    "BEGIN": "transactions are raceday's: every statement is its own transaction",
    "START": "transactions are raceday's: every statement is its own transaction",
    "COMMIT": "transactions are raceday's: every statement is its own transaction",
    "END": "transactions are raceday's: every statement is its own transaction",
    "ROLLBACK": "transactions are raceday's: every statement is its own transaction",
    "ABORT": "transactions are raceday's: every statement is its own transaction",
    "SAVEPOINT": "transactions are raceday's: every statement is its own transaction",
    "RELEASE": "transactions are raceday's: every statement is its own transaction",
    "PREPARE": "transactions and prepared statements are raceday's",
    "COPY": "COPY reads and writes files and programs: not allowed here",
    "LISTEN": "LISTEN, NOTIFY and UNLISTEN are raceday's own channel: not allowed here",
    "NOTIFY": "LISTEN, NOTIFY and UNLISTEN are raceday's own channel: not allowed here",
    "UNLISTEN": "LISTEN, NOTIFY and UNLISTEN are raceday's own channel: not allowed here",
}

_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
_CODE = frozenset({"DO", "CALL"})  # may run DDL inside
ISOLATION_LEVELS = ("read committed", "repeatable read", "serializable")
# Rows written per world table by this backend so far (pending statistics, not per transaction).
_COUNTS = ("SELECT relname, n_tup_ins + n_tup_upd + n_tup_del, "
           "coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_catalog.pg_stat_xact_user_tables "
           "WHERE schemaname = %s")
_BEGIN_STATEMENTS = 6
"""How many statements `_begin_sql` gives (BEGIN and five SET LOCAL)."""
_IDENT = re.compile(r"[^a-z0-9_]+")


class _Names:
    """The PostgreSQL names of one session: schemas and roles, all prefixed `rd_<id>_`."""

    def __init__(self, session: str, role_ids: Sequence[str]) -> None:
        self.session = session
        prefix = f"rd_{session}_"
        self.world = prefix + "world"
        self.state = prefix + "state"
        self.compat = prefix + "compat"
        self.checker = prefix + "check"
        self.world_code = prefix + "worldcode"
        self.roles: dict[str, str] = {}
        used: set[str] = {self.checker}
        for role_id in role_ids:
            slug = _IDENT.sub("_", role_id.lower()).strip("_")[:40] or "role"
            name, n = prefix + slug, 1
            while name in used:
                n += 1
                name = f"{prefix}{slug}_{n}"
            used.add(name)
            self.roles[role_id] = name

    @staticmethod
    def login(role: str) -> str:
        return role + "_login"

    def owner(self, index: int) -> str:
        return f"rd_{self.session}_own{index}"

    def all_roles(self) -> list[str]:
        return [*self.roles.values(), self.checker]


@dataclass
class _Login:
    conn: psycopg.Connection[Any]
    role: str  # the NOLOGIN role the login acts as
    lock: threading.Lock = field(default_factory=threading.Lock)
    """One statement at a time on this connection; other roles' statements run beside it."""
    held: str | None = None
    """The isolation level of a transaction the role holds open (`begin`), or None."""
    counts: dict[str, int] = field(default_factory=dict)
    """Rows this connection had written per world table (the server's count), before the
    statement now running: what it wrote is the difference."""
    scans: dict[str, int] = field(default_factory=dict)
    """Scans of each world table (sequential and index) before the statement: what it read."""


class PostgresStore:
    """A world schema in PostgreSQL and the roles that play in it. Build with `create`."""

    backend: StoreKind = "postgresql"

    def __init__(
        self,
        dsn: str,
        session: str,
        roles: Sequence[RoleRights],
        *,
        row_cap: int = 1000,
        time_limit_s: float = 2.0,
        _passwords: Mapping[str, str] | None = None,
    ) -> None:
        self.dsn = dsn
        self.session = session
        self.row_cap = row_cap
        self.time_limit_s = time_limit_s
        self.idle_timeout_ms = IDLE_TIMEOUT_MS
        self._roles = {role.id: role for role in roles}
        self.names = _Names(session, list(self._roles))
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._running: set[psycopg.Connection[Any]] = set()
        self._closed = False
        self._logins: dict[str, _Login] = {}
        self._checker: _Login | None = None
        self._admin = _connect(dsn)
        try:
            self._admin.execute(f"SET search_path = {_q(self.names.world)}")
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
        names = _Names(session, [r.id for r in roles])
        passwords = {_Names.login(role): secrets.token_hex(16) for role in names.all_roles()}
        admin = _connect(dsn)
        taken = admin.execute(
            "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname LIKE %(p)s UNION ALL "
            "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname LIKE %(p)s",
            {"p": f"rd\\_{session}\\_%"}).fetchone()
        if taken is not None:
            admin.close()
            raise StoreError(f"a raceday world {session!r} already exists on this server")
        try:
            _build(admin, names, world_sql, roles, passwords)
        except BaseException:
            _drop(admin, session)
            admin.close()
            raise
        admin.close()
        return cls(dsn, session, roles, row_cap=row_cap, time_limit_s=time_limit_s, _passwords=passwords)

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

    def _new_passwords(self) -> dict[str, str]:
        """Give every login of the session a fresh password (they live in memory only)."""
        found = self._admin.execute(
            "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = %s", [self.names.world]
        ).fetchone()
        if found is None:
            raise StoreError(f"no raceday world {self.session!r} in this database")
        passwords: dict[str, str] = {}
        for role in self.names.all_roles():
            login = _Names.login(role)
            passwords[login] = secrets.token_hex(16)
            self._admin.execute(f"ALTER ROLE {_q(login)} PASSWORD {_lit(passwords[login])}")
        return passwords

    def fork(self, seed_sql: str, renumber: str = "") -> tuple[PostgresStore, list[str]]:
        """A new world: this one's schema as the team left it, with the exercise's seed rows.

        What the replay needs (store/replay_world.py does it for SQLite): the team's tables,
        constraints, indexes, triggers and functions, holding the rows of the world as the
        exercise built it; tables the team added keep the rows they hold now. Rows the team's
        schema refuses are warnings. Objects keep their owners (mapped to the new session's
        roles), so a function acts for the same role as before. Needs pg_dump.

        `renumber` is the exercise's trusted SQL run on the seed rows (foreign keys off, as
        on SQLite) before they are copied: the shifted race's other plan numbers.
        """
        with self._call():
            new = secrets.token_hex(4)
            names = _Names(new, list(self._roles))
            old_prefix, new_prefix = f"rd_{self.session}_", f"rd_{new}_"
            pre = _dump(self.dsn, self.names.world, "pre-data").replace(old_prefix, new_prefix)
            post = _dump(self.dsn, self.names.world, "post-data").replace(old_prefix, new_prefix)
            original = [str(r[0]) for r in self._admin.execute(
                f"SELECT name FROM {_q(self.names.state)}.world_tables").fetchall()]
            owners = self._admin.execute(
                "SELECT r.rolname, ARRAY(SELECT m.rolname::text FROM pg_catalog.pg_auth_members a "
                "JOIN pg_catalog.pg_roles m ON m.oid = a.member WHERE a.roleid = r.oid) "
                "FROM pg_catalog.pg_roles r WHERE r.rolname LIKE %s",
                [f"rd\\_{self.session}\\_own%"]).fetchall()
            passwords = {_Names.login(role): secrets.token_hex(16) for role in names.all_roles()}
            admin = _connect(self.dsn)
            warnings: list[str] = []
            try:
                _make_roles(admin, names, passwords)
                me = _q(_current_user(admin))
                made = [names.world_code]
                for old_owner, members in owners:
                    made.append(str(old_owner).replace(old_prefix, new_prefix, 1))
                    mapped = [_q(m.replace(old_prefix, new_prefix, 1)) for m in members
                              if m.startswith(old_prefix)]
                    admin.execute(f"CREATE ROLE {_q(made[-1])} NOLOGIN")
                    if mapped:
                        admin.execute(f"GRANT {_q(made[-1])} TO {', '.join(mapped)}")
                admin.execute(f"CREATE ROLE {_q(names.world_code)} NOLOGIN")
                for role in made:
                    admin.execute(f"GRANT {_q(role)} TO {me}")
                for schema in (names.world, names.state, names.compat):
                    admin.execute(f"CREATE SCHEMA {_q(schema)}")
                for role in made:  # owners must be able to create in the schema they own in
                    admin.execute(f"GRANT USAGE, CREATE ON SCHEMA {_q(names.world)} TO {_q(role)}")
                admin.execute(pre.replace(f"CREATE SCHEMA {names.world};",
                                          f"CREATE SCHEMA IF NOT EXISTS {names.world};"))
                warnings += _load_seed(admin, names, seed_sql, self.names.world, renumber)
                for statement in pgsql.split(post):
                    try:
                        admin.execute(_sql(statement))
                    except Exception as exc:
                        what = " ".join(statement.split())[:80]
                        warnings.append(f"{what} could not be rebuilt ({_message(exc)})")
                admin.execute(f"CREATE TABLE {_q(names.state)}.world_tables "
                              "(name TEXT PRIMARY KEY, kind TEXT NOT NULL DEFAULT '')")
                for name in original:
                    admin.execute(f"INSERT INTO {_q(names.state)}.world_tables (name) VALUES (%s)", [name])
                _schema_rights(admin, names, list(self._roles.values()))
                _grant_rights(admin, names, list(self._roles.values()))
            except BaseException:
                _drop(admin, new)
                admin.close()
                raise
            admin.close()
        store = PostgresStore(self.dsn, new, list(self._roles.values()), row_cap=self.row_cap,
                              time_limit_s=self.time_limit_s, _passwords=passwords)
        return store, warnings

    def __enter__(self) -> PostgresStore:
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

        Each statement is its own transaction, unless the role holds one open (`begin`):
        then they run in it, and an error ends it (rolled back). Roles run side by side:
        one role's statement waiting for another's lock does not stop the rest.
        Never raises for anything in `sql` or `params`; raises KeyError for an unknown role.
        """
        login = self._role_login(role)
        with login.lock:
            refusal = _check_text(sql)
            if refusal is not None:
                return [refusal]
            statements = pgsql.split(sql)
            if len(statements) > MAX_STATEMENTS:
                return [_error(sql[:200], f"submission has {len(statements):,} statements; the limit "
                                          f"is {MAX_STATEMENTS:,} (nothing was run)")]
            results: list[StatementResult] = []
            for statement in statements:
                held = login.held is not None
                try:
                    if not held:
                        self._begin(login)
                except Exception as exc:
                    results.append(_lost(login, statement, exc))
                    break
                # a statement of its own transaction commits in the exchange that reads
                # what it wrote (one round trip fewer for every statement of the night)
                result = self._run(login, statement, params, commit=not held)
                if login.conn.broken or login.conn.closed:
                    results.append(_lost(login, statement, None))
                    break
                if held and not result.ok:
                    _end(login.conn, "ROLLBACK")
                    login.held = None
                    result = replace(result, error=f"{result.error} (the transaction was rolled back)")
                elif not held and result.ok:
                    pass  # committed by _run; a refused COMMIT (a deferred constraint, a
                    # serialization failure) is its failed result, rolled back below
                elif not held:
                    _end(login.conn, "ROLLBACK")
                if result.ok and (result.schema_changed or pgsql.first_keyword(statement) in _CODE):
                    with self._call():
                        self._apply_rights()  # a table made again under a world table's name
                results.append(result)
                if not result.ok:
                    break
            return results

    def begin(self, role: str, isolation: str | None = "read committed") -> StatementResult:
        """Hold a transaction open for `role` at an isolation level (the isolation lab).

        The role's statements then run in it until `commit` or `rollback`, or an error.
        The server ends it if it stays idle (idle_in_transaction_session_timeout).
        """
        level = " ".join((isolation or "read committed").lower().split())
        sql = f"BEGIN ISOLATION LEVEL {level.upper()}"
        if level not in ISOLATION_LEVELS:
            return _error(sql, f"isolation level {isolation!r} is not one of PostgreSQL's "
                               f"{', '.join(ISOLATION_LEVELS)}")
        login = self._role_login(role)
        with login.lock:
            if login.held is not None:
                return _error(sql, f"{role} already holds a transaction ({login.held})")
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
                return _error(word, f"{role} holds no transaction")
            login.held = None
            started = time.perf_counter()
            try:
                with self._watch(login.conn):
                    _end(login.conn, word)
            except Exception as exc:
                if login.conn.closed or login.conn.broken:
                    return _lost(login, word, exc)
                _end(login.conn, "ROLLBACK")
                return self._failed(word, exc, started)
            return StatementResult(sql=word, elapsed_ms=(time.perf_counter() - started) * 1000)

    def probe(
        self, role: str, statements: Sequence[str], params: Mapping[str, Any] | None = None
    ) -> list[StatementResult]:
        """Run statements as `role` in one transaction and roll it back (not while the role
        holds one: then the probe would end it)."""
        login = self._role_login(role)
        with login.lock:
            if login.held is not None:
                return [_error(statements[0] if statements else "", f"{role} holds a transaction: "
                               "commit or roll it back first")]
            results: list[StatementResult] = []
            self._begin(login)
            try:
                for sql in statements:
                    refusal = _check_text(sql)
                    if refusal is not None:
                        results.append(refusal)
                        return results
                    for statement in pgsql.split(sql):
                        result = self._run(login, statement, params)
                        results.append(result)
                        if not result.ok:
                            return results
                return results
            finally:
                if not (login.conn.closed or login.conn.broken):
                    _end(login.conn, "ROLLBACK")

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
        with self._call():
            checker = self._checker_login()
            started = time.perf_counter()
            try:
                query, values = pgsql.bind(sql, params)
            except pgsql.MissingParameter as exc:
                raise StoreError(f"no value was given for parameter :{exc.name}") from exc
            # One round trip, where it was three (BEGIN with the limits, the check,
            # ROLLBACK): a night on PostgreSQL asks about ten thousand checks. The three go
            # in one message, the check's values bound by psycopg on this side (the check is
            # the exercise's SQL, never a player's); the transaction is rolled back as before,
            # so nothing a function the check calls sets outlives it.
            from raceday.store.postgres import driver

            batch = (f"{self._begin_sql(checker, read_only=True)};\n{query}\n;"
                     " ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()")
            try:
                with self._watch(checker.conn):
                    cur = driver.ClientCursor(checker.conn)
                    cur.execute(batch, values)
                    for _ in range(_BEGIN_STATEMENTS):  # to the check's own result
                        cur.nextset()
                    columns = tuple(c.name for c in cur.description or ())
                    rows = [tuple(r) for r in cur.fetchall()] if columns else []
            except Exception as exc:
                _end(checker.conn, "ROLLBACK")
                kind, message = self._classify(exc, started)
                raise StoreError(message, kind) from exc
            return columns, rows

    # -- the schema -----------------------------------------------------------------------

    def tables(self) -> list[TableInfo]:
        """Tables and views of the world with columns, primary keys, foreign keys, triggers."""
        with self._call():
            return _describe(self._admin, self.names.world)

    def backup_to(self, path: Path) -> None:
        raise StoreError("a PostgreSQL world cannot be copied to a file (the replay needs SQLite for now)")

    def close(self) -> None:
        """Close every connection; the world schema and its roles stay (see `drop`)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for login in [*self._logins.values(), *([self._checker] if self._checker else [])]:
                login.conn.close()
            self._logins.clear()
            self._checker = None
            self._admin.close()

    def drop(self) -> None:
        """Remove the session's schemas and roles from the server, then close."""
        self.close()
        drop_world(self.dsn, self.session)

    @property
    def role_ids(self) -> tuple[str, ...]:
        return tuple(self._roles)

    # -- internals ------------------------------------------------------------------------

    @contextmanager
    def _call(self) -> Iterator[None]:
        with self._lock:
            if self._closed:
                raise StoreError("the world store is closed")
            self._cancel.clear()
            yield

    def _role_login(self, role_id: str) -> _Login:
        """The role's connection, opened on first use (under the store's lock)."""
        with self._call():
            return self._login(role_id)

    def _login(self, role_id: str) -> _Login:
        login = self._logins.get(role_id)
        if login is not None and (login.conn.closed or login.conn.broken):
            login = None  # the server ended it (a transaction left idle, a restart): log in again
        if login is None:
            if role_id not in self._roles:
                raise KeyError(f"unknown role {role_id!r}")
            login = self._connect_login(self.names.roles[role_id])
            self._logins[role_id] = login
        return login

    def _checker_login(self) -> _Login:
        if self._checker is not None and (self._checker.conn.closed or self._checker.conn.broken):
            self._checker = None
        if self._checker is None:
            self._checker = self._connect_login(self.names.checker)
        return self._checker

    def _connect_login(self, role: str) -> _Login:
        login = _Names.login(role)
        try:
            conn = _connect(self.dsn, user=login, password=self._passwords[login])
        except StoreError as exc:
            raise StoreError(
                f"cannot log in as {login}: {exc} (raceday's roles log in with a password: the "
                "server must accept password logins from here, e.g. host=127.0.0.1 in the DSN)"
            ) from exc
        return _Login(conn, role)

    def _begin_sql(self, login: _Login, *, read_only: bool = False,
                   isolation: str | None = None) -> str:
        """BEGIN and the transaction's limits, set LOCAL: _BEGIN_STATEMENTS statements."""
        ms = int(self.time_limit_s * 1000)
        schemas = _q(self.names.world)
        if login.role == self.names.checker:
            schemas = f"{_q(self.names.compat)}, {schemas}"
        return (f"BEGIN{' READ ONLY' if read_only else ''}"
                f"{' ISOLATION LEVEL ' + isolation.upper() if isolation else ''}; "
                f"SET LOCAL ROLE {_q(login.role)}; "
                f"SET LOCAL search_path = {schemas}; SET LOCAL statement_timeout = {ms}; "
                f"SET LOCAL lock_timeout = {min(ms, LOCK_TIMEOUT_MS)}; "
                f"SET LOCAL idle_in_transaction_session_timeout = {self.idle_timeout_ms}")

    def _begin(self, login: _Login, *, read_only: bool = False, isolation: str | None = None) -> None:
        """Open raceday's transaction for one statement, with every limit set LOCAL."""
        cur = login.conn.execute(
            self._begin_sql(login, read_only=read_only, isolation=isolation) + "; "
            + _COUNTS.replace("%s", _lit(self.names.world))
        )
        while cur.nextset():
            pass
        found = cur.fetchall()
        login.counts = {str(r[0]): int(r[1]) for r in found}
        login.scans = {str(r[0]): int(r[2]) for r in found}

    @contextmanager
    def _watch(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """Cancel from the client if the server's own timeout did not stop the statement."""
        timer = threading.Timer(self.time_limit_s + WATCHDOG_GRACE_S, conn.cancel_safe)
        timer.daemon = True
        self._running.add(conn)
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            self._running.discard(conn)

    def _run(self, login: _Login, statement: str, params: Mapping[str, Any] | None,
             *, commit: bool = False) -> StatementResult:
        """Run one statement in the open transaction; `commit`: and commit it, in the same
        exchange as reading what it wrote (a refused COMMIT is the statement's error)."""
        started = time.perf_counter()
        keyword = pgsql.first_keyword(statement)
        refusal = _refusal(statement, keyword)
        if refusal is not None:
            return StatementResult(sql=statement, error="refused: " + refusal, error_kind="refused")
        try:
            query, values = pgsql.bind(statement, params)
        except pgsql.MissingParameter as exc:
            return _error(statement, f"no value was given for parameter :{exc.name}")
        conn = login.conn
        from raceday.store.postgres import driver  # loaded when the store connected
        try:
            with self._watch(conn):
                if pgsql.is_query(statement):
                    with conn.cursor(name="raceday_rows") as server:
                        server.execute(query, values)
                        columns = tuple(c.name for c in server.description or ())
                        rows, truncated = self._fetch(server)
                    rowcount = None
                else:
                    cur = driver.ExtendedCursor(conn)
                    cur.execute(query, values)
                    columns = tuple(c.name for c in cur.description or ())
                    rows, truncated = self._fetch(cur) if columns else ([], False)
                    is_dml = keyword in _DML or (
                        keyword == "WITH" and bool(_DML & set(pgsql.words(statement))))
                    rowcount = cur.rowcount if is_dml and cur.rowcount >= 0 else None
                    cur.close()
            writes, reads = self._writes(login, statement, commit=commit)
        except Exception as exc:
            return self._failed(statement, exc, started)
        schema_changed = (keyword in DDL_KEYWORDS and keyword != "TRUNCATE") or (
            keyword == "SELECT" and not pgsql.is_query(statement))  # SELECT ... INTO
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
        )

    def _writes(self, login: _Login, statement: str, *, commit: bool = False,
                ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The world's tables this statement wrote: rows it changed (triggers included, as
        the server counts them) and the table a plain DML names (0 rows too); and the tables
        it read (scanned, a view's tables included), lower case as SQLite's store gives them.
        `commit`: then end the transaction as `_end` does, in the same exchange."""
        if commit:
            cur = login.conn.execute(_sql(
                _COUNTS.replace("%s", _lit(self.names.world))
                + "; COMMIT; SELECT pg_catalog.pg_advisory_unlock_all()"))
            found = cur.fetchall()
            while cur.nextset():  # every result read: the COMMIT's error, if any, raised
                pass
        else:
            found = login.conn.execute(_COUNTS, [self.names.world]).fetchall()
        counts = {str(r[0]): int(r[1]) for r in found}
        scans = {str(r[0]): int(r[2]) for r in found}
        writes = sorted(name for name, n in counts.items() if n != login.counts.get(name, 0))
        reads = tuple(sorted(name.lower() for name, n in scans.items()
                             if n != login.scans.get(name, 0)))
        login.counts = counts
        login.scans = scans
        target = pgsql.dml_target(statement)
        if target is not None and target not in writes:
            writes.insert(0, target)
        return tuple(writes), reads

    def _fetch(self, cursor: psycopg.Cursor[Any]) -> tuple[list[Row], bool]:
        """At most row_cap rows (and MAX_RESULT_BYTES of them); True if more were left."""
        rows: list[Row] = []
        size = 0
        while True:
            batch = cursor.fetchmany(min(200, self.row_cap + 1 - len(rows)))
            for row in batch:
                if len(rows) >= self.row_cap or size > MAX_RESULT_BYTES:
                    return rows, True
                rows.append(tuple(row))
                size += sum(len(v) if isinstance(v, str | bytes) else 8 for v in row)
            if not batch or len(rows) > self.row_cap:
                return rows, False
            if len(rows) == self.row_cap:
                more = cursor.fetchmany(1)
                return rows, bool(more)

    def _failed(self, statement: str, exc: BaseException, started: float) -> StatementResult:
        kind, message = self._classify(exc, started)
        return StatementResult(sql=statement, elapsed_ms=(time.perf_counter() - started) * 1000,
                               error=message, error_kind=kind)

    def _classify(self, exc: BaseException, started: float) -> tuple[str, str]:
        """(error_kind, one line) from the server's SQLSTATE."""
        state = getattr(exc, "sqlstate", None) or ""
        message = _message(exc)
        seconds = time.perf_counter() - started
        if state == "57014":  # query_canceled: statement_timeout, the watchdog or Escape
            if self._cancel.is_set():
                return "timeout", f"statement cancelled after {seconds:.1f} s"
            return "timeout", f"statement interrupted after {self.time_limit_s:.1f} s (time limit)"
        if state == "55P03":
            return "timeout", f"waited too long for a lock another connection holds ({message})"
        if state in ("42501", "25006") or state.startswith("28"):
            return "refused", "refused: " + message
        if state.startswith("23") or state == "P0001":
            return "constraint", message
        if state in ("40001", "40P01"):
            return "error", f"{message} (another transaction got there first: run it again)"
        if state == "42601" or state == "42P02":
            return "syntax", message
        return "error", message

    def _apply_rights(self) -> None:
        """GRANT each role its rights on the world's tables as they are now.

        Tables of the world as first built are guarded by the role's rights (also when a
        role dropped one and made it again); tables made during play are open to all roles.
        """
        _grant_rights(self._admin, self.names, list(self._roles.values()))


# -- building -----------------------------------------------------------------------------


def _build(
    admin: psycopg.Connection[Any],
    names: _Names,
    world_sql: str,
    roles: Sequence[RoleRights],
    passwords: Mapping[str, str],
) -> None:
    for schema in (names.world, names.state, names.compat):
        admin.execute(f"CREATE SCHEMA {_q(schema)}")
    _make_roles(admin, names, passwords)
    admin.execute(f"SET search_path = {_q(names.world)}")
    admin.execute(f"SET statement_timeout = {WORLD_TIME_LIMIT_MS}")
    line = 1
    try:
        for piece in _pieces(world_sql):
            line = piece[0]
            admin.execute(_sql(piece[1]))
    except Exception as exc:
        state = getattr(exc, "sqlstate", "")
        why = (f"took longer than {WORLD_TIME_LIMIT_MS / 1000:g} s to build (a runaway query?)"
               if state == "57014" else _message(exc))
        raise ExerciseError([f"world SQL failed: line {line}: {why}"]) from exc
    admin.execute("RESET statement_timeout")
    admin.execute(f"CREATE TABLE {_q(names.state)}.world_tables (name TEXT PRIMARY KEY, kind TEXT NOT NULL)")
    admin.execute(
        f"INSERT INTO {_q(names.state)}.world_tables (name, kind) "
        "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm')",
        [names.world],
    )
    _schema_rights(admin, names, roles)
    _own_tables(admin, names, roles)
    _world_code(admin, names)
    _grant_rights(admin, names, roles)


def _make_roles(admin: psycopg.Connection[Any], names: _Names, passwords: Mapping[str, str]) -> None:
    """Each exercise role and the checker: a NOLOGIN role, and a login that is its only member."""
    me = _q(_current_user(admin))
    for pg_role in names.all_roles():
        login = _Names.login(pg_role)
        admin.execute(f"CREATE ROLE {_q(pg_role)} NOLOGIN")
        admin.execute(f"CREATE ROLE {_q(login)} LOGIN NOINHERIT PASSWORD {_lit(passwords[login])} "
                      f"IN ROLE {_q(pg_role)}")
        admin.execute(f"GRANT {_q(pg_role)} TO {me}")


def _schema_rights(admin: psycopg.Connection[Any], names: _Names, roles: Sequence[RoleRights]) -> None:
    """Who may use the session's schemas, and what becomes of what roles make during play."""
    _compat(admin, names)
    everyone = ", ".join(_q(r) for r in names.all_roles())
    admin.execute(f"GRANT USAGE ON SCHEMA {_q(names.world)} TO {everyone}")
    admin.execute(f"GRANT USAGE ON SCHEMA {_q(names.compat)} TO {_q(names.checker)}")
    admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {_q(names.compat)} TO {_q(names.checker)}")
    for role in roles:
        pg_role = names.roles[role.id]
        if role.schema:
            admin.execute(f"GRANT CREATE ON SCHEMA {_q(names.world)} TO {_q(pg_role)}")
        # what a role makes during play is open to every role (and the checker may read it)
        for kind, rights in (("TABLES", "ALL"), ("SEQUENCES", "ALL"), ("FUNCTIONS", "EXECUTE"),
                             ("TYPES", "USAGE")):
            admin.execute(f"ALTER DEFAULT PRIVILEGES FOR ROLE {_q(pg_role)} IN SCHEMA "
                          f"{_q(names.world)} GRANT {rights} ON {kind} TO {everyone}")


def _world_code(admin: psycopg.Connection[Any], names: _Names) -> None:
    """The world's own trigger functions act for the world, not for the role that fired them.

    As in SQLite, where the exercise's triggers are trusted: a role that may write `endpoint`
    need not be allowed to write the `audit` table its trigger fills. They become SECURITY
    DEFINER functions of a NOLOGIN role that may write the world's tables and nothing else,
    with a pinned search_path (pg_temp last), so hijacking one reaches no further.
    """
    code, world = _q(names.world_code), _q(names.world)
    admin.execute(f"CREATE ROLE {code} NOLOGIN")
    admin.execute(f"GRANT {code} TO {_q(_current_user(admin))}")
    admin.execute(f"GRANT USAGE, CREATE ON SCHEMA {world} TO {code}")
    functions = admin.execute(
        "SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p WHERE p.pronamespace = "
        "%s::regnamespace AND p.prorettype = 'pg_catalog.trigger'::pg_catalog.regtype", [names.world]
    ).fetchall()
    for (signature,) in functions:
        admin.execute(f"ALTER FUNCTION {signature} SECURITY DEFINER SET search_path = {world}, pg_temp")
        admin.execute(f"ALTER FUNCTION {signature} OWNER TO {code}")


def _dump(dsn: str, schema: str, section: str) -> str:
    """pg_dump's text of one section of a schema: its definitions, no data, no GRANTs."""
    import shutil
    import subprocess

    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise StoreError("copying a PostgreSQL world needs pg_dump (PostgreSQL's client tools)")
    done = subprocess.run(
        [pg_dump, "--dbname", dsn, "--schema-only", "--no-privileges", "--schema", schema,
         f"--section={section}"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise StoreError(f"pg_dump failed: {_one_line(done.stderr)}")
    # psql's own commands (\restrict) are not SQL
    return "\n".join(line for line in done.stdout.splitlines() if not line.startswith("\\"))


def _load_seed(admin: psycopg.Connection[Any], names: _Names, seed_sql: str, live: str,
               renumber: str = "") -> list[str]:
    """Fill the new world's tables: seed rows where the seed has the table, else the live rows.

    `renumber` runs on the seed schema first, its foreign keys dropped (the seed schema is
    thrown away: the new world keeps the team's own constraints)."""
    seed = f"rd_{names.session}_seed"
    warnings: list[str] = []
    admin.execute(f"CREATE SCHEMA {_q(seed)}")
    admin.execute(f"SET search_path = {_q(seed)}")
    try:
        for _line, statement in _pieces(seed_sql):
            admin.execute(_sql(statement))
    except Exception as exc:
        raise ExerciseError([f"world SQL failed: {_message(exc)}"]) from exc
    if renumber.strip():
        _renumber(admin, seed, renumber)
    admin.execute("SET search_path = pg_catalog")

    def tables(schema: str) -> dict[str, list[str]]:
        rows = admin.execute(
            "SELECT c.relname, a.attname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a "
            "ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' "
            "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'p') "
            "ORDER BY c.relname, a.attnum",
            [schema]).fetchall()
        found: dict[str, list[str]] = {}
        for table, column in rows:
            found.setdefault(str(table), []).append(str(column))
        return found

    seeded, now, wanted = tables(seed), tables(live), tables(names.world)
    for table, columns in wanted.items():
        source, have = (seed, seeded[table]) if table in seeded else (live, now.get(table, []))
        common = ", ".join(_q(c) for c in columns if c in have)
        if not common:
            continue
        try:
            admin.execute(f"INSERT INTO {_q(names.world)}.{_q(table)} ({common}) OVERRIDING SYSTEM VALUE "
                          f"SELECT {common} FROM {_q(source)}.{_q(table)}")
        except Exception as exc:
            warnings.append(f"table {table}: the seed rows do not fit the team's schema ({_message(exc)})")
    admin.execute(f"DROP SCHEMA {_q(seed)} CASCADE")
    sequences = admin.execute(
        "SELECT s.oid::regclass::text, t.oid::regclass::text, a.attname FROM pg_catalog.pg_depend d "
        "JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S' "
        "JOIN pg_catalog.pg_class t ON t.oid = d.refobjid "
        "JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid "
        "WHERE s.relnamespace = %s::regnamespace AND d.deptype IN ('a', 'i')", [names.world]).fetchall()
    for sequence, table, column in sequences:
        top = f"(SELECT max({_q(str(column))}) FROM {table})"
        admin.execute(f"SELECT pg_catalog.setval(%s, COALESCE({top}, 0) + 1, false)", [sequence])
    return warnings


def _renumber(admin: psycopg.Connection[Any], seed: str, renumber: str) -> None:
    """Run the exercise's renumbering on the seed rows with no foreign key in the way (what
    SQLite's `PRAGMA foreign_keys=OFF` gives; a non-superuser cannot turn PostgreSQL's off)."""
    keys = admin.execute(
        "SELECT conrelid::regclass::text, conname FROM pg_catalog.pg_constraint "
        "WHERE contype = 'f' AND connamespace = %s::regnamespace", [seed]).fetchall()
    for table, name in keys:
        admin.execute(f"ALTER TABLE {table} DROP CONSTRAINT {_q(str(name))}")
    try:
        for _line, statement in _pieces(renumber):
            admin.execute(_sql(statement))
    except Exception as exc:
        raise ExerciseError([f"replay shifted seed SQL failed: {_message(exc)}"]) from exc


def _pieces(world_sql: str) -> list[tuple[int, str]]:
    """(line, statement) for each statement of a world script."""
    out: list[tuple[int, str]] = []
    for statement in pgsql.split(world_sql):
        offset = world_sql.find(statement)
        out.append((world_sql.count("\n", 0, max(offset, 0)) + 1, statement))
    return out


def _own_tables(admin: psycopg.Connection[Any], names: _Names, roles: Sequence[RoleRights]) -> None:
    """Give each world table an owner role shared by the roles that may change its schema.

    ALTER TABLE ... ADD CONSTRAINT, CREATE INDEX and DROP need ownership in PostgreSQL: a
    role with `schema: true` that may write a table is a member of its owner role. Views stay
    raceday's: a view reads its tables with its owner's rights, which an owner role lacks.
    """
    tables = admin.execute(
        "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relnamespace = %s::regnamespace "
        "AND c.relkind IN ('r', 'p') ORDER BY c.relname", [names.world]
    ).fetchall()
    me = _q(_current_user(admin))
    for index, (table,) in enumerate(tables):
        owners = [names.roles[r.id] for r in roles if r.schema and r.may_write(str(table))]
        if not owners:
            continue
        owner = names.owner(index)
        admin.execute(f"CREATE ROLE {_q(owner)} NOLOGIN")
        admin.execute(f"GRANT {_q(owner)} TO {me}")
        admin.execute(f"GRANT {_q(owner)} TO {', '.join(_q(o) for o in owners)}")
        # to own there, and to run the foreign-key checks PostgreSQL runs as the owner
        admin.execute(f"GRANT USAGE, CREATE ON SCHEMA {_q(names.world)} TO {_q(owner)}")
        admin.execute(f"ALTER TABLE {_q(names.world)}.{_q(str(table))} OWNER TO {_q(owner)}")


def _grant_rights(admin: psycopg.Connection[Any], names: _Names, roles: Sequence[RoleRights]) -> None:
    world = _q(names.world)
    original = {str(r[0]) for r in admin.execute(
        f"SELECT name FROM {_q(names.state)}.world_tables").fetchall()}
    objects = admin.execute(
        "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm', 'S')",
        [names.world],
    ).fetchall()
    everyone = ", ".join(_q(r) for r in names.all_roles())
    for name, kind in objects:
        target = f"{world}.{_q(str(name))}"
        if kind == "S":
            admin.execute(f"GRANT USAGE, SELECT, UPDATE ON SEQUENCE {target} TO {everyone}, "
                          f"{_q(names.world_code)}")
            continue
        admin.execute(f"GRANT ALL ON TABLE {target} TO {_q(names.world_code)}")
        if str(name) not in original:
            admin.execute(f"GRANT ALL ON TABLE {target} TO {everyone}")
            continue
        admin.execute(f"REVOKE ALL ON TABLE {target} FROM {everyone}")
        admin.execute(f"GRANT SELECT ON TABLE {target} TO {_q(names.checker)}")
        for role in roles:
            rights = []
            if role.may_read(str(name)):
                rights.append("SELECT")
            if role.may_write(str(name)):
                rights += ["INSERT", "UPDATE", "DELETE", "TRIGGER", "REFERENCES"]
            if rights:
                admin.execute(f"GRANT {', '.join(rights)} ON TABLE {target} TO {_q(names.roles[role.id])}")


def _compat(admin: psycopg.Connection[Any], names: _Names) -> None:
    """The two SQLite catalog reads the engine's checks make, answered for this world.

    `sqlite_master` and `pragma_table_info(t)` in a schema only the checker can use, first on
    its search path (no player can put an object there to shadow them).
    """
    compat, world = _q(names.compat), names.world.replace("'", "''")
    admin.execute(
        f"CREATE VIEW {compat}.sqlite_master AS "
        "SELECT CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END AS type, "
        "c.relname::text AS name, c.relname::text AS tbl_name, "
        "CASE WHEN c.relkind = 'v' THEN pg_catalog.pg_get_viewdef(c.oid) "
        "ELSE 'CREATE TABLE ' || c.relname END AS sql "
        f"FROM pg_catalog.pg_class c WHERE c.relnamespace = '{world}'::regnamespace "
        "AND c.relkind IN ('r', 'v', 'p', 'm') "
        "UNION ALL SELECT 'trigger', t.tgname::text, c.relname::text, "
        "pg_catalog.pg_get_triggerdef(t.oid) FROM pg_catalog.pg_trigger t "
        f"JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = '{world}'::regnamespace "
        "AND NOT t.tgisinternal"
    )
    admin.execute(
        f"CREATE FUNCTION {compat}.pragma_table_info(t text) RETURNS TABLE "
        "(cid int, name text, type text, \"notnull\" int, dflt_value text, pk int) "
        "LANGUAGE sql STABLE SET search_path = pg_catalog AS $$ "
        "SELECT a.attnum::int - 1, a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), "
        "a.attnotnull::int, pg_catalog.pg_get_expr(d.adbin, d.adrelid), "
        "COALESCE((SELECT k.n FROM pg_catalog.pg_index i, unnest(i.indkey) WITH ORDINALITY k(att, n) "
        "WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.att = a.attnum), 0)::int "
        "FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d "
        "ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
        f"WHERE a.attrelid = (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relnamespace = "
        f"'{world}'::regnamespace AND lower(c.relname) = lower(t)) "
        "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum $$"
    )


def describe_world(dsn: str, world_sql: str) -> list[TableInfo]:
    """The tables and views `world_sql` builds on this server, as `tables()` describes them:
    for a briefing's cheat-sheet before any session exists (a world built and dropped)."""
    store = PostgresStore.create(dsn, world_sql, ())
    try:
        return store.tables()
    finally:
        store.drop()


def drop_world(dsn: str, session: str) -> None:
    """Remove a session's world from the server: its schemas and roles (`rd_<session>_*`)."""
    admin = _connect(dsn)
    try:
        _drop(admin, session)
    finally:
        admin.close()


def _drop(admin: psycopg.Connection[Any], session: str) -> None:
    """Remove a session's schemas and roles; what is already gone is skipped."""
    admin.execute("SET statement_timeout = 0")
    pattern = f"rd\\_{session}\\_%"
    schemas = admin.execute("SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname LIKE %s",
                            [pattern]).fetchall()
    for (schema,) in schemas:
        admin.execute(f"DROP SCHEMA IF EXISTS {_q(str(schema))} CASCADE")
    roles = admin.execute(
        "SELECT rolname, pg_catalog.pg_has_role(current_user, oid, 'MEMBER') FROM pg_catalog.pg_roles "
        "WHERE rolname LIKE %s ORDER BY rolcanlogin DESC, rolname", [pattern]).fetchall()
    for role, member in roles:
        if member:  # a role made but not yet granted to raceday owns nothing
            admin.execute(f"DROP OWNED BY {_q(str(role))} CASCADE")
    for role, _member in roles:
        admin.execute(f"DROP ROLE IF EXISTS {_q(str(role))}")


def _describe(admin: psycopg.Connection[Any], world: str) -> list[TableInfo]:
    rows = admin.execute(
        "SELECT c.oid, c.relname, c.relkind FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm') "
        "ORDER BY c.relname", [world]).fetchall()
    infos: list[TableInfo] = []
    for oid, name, kind in rows:
        columns = admin.execute(
            "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, "
            "EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = a.attrelid "
            "AND i.indisprimary AND a.attnum = ANY (i.indkey)) "
            "FROM pg_catalog.pg_attribute a WHERE a.attrelid = %s AND a.attnum > 0 "
            "AND NOT a.attisdropped ORDER BY a.attnum", [oid]).fetchall()
        triggers = admin.execute(
            "SELECT tgname FROM pg_catalog.pg_trigger WHERE tgrelid = %s AND NOT tgisinternal "
            "ORDER BY tgname", [oid]).fetchall()
        fks = admin.execute(
            "SELECT (SELECT array_agg(a.attname ORDER BY k.n) FROM unnest(con.conkey) "
            "WITH ORDINALITY k(att, n) "
            "JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.att), "
            "f.relname, (SELECT array_agg(a.attname ORDER BY k.n) FROM unnest(con.confkey) WITH ORDINALITY "
            "k(att, n) JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.att) "
            "FROM pg_catalog.pg_constraint con JOIN pg_catalog.pg_class f ON f.oid = con.confrelid "
            "WHERE con.conrelid = %s AND con.contype = 'f' ORDER BY con.conname", [oid]).fetchall()
        if kind in ("v", "m"):
            view = admin.execute("SELECT pg_catalog.pg_get_viewdef(%s::oid)", [oid]).fetchone()
            sql = f"CREATE VIEW {name} AS {view[0] if view else ''}"
        else:
            # PostgreSQL keeps no CREATE text: one is written from the catalog, a line per
            # column and per constraint, so a guard added with ALTER TABLE shows like SQLite's.
            constraints = admin.execute(
                "SELECT conname, pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint "
                "WHERE conrelid = %s ORDER BY contype, conname", [oid]).fetchall()
            lines = [f"    {c[0]} {c[1]}{' NOT NULL' if c[2] else ''}" for c in columns]
            lines += [f"    CONSTRAINT {c[0]} {c[1]}" for c in constraints]
            sql = f"CREATE TABLE {name} (\n" + ",\n".join(lines) + "\n)"
        infos.append(TableInfo(
            name=str(name),
            kind="view" if kind in ("v", "m") else "table",
            columns=tuple(ColumnInfo(str(c[0]), str(c[1]), bool(c[2]), bool(c[3])) for c in columns),
            sql=sql,
            triggers=tuple(str(t[0]) for t in triggers),
            foreign_keys=tuple(ForeignKeyInfo(tuple(f[0]), str(f[1]), tuple(f[2])) for f in fks),
        ))
    return infos


# -- helpers ------------------------------------------------------------------------------


def _connect(dsn: str, user: str | None = None, password: str | None = None) -> psycopg.Connection[Any]:
    try:
        from raceday.store.postgres import driver
    except ImportError as exc:
        raise StoreError("a PostgreSQL world needs psycopg: pip install 'raceday[postgres]'") from exc
    try:
        return driver.connect(dsn, user, password)
    except driver.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL: {_one_line(str(exc))}") from exc


def _current_user(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_user").fetchone()
    return str(row[0]) if row else ""


def _end(conn: psycopg.Connection[Any], word: str) -> None:
    """End raceday's transaction and release any session advisory lock a player took."""
    conn.execute(f"{word}; SELECT pg_catalog.pg_advisory_unlock_all()")


def _sql(text: str) -> Any:
    """Trusted SQL text built by raceday, for psycopg's typed `execute`."""
    return text.encode("utf-8")


def _lit(text: str) -> str:
    """A string literal for utility statements, which take no parameters."""
    return "'" + text.replace("'", "''") + "'"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _refusal(statement: str, keyword: str) -> str | None:
    if keyword in _REFUSED_WORDS:
        return _REFUSED_WORDS[keyword]
    if keyword not in ALLOWED_KEYWORDS:
        return f"{keyword or 'this statement'} is not allowed here"
    if keyword in ("CREATE", "ALTER", "DROP"):
        found = pgsql.words(statement)
        kind = found[1] if len(found) > 1 else ""
        if kind not in ALLOWED_OBJECTS:
            return f"{keyword} {kind} is not allowed here".replace("  ", " ")
    return None


def _lost(login: _Login, statement: str, exc: BaseException | None) -> StatementResult:
    """The connection is gone (the server ended an idle transaction, or restarted): say so;
    the role's next statement logs in again. Anything else is a bug and is raised."""
    if not (login.conn.closed or login.conn.broken):
        assert exc is not None
        raise exc
    ended = " (its open transaction was rolled back)" if login.held else ""
    login.held = None
    why = f": {_message(exc)}" if exc is not None else ""
    return StatementResult(sql=statement, error=f"the connection to PostgreSQL was lost{ended}{why}; "
                           "the next statement reconnects", error_kind="error")


def _message(exc: BaseException) -> str:
    """The server's own sentence (without the LINE/QUERY context), on one line."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    return _one_line(str(primary or exc)) or type(exc).__name__


def _one_line(message: str) -> str:
    line = " ".join(message.split()).strip()
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def _error(sql: str, message: str) -> StatementResult:
    return StatementResult(sql=sql, error=message, error_kind="error")


def _check_text(sql: str) -> StatementResult | None:
    """Refuse text PostgreSQL cannot take, before anything is sent."""
    if len(sql) > MAX_SUBMISSION_CHARS:
        return _error(sql[:200] + "…", f"submission is too long ({len(sql):,} characters; "
                                       f"the limit is {MAX_SUBMISSION_CHARS:,})")
    if "\x00" in sql:
        return StatementResult(sql=sql.replace("\x00", "\\x00"), error="statement contains a NUL character",
                               error_kind="syntax")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        return StatementResult(sql=sql.encode("utf-8", "backslashreplace").decode("utf-8"),
                               error="statement contains text that is not valid UTF-8", error_kind="syntax")
    return None
