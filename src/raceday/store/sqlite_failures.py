"""What a statement that failed on SQLite says: raceday's kind of error and one clear line
(from SQLite's exception and the authorizer's denials), where it may have kept changes, and
why a world could not be built (the SQL's mistake, or the machine's)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from raceday.errors import ExerciseError, MachineError
from raceday.store.authorizer import StatementContext
from raceday.store.results import ErrorKind
from raceday.store.sqlite_world import (
    MACHINE_CODES,
    ROLE_LIMITS,
    RoleConnection,
    is_full,
    megabytes,
    one_line,
)

_SYNTAX_MARKERS = ("syntax error", "incomplete input", "unrecognized token", "parser stack")


def classify(exc: BaseException, denials: Sequence[str], *, interrupted: Callable[[], str],
             full: Callable[[], str]) -> tuple[ErrorKind, str]:
    """Turn an exception into (error_kind, one clear line). `denials`: the authorizer's for
    the statement (none for trusted SQL); `interrupted`: why the progress handler stopped it
    (a cancel, the work budget, the time limit); `full`: why a write found no room."""
    message = str(exc)
    if isinstance(exc, sqlite3.Error):
        if denials:
            return "refused", "refused: " + one_line(denials[0])
        if isinstance(exc, sqlite3.IntegrityError):
            return "constraint", one_line(message)
        if message == "interrupted":
            return "timeout", interrupted()
        if is_full(exc):
            why = full()
            return ("machine" if why.startswith("the disk is full") else "error"), why
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in MACHINE_CODES:
            return "machine", f"the world cannot be written ({one_line(message)})"
        if message == "query string is too large":
            limit = ROLE_LIMITS[sqlite3.SQLITE_LIMIT_SQL_LENGTH]
            return "error", f"statement is too long (the limit is {limit:,} bytes)"
        if any(marker in message for marker in _SYNTAX_MARKERS):
            return "syntax", one_line(message)
        if message == "database is locked":
            return "timeout", ("database is locked (another connection holds SQLite's one "
                               "write lock, or wrote after this transaction read)")
        if message.startswith("You did not supply a value for binding parameter"):
            name = message.rsplit(" ", 1)[-1].rstrip(".")
            return "error", f"no value was given for parameter {name}"
        if message.startswith("Binding ") and "has no name" in message:
            return "error", "use named parameters such as :plan; ? is not supported here"
        if "not authorized" in message or "may not be modified" in message:
            return "refused", "refused: " + one_line(message)
        return "error", one_line(message)
    if isinstance(exc, MemoryError):
        return "error", "out of memory"
    return "error", one_line(f"{type(exc).__name__}: {message}")


def full_message(app: sqlite3.Connection, path: Path, max_world_bytes: int) -> str:
    """Why a write failed with SQLITE_FULL: the world's size limit, or the disk itself.

    The failed statement was rolled back, so the world's size says little; the disk's
    free space says whether the world had the room its limit allows.
    """
    try:
        pages = app.execute("PRAGMA page_count").fetchone()[0]
        size = app.execute("PRAGMA page_size").fetchone()[0]
        free = shutil.disk_usage(path.parent).free
    except (sqlite3.Error, OSError):
        pages, size, free = 0, 1, 0
    if free >= max_world_bytes - pages * size:
        return (
            f"the world is full: this statement would grow it past its limit of "
            f"{megabytes(max_world_bytes)}; nothing was changed"
        )
    return "the disk is full: nothing was changed"


def kept_in(handle: RoleConnection, statement: str, failed: StatementContext,
            kind: str) -> tuple[str, ...] | None:
    """Where a failed statement may have kept changes: nowhere when it was refused (before
    anything ran); else in the tables the authorizer saw it write, its triggers' and
    cascades' included, when SQLite prepared it now or its record was kept (a schema change
    half-done is not told)."""
    if kind == "refused":
        return ()
    if failed.ddl or not (failed.prepared or statement in handle.verdicts):
        return None
    return tuple(failed.writes)


def build_failed(exc: BaseException, cause: BaseException | None, path: Path,
                 disk_full: bool) -> Exception:
    """What to raise when the world SQL failed to build at `path` (`exc`: SQLite's error or
    the WorldError saying its line, `cause` SQLite's; `disk_full`: the disk, not the world's
    limit, ran out): the machine's failure (MachineError) or the SQL's (ExerciseError)."""
    if disk_full:
        return MachineError(f"{path}: cannot build the world here (the disk is full)")
    if (getattr(cause, "sqlite_errorcode", 0) or 0) & 0xFF in MACHINE_CODES:  # not the SQL's
        return MachineError(f"{path}: cannot build the world here ({one_line(str(cause))}"
                            "; a full disk, a file-size limit or a read-only folder?)")
    return ExerciseError([f"world SQL failed: {one_line(str(exc))}"])
