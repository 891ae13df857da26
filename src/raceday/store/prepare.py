"""Check an exercise's SQL against its world before anyone plays it.

An exercise that names a column that does not exist should fail when it is loaded, with the
file and line, not at 02:10 in the middle of a game day. This builds the world in a
throw-away in-memory database (world.py) and asks SQLite to compile (EXPLAIN) every statement
without running it. The exercise loader is handed `prepare_each` as its `SqlChecker`
(raceday.engine.load); it never imports the store.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from raceday.store.base import StoreError
from raceday.store.dialect.sqlite import statement_pieces
from raceday.store.world import (
    NUL_MESSAGE,
    WORLD_TIME_LIMIT,
    BuildGuard,
    WorldError,
    build_world,
)
from raceday.value import Value, frozen

_EXPLAIN = re.compile(r"EXPLAIN\b", re.IGNORECASE)


@frozen
class Prepared(Value):
    """The outcome of compiling one labelled piece of SQL.

    `parameters` are the named parameters it uses, without their `:`/`@`/`$`, so the caller
    can tell a typo'd `:plna` from a value a task remembered.
    """

    label: str
    error: str | None = None
    parameters: tuple[str, ...] = ()


@frozen
class SqlCheck(Value):
    """What `prepare_each` found: the world's first error (line, message), or each item's."""

    world_error: tuple[int, str] | None
    items: tuple[Prepared, ...] = ()

    @property
    def errors(self) -> list[tuple[str, str]]:
        return [(item.label, item.error) for item in self.items if item.error is not None]


class _Recorder(dict[str, None]):
    """Binds every named parameter to NULL and remembers which names were asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __missing__(self, key: str) -> None:
        if key not in self.names:
            self.names.append(key)
        return None


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
        try:
            build_world(conn, world_sql, time_limit_s=time_limit)
        except WorldError as exc:
            return SqlCheck(world_error=(exc.line, exc.message))
        # compiling an ATTACH must not open a file, nor a PRAGMA edit the schema table
        conn.set_authorizer(BuildGuard())
        return SqlCheck(None, tuple(_prepare(conn, label, sql) for label, sql in items))
    finally:
        conn.close()


def _prepare(conn: sqlite3.Connection, label: str, sql: str) -> Prepared:
    names: list[str] = []
    if "\x00" in sql:
        return Prepared(label, NUL_MESSAGE)
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        return Prepared(label, "holds text that is not valid Unicode (a lone surrogate)")
    pieces = statement_pieces(sql)
    if not pieces:
        return Prepared(label, "no SQL statement")
    for piece in pieces:
        body = piece.body
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


def read_kept(world_sql: str, queries: Sequence[str], *,
              time_limit: float = WORLD_TIME_LIMIT) -> list[tuple[tuple[str, ...], list[tuple[Any, ...]]]]:
    """Build `world_sql` in memory and run each query: (columns, rows) per query, in order.

    What the customers' view keeps of the world as the exercise builds it (before any role
    has run a statement); raises `StoreError` with SQLite's words (and the world's line
    where the world does not build)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        try:
            build_world(conn, world_sql, time_limit_s=time_limit)
        except WorldError as exc:
            raise StoreError(f"the world does not build (line {exc.line}: {exc.message})") from None
        conn.set_authorizer(BuildGuard())
        answers = []
        for sql in queries:
            try:
                cursor = conn.execute(sql)
                columns = tuple(str(d[0]) for d in cursor.description or ())
                answers.append((columns, [tuple(row) for row in cursor.fetchall()]))
            except sqlite3.Error as exc:
                raise StoreError(f"a customers' table cannot be read: {exc}") from None
        return answers
    finally:
        conn.close()
