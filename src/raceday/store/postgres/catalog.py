"""What the kept checks need to know of a world's schema, read in one round trip.

A check's answer may be kept only while nothing it reads can change, so the kept checks
must know which names are tables, what each view reads, which relations are never safe
to keep (sequences, row-level security, raceday's compat views), which tables run code
when written (triggers, rules) and which tables a write cascades to. It is read on the
admin connection (catalog queries only: no code a player wrote runs) and thrown away at
every schema change (`KeptChecks.reset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from raceday.store.postgres.world import literal

if TYPE_CHECKING:
    import psycopg

CLOCK_WORDS = ("now", "today", "tomorrow", "yesterday", "current", "local", "random",
               "timeofday", "epoch", "infinity", "allballs")
"""Words that, anywhere in a check or a view (a string too: `'now'::timestamptz`), may make
its answer change with nothing written. Over-matching only makes a check run every time."""


@dataclass(frozen=True)
class Catalog:
    """A world's schema as the kept checks see it (names as PostgreSQL spells them)."""

    tables: Mapping[str, frozenset[str]]
    """Each readable table (a matview too) and what a read of it reads: itself and the
    tables under it (partitions, inheritance children)."""
    views: Mapping[str, frozenset[str] | None]
    """Each view and the tables it reads, through other views; None when its answer may
    change with nothing written (it calls code or reads the clock or outside the world)."""
    unkept: frozenset[str]
    """Relations a kept answer may never read: sequences, foreign tables, tables under
    row-level security, raceday's compat views and functions."""
    writes: Mapping[str, frozenset[str] | None]
    """What a write to each table may change (itself, the tables under it, what its foreign
    keys cascade to); None when it runs code (a trigger, a rule, a default, check or index
    that calls a function of the world, a column of a type the world made): anything."""
    code: frozenset[str]
    """Functions and procedures of the world (and compat): a call may do anything."""
    unsteady: frozenset[str]
    """PostgreSQL's own functions with an overload that is not IMMUTABLE."""
    volatile: frozenset[str]
    """PostgreSQL's own functions with a VOLATILE overload (they may have side effects)."""
    schemas: frozenset[str]
    """Every schema but the world's: a check naming one reads outside the world."""


_QUERY = """
SELECT 'rel', c.relname::text, c.relkind::text,
       ARRAY[c.relrowsecurity::text,
             EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                     WHERE t.tgrelid = c.oid AND NOT t.tgisinternal)::text,
             EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r
                     WHERE r.ev_class = c.oid AND r.ev_type <> '1')::text]
  FROM pg_catalog.pg_class c WHERE c.relnamespace = {world}::regnamespace
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
UNION ALL
SELECT 'viewrel', v.relname::text,
       CASE WHEN d.relnamespace = {world}::regnamespace THEN '' ELSE n.nspname::text END,
       ARRAY[d.relname::text]
  FROM pg_catalog.pg_class v
  JOIN pg_catalog.pg_rewrite r ON r.ev_class = v.oid
  JOIN pg_catalog.pg_depend x ON x.classid = 'pg_catalog.pg_rewrite'::regclass
   AND x.objid = r.oid AND x.refclassid = 'pg_catalog.pg_class'::regclass
  JOIN pg_catalog.pg_class d ON d.oid = x.refobjid AND d.oid <> v.oid
  JOIN pg_catalog.pg_namespace n ON n.oid = d.relnamespace
 WHERE v.relnamespace = {world}::regnamespace AND v.relkind = 'v'
UNION ALL
SELECT 'viewcode', v.relname::text, p.pronamespace::regnamespace::text,
       ARRAY[p.proname::text, p.provolatile::text]
  FROM pg_catalog.pg_class v
  JOIN pg_catalog.pg_rewrite r ON r.ev_class = v.oid
  JOIN pg_catalog.pg_depend x ON x.classid = 'pg_catalog.pg_rewrite'::regclass
   AND x.objid = r.oid AND x.refclassid = 'pg_catalog.pg_proc'::regclass
  JOIN pg_catalog.pg_proc p ON p.oid = x.refobjid
 WHERE v.relnamespace = {world}::regnamespace AND v.relkind = 'v'
UNION ALL
SELECT 'viewdef', v.relname::text, pg_catalog.pg_get_viewdef(v.oid), NULL
  FROM pg_catalog.pg_class v WHERE v.relnamespace = {world}::regnamespace AND v.relkind = 'v'
UNION ALL
SELECT 'cascade', p.relname::text, c.relname::text,
       ARRAY[(c.relnamespace = {world}::regnamespace)::text]
  FROM pg_catalog.pg_constraint k
  JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
  JOIN pg_catalog.pg_class p ON p.oid = k.confrelid
 WHERE k.contype = 'f' AND p.relnamespace = {world}::regnamespace
   AND (k.confdeltype IN ('c', 'n', 'd') OR k.confupdtype IN ('c', 'n', 'd'))
UNION ALL
SELECT 'under', p.relname::text, c.relname::text, NULL
  FROM pg_catalog.pg_inherits i
  JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
  JOIN pg_catalog.pg_class p ON p.oid = i.inhparent
 WHERE p.relnamespace = {world}::regnamespace
UNION ALL
SELECT 'runs', c.relname::text, NULL, NULL FROM pg_catalog.pg_class c
 WHERE c.relnamespace = {world}::regnamespace AND (EXISTS (
       SELECT 1 FROM pg_catalog.pg_depend x
         JOIN pg_catalog.pg_proc p ON p.oid = x.refobjid
        WHERE x.refclassid = 'pg_catalog.pg_proc'::regclass
          AND p.pronamespace <> 'pg_catalog'::regnamespace
          AND ((x.classid = 'pg_catalog.pg_attrdef'::regclass AND x.objid IN (
                  SELECT d.oid FROM pg_catalog.pg_attrdef d WHERE d.adrelid = c.oid))
            OR (x.classid = 'pg_catalog.pg_constraint'::regclass AND x.objid IN (
                  SELECT k.oid FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid))
            OR (x.classid = 'pg_catalog.pg_class'::regclass AND x.objid IN (
                  SELECT i.indexrelid FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid))
            OR (x.classid = 'pg_catalog.pg_class'::regclass AND x.objid = c.oid)))
    OR EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND t.typtype NOT IN ('b', 'p')
                  AND t.typnamespace <> 'pg_catalog'::regnamespace))
UNION ALL
SELECT 'code', p.proname::text, NULL, NULL FROM pg_catalog.pg_proc p
 WHERE p.pronamespace IN ({world}::regnamespace, {compat}::regnamespace)
UNION ALL
SELECT 'compat', c.relname::text, NULL, NULL FROM pg_catalog.pg_class c
 WHERE c.relnamespace = {compat}::regnamespace
UNION ALL
SELECT 'schema', n.nspname::text, NULL, NULL FROM pg_catalog.pg_namespace n
 WHERE n.nspname <> {world}
"""

_BUILTINS = """
SELECT 'builtin', p.proname::text, NULL,
       ARRAY[pg_catalog.bool_or(p.provolatile <> 'i')::text,
             pg_catalog.bool_or(p.provolatile = 'v')::text]
  FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace
 GROUP BY p.proname
"""
_builtins: dict[str, list[Any]] = {}
"""`_BUILTINS`' rows by server (PostgreSQL's own functions do not change while it runs)."""


def read_catalog(conn: psycopg.Connection[Any], server: str, world: str, compat: str) -> Catalog:
    """The world's schema as it is now (one query on a trusted connection; PostgreSQL's own
    functions are read once for each `server`)."""
    query = _QUERY.format(world=literal(world), compat=literal(compat))
    builtins = _builtins.get(server)
    if builtins is None:
        rows = conn.execute(f"{query} UNION ALL {_BUILTINS}").fetchall()
        _builtins[server] = [r for r in rows if r[0] == "builtin"]
    else:
        rows = [*conn.execute(query).fetchall(), *builtins]
    return build_catalog(rows)


def build_catalog(rows: list[Any]) -> Catalog:
    """`Catalog` from `_QUERY`'s rows (kind, name, detail, flags)."""
    kinds: dict[str, str] = {}
    flags: dict[str, list[str]] = {}
    view_rels: dict[str, set[tuple[str, str]]] = {}
    view_bad: set[str] = set()
    cascades: dict[str, set[str]] = {}
    cascade_out: set[str] = set()
    under: dict[str, set[str]] = {}
    runs: set[str] = set()
    code: set[str] = set()
    compat: set[str] = set()
    schemas: set[str] = set()
    unsteady: set[str] = set()
    volatile: set[str] = set()
    for kind, name, detail, extra in rows:
        if kind == "rel":
            kinds[name], flags[name] = detail, list(extra)
        elif kind == "viewrel":
            view_rels.setdefault(name, set()).add((detail, extra[0]))
        elif kind == "viewcode":
            if detail != "pg_catalog" or extra[1] != "i":
                view_bad.add(name)
        elif kind == "viewdef":
            if detail is None or any(word in detail.lower() for word in CLOCK_WORDS):
                view_bad.add(name)
        elif kind == "cascade":
            cascades.setdefault(name, set()).add(detail)
            if extra[0] != "true":
                cascade_out.add(name)
        elif kind == "under":
            under.setdefault(name, set()).add(detail)
        elif kind == "runs":
            runs.add(name)
        elif kind == "code":
            code.add(name)
        elif kind == "compat":
            compat.add(name)
        elif kind == "schema":
            schemas.add(name)
        elif kind == "builtin":
            if extra[0] == "true":
                unsteady.add(name)
            if extra[1] == "true":
                volatile.add(name)
    unkept = {n for n, k in kinds.items() if k in ("S", "f") or flags[n][0] == "true"} | compat
    tables = {n: frozenset(_closure(n, under)) for n, k in kinds.items() if k in ("r", "p", "m")}
    views = {n: _view_reads(n, view_rels, view_bad, kinds, tables, unkept, set())
             for n, k in kinds.items() if k == "v"}
    for name in runs & set(flags):
        flags[name] = [*flags[name], "true"]  # a default, check or index that calls code
    writes = {n: _write_reach(n, cascades, cascade_out, under, kinds, flags) for n in tables}
    return Catalog(tables=tables, views=views, unkept=frozenset(unkept), writes=writes,
                   code=frozenset(code), unsteady=frozenset(unsteady),
                   volatile=frozenset(volatile), schemas=frozenset(schemas))


def _closure(name: str, edges: Mapping[str, set[str]]) -> set[str]:
    """`name` and everything reachable from it along `edges`."""
    seen, todo = {name}, [name]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _view_reads(name: str, rels: Mapping[str, set[tuple[str, str]]], bad: set[str],
                kinds: Mapping[str, str], tables: Mapping[str, frozenset[str]],
                unkept: set[str], seen: set[str]) -> frozenset[str] | None:
    """The tables a view reads (through the views it reads), or None if it cannot be kept."""
    if name in bad or name in seen:
        return None
    seen = seen | {name}
    found: set[str] = set()
    for schema, rel in rels.get(name, ()):
        if schema != "" or rel in unkept:
            return None  # outside the world, or never kept
        if rel in tables:
            found |= tables[rel]
        elif kinds.get(rel) == "v":
            inner = _view_reads(rel, rels, bad, kinds, tables, unkept, seen)
            if inner is None:
                return None
            found |= inner
        else:
            return None  # outside the world, or a relation of a kind not kept
    return frozenset(found)


def _write_reach(name: str, cascades: Mapping[str, set[str]], cascade_out: set[str],
                 under: Mapping[str, set[str]], kinds: Mapping[str, str],
                 flags: Mapping[str, list[str]]) -> frozenset[str] | None:
    """What a write to `name` may change: it, the tables under it, what its foreign keys
    cascade to (and so on); None when any of those runs code or leaves the world."""
    edges: dict[str, set[str]] = {}
    for table in set(cascades) | set(under):
        edges[table] = cascades.get(table, set()) | under.get(table, set())
    reach = _closure(name, edges)
    for table in reach:
        if table in cascade_out or table not in kinds:
            return None
        if kinds[table] not in ("r", "p", "m") or "true" in flags[table][1:]:
            return None
    return frozenset(reach)
