"""What the engine reads off a statement's text: its named parameters, whether its answer can
change with no write, whether it only reads, what it deletes from, whether it is
transaction control; and the
fingerprints and short forms of answers that events carry."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from raceday.store.transactions import NotControl, transaction_control

ALERT_ROWS_SHOWN = 5

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=1024)
def param_names(sql: str) -> tuple[str, ...]:
    """The named parameters (`:plan`) a statement uses."""
    return tuple(_PARAM.findall(sql))


# Functions whose answer changes with no write to any table: a monitor calling one (or
# reading the clock, or a pragma) runs every minute.
_UNSTEADY_FUNCTIONS = frozenset({
    "random", "randomblob", "changes", "last_insert_rowid", "total_changes", "date", "time",
    "datetime", "julianday", "strftime", "unixepoch", "timediff"})


_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_FIRST_WORD = re.compile(r"\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/)\s*)*([A-Za-z]+)", re.DOTALL)


@lru_cache(maxsize=256)
def steady(sql: str) -> bool:
    """True when the query's answer can change only with the tables it reads (or the schema).
    Read on the text (a name in a string counts too: that only makes it run again)."""
    lowered = sql.lower()
    if "current_" in lowered or "pragma" in lowered:
        return False
    return not ({name.lower() for name in _CALL.findall(sql)} & _UNSTEADY_FUNCTIONS)


@lru_cache(maxsize=256)
def reads_only(sql: str) -> bool:
    """A check that starts with SELECT or VALUES (anything else might write)."""
    first = _FIRST_WORD.match(sql)
    return first is not None and first.group(1).upper() in ("SELECT", "VALUES")


def changes_schema(sql: str) -> bool:
    """A statement that builds or drops something (CREATE, ALTER, DROP): where a guard is."""
    first = _FIRST_WORD.match(sql)
    return first is not None and first.group(1).upper() in ("CREATE", "ALTER", "DROP")


_DELETE_FROM = re.compile(r"\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/)\s*)*delete\s+from\s+"
                          r"(\"[^\"]+\"|[\w.]+)", re.DOTALL | re.IGNORECASE)


@lru_cache(maxsize=256)
def deleted_table(sql: str) -> str | None:
    """The table a DELETE statement deletes from (lower case), or None for any other."""
    match = _DELETE_FROM.match(sql)
    return match.group(1).strip('"').lower() if match is not None else None


def params_key(params: Mapping[str, Any] | None) -> tuple[Any, ...]:
    """A check's parameters as a key: the type too (SQLite tells 1 from 1.0 and True)."""
    if not params:  # most checks take none
        return ()
    return tuple((k, type(v).__name__, v) for k, v in sorted(params.items()))


def answer_digest(columns: Sequence[str], rows: Sequence[Any]) -> str:
    """A fingerprint of a result, to tell whether two nights showed the same."""
    return hashlib.sha256(repr((tuple(columns), [tuple(r) for r in rows])).encode()).hexdigest()[:16]


def controls(sql: str) -> bool:
    """Whether an automation statement is transaction control (store.transactions)."""
    try:
        return transaction_control(sql) is not None
    except NotControl:
        return False


def commits(sql: str) -> bool:
    """Whether an automation statement was a COMMIT (store.transactions)."""
    try:
        control = transaction_control(sql)
    except NotControl:
        return False
    return control is not None and control.word == "commit"


def short_rows(rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(row) for row in rows[:ALERT_ROWS_SHOWN])
