"""Building a world from its SQL: the one builder behind every world raceday makes.

A session's world.db (`WorldStore.create`), the replay's seed (replay_world.py), the
exercise check's throw-away world (prepare.py) and the briefing's schema cheat-sheet
(`describe_world`) are all built here, the same way: the exercise's (trusted) script run
statement by statement as the splitter cuts it, so an error names its line; no ATTACH; and a
deadline, so a runaway recursive CTE in an author's world stops instead of hanging.
"""

from __future__ import annotations

import sqlite3
import time

from raceday.store.split import statement_pieces

WORLD_TIME_LIMIT = 30.0
"""Seconds a world script may take before the build gives up on it (a runaway query)."""


class WorldError(Exception):
    """The world script failed: the 1-based line of the statement, and SQLite's message."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def build_world(
    conn: sqlite3.Connection, world_sql: str, *, time_limit_s: float = WORLD_TIME_LIMIT
) -> None:
    """Run `world_sql` on `conn` (in autocommit), one statement at a time; raise WorldError.

    The connection's own settings (foreign keys, hardening) are the caller's; the authorizer
    and progress handler are set for the build and cleared after it.
    """
    try:
        pieces = statement_pieces(world_sql)
    except (ValueError, UnicodeError) as exc:
        raise WorldError(1, f"the script cannot be read as SQL ({exc})") from exc
    conn.set_authorizer(deny_attach)
    deadline = time.monotonic() + time_limit_s
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        for piece in pieces:
            try:
                conn.execute(piece.sql)
            except (sqlite3.Error, sqlite3.Warning) as exc:
                message = str(exc)
                if message == "interrupted":
                    message = f"took longer than {time_limit_s:g} s to build (a runaway query?)"
                raise WorldError(piece.line, message) from exc
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)


def deny_attach(action: int, *_args: object) -> int:
    """An authorizer that refuses ATTACH and DETACH, and allows everything else."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK
