"""Transaction control in an automation's statements (the isolation lab).

An exercise's statement may be `BEGIN ISOLATION LEVEL SERIALIZABLE`, `BEGIN IMMEDIATE`,
`COMMIT` or `ROLLBACK`: the engine then holds (or ends) a transaction for the statement's
role through the store's `begin`/`commit`/`rollback`, so one Enactor's read and its later
write can be one transaction across simulated minutes, beside another Enactor's. Players'
own BEGIN stays refused: only the automation's statements are read this way.
"""

from __future__ import annotations

import functools
import re

from raceday.value import Value, frozen

_BEGIN = re.compile(
    r"^(?:BEGIN(?:\s+(?:TRANSACTION|WORK))?|START\s+TRANSACTION)"
    r"(?:\s+(?P<mode>DEFERRED|IMMEDIATE|EXCLUSIVE)(?:\s+TRANSACTION)?"
    r"|\s+ISOLATION\s+LEVEL\s+(?P<level>READ\s+COMMITTED|REPEATABLE\s+READ|SERIALIZABLE))?$"
)
_COMMIT = re.compile(r"^(?:COMMIT|END)(?:\s+(?:TRANSACTION|WORK))?$")
_ROLLBACK = re.compile(r"^ROLLBACK(?:\s+(?:TRANSACTION|WORK))?$")
_WORDS = ("BEGIN", "START", "COMMIT", "END", "ROLLBACK")


@frozen
class Control(Value):
    """What a transaction-control statement asks for: `begin` (with `isolation`, or None for
    the database's default), `commit` or `rollback`."""

    word: str
    isolation: str | None = None


class NotControl(ValueError):
    """A statement that starts like transaction control but is not one raceday knows."""


@functools.lru_cache(maxsize=512)
def transaction_control(sql: str) -> Control | None:
    """The Control a statement asks for; None for any other statement.

    Raises NotControl for text that starts with BEGIN/START/COMMIT/END/ROLLBACK but is none
    of the forms above (`BEGIN ISOLATION LEVEL SOMETIMES`, `ROLLBACK TO x`), so an edit that
    meant one is refused with a reason instead of running as something else. (Asked two or
    three times for every automation statement: the answers are kept, by text.)
    """
    text = " ".join(sql.strip().rstrip(";").split()).upper()
    if not text.startswith(_WORDS):
        return None
    first = re.match(r"[A-Z_]*", text)
    if first is None or first.group() not in _WORDS:
        return None  # BEGINNING_TABLE ... is not ours
    found = _BEGIN.match(text)
    if found is not None:
        mode = found.group("mode") or found.group("level")
        return Control("begin", " ".join(mode.lower().split()) if mode else None)
    if _COMMIT.match(text):
        return Control("commit")
    if _ROLLBACK.match(text):
        return Control("rollback")
    raise NotControl(
        f"{sql.strip()[:60]!r} is not transaction control raceday knows: BEGIN [ISOLATION LEVEL "
        "READ COMMITTED | REPEATABLE READ | SERIALIZABLE] (PostgreSQL), BEGIN [DEFERRED | "
        "IMMEDIATE | EXCLUSIVE] (SQLite), COMMIT or ROLLBACK")
