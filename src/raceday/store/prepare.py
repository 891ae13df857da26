"""Check an exercise's SQL against its world before anyone plays it.

An exercise that names a column that does not exist should fail when it is loaded, with the
file and line, not at 02:10 in the middle of a game day. This builds the world in a
throw-away in-memory database and asks SQLite to compile (EXPLAIN) every statement without
running it. It is the exercise loader's only door to SQLite.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

WORLD_TIME_LIMIT = 30.0
"""Seconds the world script may take before the check gives up on it (a runaway CTE)."""

MAX_WORLD_BYTES = 256 * 1024 * 1024
"""The most a world may hold: built here, in the store and during play (max_page_count)."""

MAX_WORLD_VALUE = 16 * 1024 * 1024
"""The longest text or blob world SQL may make (SQLITE_LIMIT_LENGTH while it is built)."""

# PRAGMAs a world's SQL may not run: with them it could build a world SQLite cannot open
# again ("malformed database schema"), which `check` would pass and `run` refuse.
FORBIDDEN_WORLD_PRAGMAS = frozenset({"writable_schema", "schema_version"})

_COMMENT = re.compile(r"--[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
_EXPLAIN = re.compile(r"EXPLAIN\b", re.IGNORECASE)


@dataclass(frozen=True)
class Prepared:
    """The outcome of compiling one labelled piece of SQL.

    `parameters` are the named parameters it uses, without their `:`/`@`/`$`, so the caller
    can tell a typo'd `:plna` from a value a task remembered.
    """

    label: str
    error: str | None = None
    parameters: tuple[str, ...] = ()


@dataclass(frozen=True)
class SqlCheck:
    """What `prepare_each` found: the world's first error (line, message), or each item's."""

    world_error: tuple[int, str] | None
    items: tuple[Prepared, ...] = ()

    @property
    def errors(self) -> list[tuple[str, str]]:
        return [(item.label, item.error) for item in self.items if item.error is not None]


def split_statements(sql: str) -> list[tuple[int, str]]:
    """Split a script into (1-based line where it starts, statement) pairs.

    Uses `sqlite3.complete_statement`, so semicolons inside strings, comments and trigger
    bodies do not split. Blank pieces (whitespace, comments, lone semicolons) are left out.
    """
    pieces: list[tuple[int, str]] = []
    start = 0
    pos = 0
    while (semicolon := sql.find(";", pos)) >= 0:
        pos = semicolon + 1
        if sqlite3.complete_statement(sql[start:pos]):
            _add_piece(pieces, sql, start, pos)
            start = pos
    _add_piece(pieces, sql, start, len(sql))
    return pieces


def _add_piece(pieces: list[tuple[int, str]], sql: str, start: int, end: int) -> None:
    piece = sql[start:end]
    if is_blank(piece):
        return
    offset = start + _leading_noise(piece)
    pieces.append((sql.count("\n", 0, offset) + 1, piece))


def is_blank(sql: str) -> bool:
    """True when `sql` holds no statement: only whitespace, comments and semicolons."""
    return not _COMMENT.sub(" ", sql).strip().strip(";").strip()


def _leading_noise(piece: str) -> int:
    """Length of the whitespace and comments before a statement's first word."""
    i = 0
    while i < len(piece):
        if piece[i].isspace():
            i += 1
        elif piece.startswith("--", i):
            newline = piece.find("\n", i)
            i = len(piece) if newline < 0 else newline + 1
        elif piece.startswith("/*", i):
            close = piece.find("*/", i + 2)
            i = len(piece) if close < 0 else close + 2
        else:
            break
    return i


