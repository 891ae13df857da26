"""What an exercise's PostgreSQL world SQL may do, read from its text before it runs.

SQLite's world.sql is built under an authorizer (store/world.py's BuildGuard); PostgreSQL's
(a postgres.yaml's `world_changes`, or its `world:` file) is raceday's login's to run, so
`raceday check` reads each statement: it builds tables, views, functions, triggers, types
and rows, and nothing else. No DO block, no role, grant, setting, extension or file; no
SECURITY DEFINER function, no language but SQL and PL/pgSQL. A function's body may still
build SQL at run time, which no reading sees: the world is built as the world's code role
(store/postgres/runner.py), which can do no more anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from raceday.store.dialect.postgres import statement_pieces, tokens


@dataclass(frozen=True)
class Refusal:
    """A statement of a world's SQL it may not run: its line, why, and its text (to find
    which of postgres.yaml's changes brought it)."""

    line: int
    why: str
    sql: str
    start: int = 0
    end: int = 0
    """Where the statement sits in the text (its offsets)."""

ALLOWED_FIRST = frozenset({"CREATE", "ALTER", "INSERT", "UPDATE", "DELETE", "COMMENT",
                           "SELECT", "WITH", "VALUES"})
ALLOWED_MADE = frozenset({"TABLE", "INDEX", "UNIQUE", "VIEW", "FUNCTION", "PROCEDURE",
                          "TRIGGER", "SEQUENCE", "TYPE", "DOMAIN", "OR", "MATERIALIZED",
                          "RECURSIVE", "CONSTRAINT", "AGGREGATE", "UNLOGGED", "TEMP",
                          "TEMPORARY", "RULE"})
ALLOWED_ALTERED = frozenset({"TABLE", "SEQUENCE", "VIEW", "INDEX", "TYPE", "DOMAIN"})
LANGUAGES = frozenset({"SQL", "PLPGSQL"})
REFUSED_WORDS = {
    ("SECURITY", "DEFINER"): "a SECURITY DEFINER function (it would act as whoever built the "
                             "world)",
    ("ROW", "LEVEL"): "row-level security (a policy would hide rows from the checks)",
    ("OWNER", "TO"): "a change of owner (raceday gives the world's objects their owners)",
    ("SET", "ROLE"): "a change of role",
    ("SESSION", "AUTHORIZATION"): "a change of role",
}


def world_refusals(sql: str) -> list[Refusal]:
    """Each statement of `sql` a world may not run."""
    found: list[Refusal] = []
    for piece in statement_pieces(sql):
        why = _refusal(piece.sql)
        if why is not None:
            found.append(Refusal(piece.line, why, piece.body, piece.start, piece.end))
    return found


def _refusal(statement: str) -> str | None:
    words = [t.text.upper() for t in tokens(statement) if t.kind == "word"]
    if not words:
        return None
    first = words[0]
    if first not in ALLOWED_FIRST:
        return f"{first} is not allowed in a world's SQL (tables, views, functions and rows only)"
    if first == "CREATE" and (len(words) < 2 or words[1] not in ALLOWED_MADE):
        return f"CREATE {words[1] if len(words) > 1 else ''} is not allowed in a world's SQL"
    if first == "ALTER" and (len(words) < 2 or words[1] not in ALLOWED_ALTERED):
        return f"ALTER {words[1] if len(words) > 1 else ''} is not allowed in a world's SQL"
    for pair, what in REFUSED_WORDS.items():
        if any(tuple(words[i:i + 2]) == pair for i in range(len(words) - 1)):
            return f"{what} is not allowed in a world's SQL"
    for i, word in enumerate(words[:-1]):
        if word == "LANGUAGE" and words[i + 1] not in LANGUAGES:
            return f"LANGUAGE {words[i + 1].lower()} is not allowed in a world's SQL (sql or plpgsql)"
    return None
