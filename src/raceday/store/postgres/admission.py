"""Whether a player's statement is sent to PostgreSQL at all, by its first words, and the
statement ready to send (its text for psycopg and its values bound).

The allow-list is the first line: what is not on it (SET, RESET, BEGIN, COMMIT, COPY,
LISTEN, NOTIFY, LOAD, VACUUM, ALTER SYSTEM via ALTER, DISCARD, ...) is refused before it is
sent, with why; the server's privileges are the second line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raceday.store.dialect import postgres as pgsql
from raceday.store.postgres.unblind import refusal as unblind_refusal
from raceday.store.results import StatementResult

# First words a player's statement may start with.
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
DML_KEYWORDS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})
CODE_KEYWORDS = frozenset({"DO", "CALL"})  # may run DDL inside

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

Ready = tuple[str, str, list[Any]]
"""A statement ready to send: its first keyword, its text for psycopg and its values."""


def to_send(statement: str, params: Mapping[str, Any] | None) -> StatementResult | Ready:
    """The statement ready to send, or why it is not sent (refused, a value missing)."""
    keyword = pgsql.first_keyword(statement)
    refused = refusal(statement, keyword)
    if refused is not None:
        return StatementResult(sql=statement, error="refused: " + refused, error_kind="refused")
    try:
        query, values = pgsql.bind(statement, params)
    except pgsql.MissingParameter as exc:
        return error(statement, f"no value was given for parameter :{exc.name}")
    return keyword, query, values


def refusal(statement: str, keyword: str) -> str | None:
    """Why a statement starting with `keyword` is not sent, or None when it may be."""
    if keyword in _REFUSED_WORDS:
        return _REFUSED_WORDS[keyword]
    if keyword not in ALLOWED_KEYWORDS:
        return f"{keyword or 'this statement'} is not allowed here"
    if keyword in ("CREATE", "ALTER"):
        blinding = unblind_refusal(keyword, pgsql.words(statement))
        if blinding is not None:
            return blinding
    if keyword in ("CREATE", "ALTER", "DROP"):
        found = pgsql.words(statement)
        kind = found[1] if len(found) > 1 else ""
        if kind not in ALLOWED_OBJECTS:
            return f"{keyword} {kind} is not allowed here".replace("  ", " ")
    return None


def error(sql: str, message: str) -> StatementResult:
    """A statement's result that failed with `message` before the server ran it."""
    return StatementResult(sql=sql, error=message, error_kind="error")
