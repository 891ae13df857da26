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


def _deny_attach(action: int, *_args: object) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


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
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.set_authorizer(_deny_attach)
        deadline = time.monotonic() + time_limit
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        for line, statement in split_statements(world_sql):
            try:
                conn.execute(statement)
            except (sqlite3.Error, sqlite3.Warning) as exc:
                message = str(exc)
                if message == "interrupted":
                    message = f"took longer than {time_limit:g} s to build (a runaway query?)"
                return SqlCheck(world_error=(line, message))
        conn.set_progress_handler(None, 0)
        return SqlCheck(None, tuple(_prepare(conn, label, sql) for label, sql in items))
    finally:
        conn.close()


def _prepare(conn: sqlite3.Connection, label: str, sql: str) -> Prepared:
    names: list[str] = []
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
        except (sqlite3.Error, sqlite3.Warning) as exc:
            return Prepared(label, str(exc), tuple(names))
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
