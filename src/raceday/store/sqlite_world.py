"""A SQLite world's file and connections, as raceday opens them: the settings every
connection gets, a role connection's limits, the tables raceday keeps in the world, what a
failed write says about the disk, and the world's tables described.

What `WorldStore` (sqlite_store.py) stands on; `describe_world` builds a world in memory for
a briefing's cheat-sheet, with no store.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from raceday.errors import ExerciseError
from raceday.store.authorizer import RESERVED_PREFIX, Authorizer, StatementContext
from raceday.store.base import MAX_ERROR_CHARS, StoreError
from raceday.store.results import ColumnInfo, ForeignKeyInfo, TableInfo
from raceday.store.world import WORLD_TIME_LIMIT, WorldError, build_world

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

LOCK_WAIT_S = 1.0
"""How long a statement waits for SQLite's write lock, as long as PostgreSQL's lock timeout.
The engine runs one statement at a time, so a lock a role holds is only let go by a later
call: the wait is for someone outside the session (a facilitator's sqlite3 shell). While
another role of the session holds a transaction open, the lock is likely its: a statement
then does not wait at all (`_mind_own_locks`)."""
LOCK_WAIT_MS = int(LOCK_WAIT_S * 1000)  # as SQLite's busy_timeout takes it



FOREIGN_KEY_FAILED = "FOREIGN KEY constraint failed"


ForeignKey = tuple[str, str, str, str, str]
"""One foreign key of the world: (table, column, parent table, parent column or '', its ON
DELETE action)."""


def foreign_keys(conn: sqlite3.Connection) -> tuple[ForeignKey, ...]:
    """Every foreign key of the world's own tables (raises sqlite3.Error)."""
    keys: list[ForeignKey] = []
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE ?",
        (f"{RESERVED_PREFIX}%",))]
    for table in tables:
        for src, parent, to, on_delete in conn.execute(
                'SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(?)',
                (table,)):
            keys.append((table, str(src), str(parent), str(to or ""), str(on_delete)))
    return tuple(keys)


def foreign_key_named(keys: Sequence[ForeignKey] | None, written: Sequence[str], *,
                      deleting: bool = False) -> str:
    """SQLite's "FOREIGN KEY constraint failed" names no key: say which it can be, the keys
    (`foreign_keys`; None: unknown) from or to the tables the statement wrote (one, or the
    few it is one of; a DELETE cannot fail on a key that cascades or sets null)."""
    names = {t.lower() for t in written if t}
    found = [f"{table}.{column} -> {parent}" + (f".{to}" if to else "")
             for table, column, parent, to, on_delete in keys or ()
             if not (deleting and on_delete.upper() in ("CASCADE", "SET NULL", "SET DEFAULT"))
             and (table.lower() in names or parent.lower() in names)]
    if not found:
        return FOREIGN_KEY_FAILED
    if len(found) == 1:
        return f"{FOREIGN_KEY_FAILED}: {found[0]}"
    return f"{FOREIGN_KEY_FAILED}: one of {', '.join(found)}"


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
        harden(conn)
        try:
            build_world(conn, world_sql, time_limit_s=time_limit_s)
        except WorldError as exc:
            raise ExerciseError([f"world SQL failed: {one_line(str(exc))}"]) from exc
        return describe_tables(conn)
    finally:
        conn.close()


def describe_tables(conn: sqlite3.Connection) -> list[TableInfo]:
    """Tables and views (not raceday's or SQLite's own) with columns, CREATE text, triggers
    and foreign keys, read with the PRAGMAs sqlite-utils' introspection runs, as it reads
    them (tests/store/test_describe_world.py holds the two side by side): importing
    sqlite-utils took 100 ms, paid by the first play screen of every start."""
    objects = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
    triggers: dict[str, list[str]] = {}
    for name, table in conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"):
        triggers.setdefault(table.lower(), []).append(name)
    infos: list[TableInfo] = []
    for kind, name, sql in sorted(objects, key=lambda o: o[1]):
        if _hidden(name):
            continue
        columns = _columns(conn, name)
        infos.append(TableInfo(
            name=name,
            kind=kind,
            columns=tuple(ColumnInfo(name=c[1], type=c[2] or "", notnull=bool(c[3]),
                                     pk=bool(c[5])) for c in columns),
            sql=sql or "",
            triggers=tuple(sorted(triggers.get(name.lower(), ()))),
            foreign_keys=_foreign_keys(conn, name) if kind == "table" else (),
        ))
    return infos


def _columns(conn: sqlite3.Connection, name: str) -> list[tuple[Any, ...]]:
    """PRAGMA table_info: (cid, name, type, notnull, default, pk) a column."""
    return conn.execute("SELECT * FROM pragma_table_info(?)", (name,)).fetchall()


