"""Which relations a statement may write and a check reads, read off their text.

The kept checks (kept.py) reuse a check's answer only while nothing it reads was written.
Both sides are judged on an allow-list of shapes and fail closed: a statement of a shape not
listed (DDL, DO, CALL, a data-modifying WITH, a call of the world's own code, a VOLATILE
function, a view or table that runs code when written) may have changed anything; a check
that names anything not plainly a world table or view (a function of the world, a function
that is not IMMUTABLE, the clock, another schema, `pg_*`) is never kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from raceday.store.dialect import postgres as pgsql
from raceday.store.postgres.catalog import CLOCK_WORDS, Catalog

_READS = frozenset({"SELECT", "VALUES", "TABLE", "SHOW"})
_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})


@dataclass(frozen=True)
class Shape:
    """A text's names: those it calls (`f(`), every other name, its bare words (upper case),
    and whether a string in it holds a clock word."""

    calls: frozenset[str]
    names: frozenset[str]
    words: tuple[str, ...]
    clock: bool


@lru_cache(maxsize=1024)
def shape(sql: str) -> Shape:
    """The names of `sql` as PostgreSQL folds them (a bare word lower case, a quoted name as
    it is written)."""
    seq = [t for t in pgsql.tokens(sql) if t.kind not in ("ws", "comment")]
    calls: set[str] = set()
    names: set[str] = set()
    clock = False
    for i, token in enumerate(seq):
        if token.kind in ("word", "quoted"):
            name = token.text.lower() if token.kind == "word" else token.text[1:-1].replace('""', '"')
            called = i + 1 < len(seq) and seq[i + 1].text == "("
            (calls if called else names).add(name)
        elif token.kind in ("string", "dollar"):
            clock = clock or any(word in token.text.lower() for word in CLOCK_WORDS)
    words = tuple(t.text.upper() for t in seq if t.kind == "word")
    return Shape(frozenset(calls), frozenset(names), words, clock)


def written(statement: str, catalog: Catalog) -> frozenset[str] | None:
    """The world's tables `statement` may write, if it ran and committed; None when it may
    have changed anything (the schema too): its shape is not one of the known ones."""
    found = shape(statement)
    if not found.words or found.calls & (catalog.code | catalog.volatile):
        return None
    keyword = found.words[0]
    if keyword in _READS:
        if keyword == "SELECT" and "INTO" in found.words and not pgsql.is_query(statement):
            return None  # SELECT ... INTO makes a table
        return frozenset()
    if keyword == "WITH":
        return None if _DML & set(found.words) else frozenset()
    if keyword == "EXPLAIN":
        return None if {"ANALYZE", "ANALYSE"} & set(found.words) else frozenset()
    if keyword in _DML and "WITH" not in found.words:  # only a WITH can hold another write
        target = pgsql.dml_target(statement)
        return catalog.writes.get(target) if target is not None else None
    return None


def check_reads(sql: str, catalog: Catalog) -> frozenset[str] | None:
    """The world's tables a check reads, when its answer can change only with them; None
    when it may change otherwise (or it may write): then it is never kept."""
    found = shape(sql)
    if not found.words or found.clock or found.words[0] not in ("SELECT", "VALUES", "TABLE", "WITH"):
        return None
    if found.words[0] == "WITH" and _DML & set(found.words):
        return None
    if "INTO" in found.words and not pgsql.is_query(sql):
        return None
    if any(word.startswith(("current", "local", "session_user", "user")) for word in found.names):
        return None  # CURRENT_TIMESTAMP, LOCALTIME and the like take no parentheses
    for name in found.calls:
        if name in catalog.code or name in catalog.unsteady or name.startswith("pg_"):
            return None
    reads: set[str] = set()
    for name in found.names | found.calls:
        if name.startswith("pg_") or name in catalog.schemas or name in catalog.unkept:
            return None
        if name in catalog.tables:
            reads |= catalog.tables[name]
        elif name in catalog.views:
            view = catalog.views[name]
            if view is None:
                return None
            reads |= view
    return frozenset(reads)
