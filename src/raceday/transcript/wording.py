"""Sentences about events that more than one screen or report shows, worded once."""

from __future__ import annotations

from collections.abc import Iterable

from raceday.transcript.events import Statement


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def describe_statement(e: Statement) -> str:
    """What one statement did: read N rows, applied (N rows), 0 rows changed, changed the
    schema, refused."""
    if not e.ok:
        return f"refused ({e.error_kind}): {e.error}"
    if e.rows is not None:
        return f"read {'more than ' if e.truncated else ''}{plural(e.rows, 'row')}"
    if e.schema_changed:
        return "changed the schema"
    n = e.rowcount or 0
    return f"applied ({plural(n, 'row')})" if n else "0 rows changed"


def describe_run(statements: Iterable[Statement]) -> str:
    """What one run of an automated task did, statement by statement."""
    return "; ".join(describe_statement(e) for e in statements) or "no statement ran"