def _foreign_keys(conn: sqlite3.Connection, name: str) -> tuple[ForeignKeyInfo, ...]:
    """One a constraint (a compound one's columns in their order); a REFERENCES with no
    columns names the other table's primary key, in its declared order, when it has as many
    columns."""
    by_id: dict[int, list[tuple[Any, ...]]] = {}
    for row in conn.execute("SELECT * FROM pragma_foreign_key_list(?)", (name,)):
        by_id.setdefault(row[0], []).append(row)
    keys: list[ForeignKeyInfo] = []
    for ident in sorted(by_id):
        rows = sorted(by_id[ident], key=lambda r: r[1])  # by seq
        other = rows[0][2]
        columns = tuple(r[3] for r in rows)
        others: tuple[Any, ...] = tuple(r[4] for r in rows)
        if all(c is None for c in others):
            pks = tuple(c[1] for c in sorted((c for c in _columns(conn, other) if c[5]),
                                             key=lambda c: c[5])) or ("rowid",)
            if len(pks) == len(columns):
                others = pks
        keys.append(ForeignKeyInfo(columns, other, others))
    return tuple(keys)


def connect_world(path: Path, *, mode: str, cached_statements: int = 128) -> sqlite3.Connection:
    uri = f"{Path(path).resolve().as_uri()}?mode={mode}"
    return sqlite3.connect(
        uri,
        uri=True,
        isolation_level=None,
        timeout=LOCK_WAIT_S,
        check_same_thread=False,
        cached_statements=cached_statements,
    )


def harden(conn: sqlite3.Connection) -> None:
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


def unhurried(conn: sqlite3.Connection) -> None:
    """A replay's world: thrown away once read, so never synced; and played by one thread,
    every role on a connection of this store, so a lock one role holds cannot be let go
    while another waits for it, and nobody else opens the file. Waiting (`LOCK_WAIT_S`)
    could only end in the same "database is locked": it fails at once (a team that never
    commits made the final replay wait 5 s a write, over two minutes in all)."""
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA busy_timeout=0")


def is_full(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)


# SQLite's primary result codes when the machine, not the SQL, stops a read or a write.
MACHINE_CODES = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY,
                            sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB,
                            sqlite3.SQLITE_CORRUPT})


def disk_short(conn: sqlite3.Connection, path: Path, max_bytes: int) -> bool:
    """Did a write stop for the disk (less room left than the world's limit allows), not
    for the world's own size limit?"""
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        free = shutil.disk_usage(path.parent).free
    except (sqlite3.Error, OSError):
        return False
    return bool(free < max_bytes - pages * size)


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


CREATE_OWNER_TABLE = (
    f"CREATE TABLE IF NOT EXISTS {TRIGGER_OWNER_TABLE} (name TEXT PRIMARY KEY, role TEXT NOT NULL)"
)


def record_world(conn: sqlite3.Connection) -> None:
    """Remember the world's tables and views as first built (see WorldNames.original)."""
    conn.execute(f"CREATE TABLE IF NOT EXISTS {WORLD_TABLE} (name TEXT PRIMARY KEY, kind TEXT)")
    conn.execute(
        f"INSERT OR IGNORE INTO {WORLD_TABLE} (name, kind) "
        "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
        f"AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
        f"AND name NOT LIKE '\\{RESERVED_PREFIX}%' ESCAPE '\\'"
    )
    conn.execute(CREATE_OWNER_TABLE)


def _hidden(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("sqlite_") or lowered.startswith(RESERVED_PREFIX)


def one_line(message: str) -> str:
    line = " ".join(message.splitlines()).strip()
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    return line


@dataclass
class RoleConnection:
    """One role's connection to the world, with the authorizer that holds it to its rights."""

    conn: sqlite3.Connection
    auth: Authorizer
    held: str | None = None
    """How the transaction the role holds open began (`begin`: deferred, immediate,
    exclusive), or None: then each statement is its own transaction."""
    verdicts: dict[str, StatementContext] = field(default_factory=dict)
    """What the authorizer recorded when each statement text in the statement cache was
    last prepared (emptied whenever the cache is expired)."""
    wait_ms: int = LOCK_WAIT_MS
    """The connection's busy timeout now (`_mind_own_locks`)."""


def expire(handle: RoleConnection) -> None:
    """Make SQLite prepare every cached statement of the role's connection again (asking the
    authorizer) before its next run, and forget what was recorded for them."""
    handle.conn.set_authorizer(handle.auth)  # SQLite expires all prepared statements
    handle.verdicts.clear()


def changes_of(handle: RoleConnection) -> int:
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


def columns_of(cursor: sqlite3.Cursor) -> tuple[str, ...]:
    if cursor.description is None:
        return ()
    return tuple(str(column[0]) for column in cursor.description)
