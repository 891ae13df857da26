"""Building a world from its SQL: the one builder behind every world raceday makes.

A session's world.db (`WorldStore.create`), the replay's seed (replay_world.py), the
exercise check's throw-away world (prepare.py) and the briefing's schema cheat-sheet
(`describe_world`) are all built here, the same way: the exercise's (trusted) script run
statement by statement as the splitter cuts it, so an error names its line; no ATTACH, no
PRAGMA that edits the schema by hand; a size limit; and a deadline, so a runaway recursive
CTE in an author's world stops instead of hanging.
"""

from __future__ import annotations

import sqlite3
import time

from raceday.store.dialect.sqlite import statement_pieces

WORLD_TIME_LIMIT = 30.0
"""Seconds a world script may take before the build gives up on it (a runaway query)."""

MAX_WORLD_BYTES = 256 * 1024 * 1024
"""The most a world may hold: built here, in the store and during play (max_page_count)."""

MAX_WORLD_VALUE = 16 * 1024 * 1024
"""The longest text or blob world SQL may make (SQLITE_LIMIT_LENGTH while it is built)."""

# PRAGMAs a world's SQL may not run: with them it could build a world SQLite cannot open
# again ("malformed database schema"), which `check` would pass and `run` refuse.
FORBIDDEN_WORLD_PRAGMAS = frozenset({"writable_schema", "schema_version"})

NUL_MESSAGE = "holds a NUL character (SQLite cannot take one)"


class WorldError(Exception):
    """The world script failed: the 1-based line of the statement, and what went wrong."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


class BuildGuard:
    """What trusted world SQL may not do while a world is built.

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
            return NUL_MESSAGE
        return message


def limit_size(conn: sqlite3.Connection, max_bytes: int = MAX_WORLD_BYTES) -> None:
    """Cap how large the world behind `conn` may grow (SQLite refuses the write past it)."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {max(1, max_bytes // int(page_size))}")


def build_world(
    conn: sqlite3.Connection,
    world_sql: str,
    *,
    time_limit_s: float = WORLD_TIME_LIMIT,
    max_bytes: int | None = None,
) -> None:
    """Run `world_sql` on `conn` (in autocommit), one statement at a time; raise WorldError.

    The connection's own settings (foreign keys, hardening) are the caller's; the authorizer
    and progress handler are set for the build and cleared after it.
    """
    max_bytes = MAX_WORLD_BYTES if max_bytes is None else max_bytes
    if "\x00" in world_sql:
        raise WorldError(world_sql.count("\n", 0, world_sql.index("\x00")) + 1, NUL_MESSAGE)
    guard = BuildGuard()
    try:
        pieces = statement_pieces(world_sql)
    except (ValueError, UnicodeError) as exc:
        raise WorldError(1, f"the script cannot be read as SQL ({guard.explain(exc, max_bytes)})"
                         ) from exc
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_WORLD_VALUE)
    limit_size(conn, max_bytes)
    conn.set_authorizer(guard)
    deadline = time.monotonic() + time_limit_s
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        for piece in pieces:
            try:
                conn.execute(piece.sql)
            except (sqlite3.Error, sqlite3.Warning, ValueError, UnicodeError, MemoryError) as exc:
                message = str(exc)
                if message == "interrupted":
                    message = f"took longer than {time_limit_s:g} s to build (a runaway query?)"
                else:
                    message = guard.explain(exc, max_bytes)
                raise WorldError(piece.line, message) from exc
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)


def deny_attach(action: int, *_args: object) -> int:
    """An authorizer that refuses ATTACH and DETACH, and allows everything else."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK
