"""What a trusted query reads on PostgreSQL, from its plan: the world's tables, or nothing.

A night asks the exercise's checks after every write; a check whose tables were not written
since gives the same answer, so the session keeps it (`engine.checks`). SQLite names a query's
tables through its authorizer; on PostgreSQL the planner does: `EXPLAIN (VERBOSE)` names every
relation the query would scan, the views' and row-level security's included, whether or not a
run would reach them. What a plan cannot show is what a function called in it reads, or a
value that moves with nothing written (`now()`, `nextval`), so a query whose plan calls a
function that is not one of the server's own immutable ones is never kept, nor one that reads
a relation outside the world's schema or one that is not a table (a sequence)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

EXPLAIN = "EXPLAIN (VERBOSE, FORMAT JSON) "

_CALL = re.compile(r'(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))\s*\(')
"""A name followed by "(" in a plan's expression text: a function call, quoted or not."""

_NOT_CALLS = frozenset({
    "any", "all", "some", "coalesce", "nullif", "greatest", "least", "array", "row", "in",
    "exists", "not", "and", "or", "is", "when", "then", "else", "case", "end", "like", "ilike",
    "filter", "over", "values", "distinct", "between", "similar", "to", "as", "on", "using",
    "partition", "by", "order", "asc", "desc", "nulls", "first", "last",
    "where",  # an aggregate's FILTER (WHERE (...)): recovery-under-load's launches check
    # types written with a length or precision, in casts
    "varying", "character", "char", "varchar", "numeric", "decimal", "bit", "time",
    "timestamp", "interval"})
"""Words the server's deparser writes before "(" that are not calls of a function. Only
as written bare: a function given such a name is written quoted (`"where"(...)`), and is a
call like any other."""

_MOVING = ("current_", "localtime", "session_user", "system_user")
"""SQL value functions written without "(": a plan showing one may answer differently with
nothing written (`current_user` is the checker's own and never moves, but is not worth a
special case)."""

VERDICT = (
    "SELECT "
    "(SELECT coalesce(array_agg(c.relname::text), '{}') FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
    "AND c.relname = ANY(%s::text[]) AND c.relkind IN ('r', 't', 'm', 'p')), "
    "(SELECT coalesce(array_agg(DISTINCT p.proname::text), '{}') FROM pg_catalog.pg_proc p "
    "WHERE p.proname = ANY(%s::text[])), "
    "(SELECT coalesce(array_agg(DISTINCT p.proname::text), '{}') FROM pg_catalog.pg_proc p "
    "WHERE p.proname = ANY(%s::text[]) AND (p.provolatile <> 'i' "
    "OR p.pronamespace <> 'pg_catalog'::pg_catalog.regnamespace))")
"""Of a plan's relations, the world's tables; of its calls, the functions the server has, and
those that are not its own immutable ones (one such overload is enough to refuse)."""


@dataclass(frozen=True)
class PlanReads:
    """What one plan shows: its relations (schema, name), the names it calls, and whether
    it shows something that moves with nothing written, or cannot be read."""

    relations: frozenset[tuple[str, str]]
    calls: frozenset[str]
    moving: bool

    def verdict_values(self, world: str) -> list[Any]:
        names = sorted({name for schema, name in self.relations if schema == world})
        calls = sorted(self.calls)
        return [world, names, calls, calls]

    def tables(self, world: str, verdict: tuple[Any, ...]) -> frozenset[str] | None:
        """The world tables the query reads, lower case, given the server's `VERDICT`
        on this plan; None when its answer may change with none of them written."""
        tables, known, unsafe = (set(v or ()) for v in verdict)
        if self.moving or unsafe or (self.calls - known):
            return None
        if any(schema != world or name not in tables for schema, name in self.relations):
            return None
        return frozenset(name.lower() for _, name in self.relations)


def read_plan(explained: Any) -> PlanReads:
    """`EXPLAIN (VERBOSE, FORMAT JSON)`'s answer (its one value, parsed or as text)."""
    plan = json.loads(explained) if isinstance(explained, str) else explained
    relations: set[tuple[str, str]] = set()
    calls: set[str] = set()
    moving = False
    for key, value in _items(plan):
        if not isinstance(value, str):
            continue
        if key == "One-Time Filter" and value.strip("() ").lower() == "false":
            moving = True  # folded away: the plan may not name what another plan would read
        lowered = value.lower()
        if key not in ("Node Type", "Schema", "Alias", "Index Name", "Relation Name") and any(
                word in lowered for word in _MOVING):
            moving = True
        for quoted, plain in _CALL.findall(value):
            if quoted:
                calls.add(quoted.replace('""', '"'))
            elif plain.lower() not in _NOT_CALLS:
                calls.add(plain.lower())
    for node in _nodes(plan):
        name = node.get("Relation Name")
        if isinstance(name, str):
            relations.add((str(node.get("Schema", "")), name))
        if "Function Name" in node or node.get("Node Type") in ("Function Scan", "Table Function Scan"):
            function = node.get("Function Name")
            if isinstance(function, str):
                calls.add(function)
            else:
                moving = True
    return PlanReads(frozenset(relations), frozenset(calls), moving)


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _nodes(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _nodes(inner)


def _items(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) of the plan, a list's strings under its key."""
    for node in _nodes(value):
        for key, inner in node.items():
            if isinstance(inner, list):
                for item in inner:
                    if isinstance(item, str):
                        yield key, item
            else:
                yield key, inner