class _Recorder(dict[str, None]):
    """Binds every named parameter to NULL and remembers which names were asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __missing__(self, key: str) -> None:
        if key not in self.names:
            self.names.append(key)
        return None


class BuildGuard:
    """What trusted world SQL may not do while a world is built (here and in the store).

    An authorizer: no ATTACH or DETACH (a world is one file), no PRAGMA that lets the
    script edit the schema table by hand. The reason for the last refusal is kept, since
    SQLite only says "not authorized".
    """

    def __init__(self) -> None:
        self.reason: str | None = None

    def __call__(
        self, action: int, arg1: str | None, _arg2: str | None, _db: str | None, _source: str | None
    ) -> int:
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            self.reason = "ATTACH and DETACH are not allowed in a world's SQL (a world is one file)"
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in FORBIDDEN_WORLD_PRAGMAS:
            self.reason = (
                f"PRAGMA {(arg1 or '').lower()} is not allowed in a world's SQL "
                "(a schema edited by hand makes a world SQLite may refuse to open)"
            )
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def explain(self, exc: BaseException, max_bytes: int) -> str:
        """One line for an error raised while building a world."""
        message = " ".join(str(exc).split()) or type(exc).__name__
        if self.reason is not None and "not authorized" in message:
            return self.reason
        code = getattr(exc, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL or "database or disk is full" in message:
            return f"the world would grow past its size limit ({max_bytes // (1024 * 1024):,} MB)"
        if "\x00" in message or "null character" in message:
            return "holds a NUL character (SQLite cannot take one)"
        return message


def guard_build(conn: sqlite3.Connection, max_bytes: int | None = None) -> BuildGuard:
    """Limit a connection that builds a world: size, value length, the BuildGuard authorizer."""
    limit = MAX_WORLD_BYTES if max_bytes is None else max_bytes
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_WORLD_VALUE)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {max(1, limit // int(page_size))}")
    guard = BuildGuard()
    conn.set_authorizer(guard)
    return guard


def _nul_line(sql: str) -> int:
    return sql.count("\n", 0, sql.index("\x00")) + 1


def prepare_each(
    world_sql: str,
    items: Sequence[tuple[str, str]],
    *,
    time_limit: float = WORLD_TIME_LIMIT,
) -> SqlCheck:
    """Build `world_sql` in memory, then compile each (label, sql) without running it.

    The world stops at its first error: later statements would mostly fail because of it,
    and the items would fail against a half-built world, so nothing else is reported then.
    """
    if "\x00" in world_sql:
        return SqlCheck(world_error=(_nul_line(world_sql), "holds a NUL character (SQLite cannot take one)"))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        guard = guard_build(conn)
        deadline = time.monotonic() + time_limit
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            pieces = split_statements(world_sql)
        except (ValueError, UnicodeError) as exc:
            return SqlCheck(world_error=(1, guard.explain(exc, MAX_WORLD_BYTES)))
        for line, statement in pieces:
            try:
                conn.execute(statement)
            except (sqlite3.Error, sqlite3.Warning, ValueError, UnicodeError, MemoryError) as exc:
                message = str(exc)
                if message == "interrupted":
                    message = f"took longer than {time_limit:g} s to build (a runaway query?)"
                else:
                    message = guard.explain(exc, MAX_WORLD_BYTES)
                return SqlCheck(world_error=(line, message))
        conn.set_progress_handler(None, 0)
        return SqlCheck(None, tuple(_prepare(conn, label, sql) for label, sql in items))
    finally:
        conn.close()


def _prepare(conn: sqlite3.Connection, label: str, sql: str) -> Prepared:
    names: list[str] = []
    if "\x00" in sql:
        return Prepared(label, "holds a NUL character (SQLite cannot take one)")
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        return Prepared(label, "holds text that is not valid Unicode (a lone surrogate)")
    pieces = split_statements(sql)
    if not pieces:
        return Prepared(label, "no SQL statement")
    for _line, statement in pieces:
        body = statement[_leading_noise(statement) :]
        explain = body if _EXPLAIN.match(body) else "EXPLAIN " + body
        recorder = _Recorder()
        try:
            conn.execute(explain, recorder)
        except sqlite3.ProgrammingError as exc:
            if "has no name" in str(exc):
                message = "positional parameters (?) are not supported; use names like :plan"
                return Prepared(label, message, tuple(names))
            return Prepared(label, str(exc), tuple(names))
        except (sqlite3.Error, sqlite3.Warning, ValueError, MemoryError) as exc:
            return Prepared(label, " ".join(str(exc).split()) or type(exc).__name__, tuple(names))
        names.extend(name for name in recorder.names if name not in names)
    return Prepared(label, None, tuple(names))


def check_sql(world_sql: str, items: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """(label, error) for the world and every item that SQLite cannot prepare.

    A world error comes back first, labelled "world.sql:LINE" (and then nothing else: see
    `prepare_each`).
    """
    result = prepare_each(world_sql, items)
    if result.world_error is not None:
        line, message = result.world_error
        return [(f"world.sql:{line}", message)]
    return result.errors
