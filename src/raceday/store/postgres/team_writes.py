"""Which writes of a statement the team's own triggers and rules made, on PostgreSQL.

SQLite's authorizer names the trigger behind each write (`made_writes`). PostgreSQL counts
rows per table and names nobody, so a write is the team's when the statement wrote a table
it does not name itself, a trigger or rule of the team's sits on a table it wrote, and no
trigger of the world's own could have written that table. The judge reads these pairs as it
reads SQLite's: a team object writing what only the service brings back forges the night.

What this cannot see: a team's BEFORE trigger that changes the row the service writes (the
same table, no extra write), and a trigger the team made on a function of the world's."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

_OBJECTS = (
    "SELECT t.tgname, c.relname, pg_catalog.pg_get_userbyid(p.proowner), p.prosrc "
    "FROM pg_catalog.pg_trigger t "
    "JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid "
    "WHERE n.nspname = %s AND NOT t.tgisinternal "
    "UNION ALL "
    "SELECT r.rulename, c.relname, pg_catalog.pg_get_userbyid(c.relowner), "
    "pg_catalog.pg_get_ruledef(r.oid) "
    "FROM pg_catalog.pg_rewrite r "
    "JOIN pg_catalog.pg_class c ON c.oid = r.ev_class "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = %s AND r.rulename <> '_RETURN'"
)
"""Each trigger and rule on the world's tables: its name, its table, who owns the code it
runs (a trigger's function, a rule's table) and that code's text."""

_WRITES = re.compile(r'\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:ONLY\s+)?'
                     r'(?:"?[\w$]+"?\s*\.\s*)?"?([\w$]+)"?', re.IGNORECASE)


def written_by(code: str) -> set[str]:
    """The tables a trigger function's or a rule's text writes (lower case)."""
    return {m.group(1).lower() for m in _WRITES.finditer(code)}


def team_made_writes(conn: psycopg.Connection[Any], schema: str, team_roles: Collection[str],
                     statement: str, writes: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """(the team's trigger or rule, a table it made the statement write) for each table the
    statement wrote beyond those its own text writes that the world's own triggers do not
    explain; () when the statement wrote only what it names. `conn` is idle (the
    statement's transaction ended), logged in as a role of the world's."""
    written = {w.lower() for w in writes}
    named = written_by(statement) & written
    extra = written - named
    if not extra:
        return ()
    objects = [(str(r[0]), str(r[1]).lower(), str(r[2]), str(r[3] or ""))
               for r in conn.execute(_OBJECTS, [schema, schema]).fetchall()]
    team = sorted(name for name, table, owner, _code in objects
                  if owner in team_roles and table in written)
    if not team:
        return ()
    explained = _world_reach(objects, team_roles, named)
    return tuple((team[0], table) for table in sorted(extra - explained))


def _world_reach(objects: list[tuple[str, str, str, str]], team_roles: Collection[str],
                 start: set[str]) -> set[str]:
    """The tables the world's own triggers may write, starting from writes of `start`
    (and of whatever they write in turn)."""
    world = [(table, written_by(code)) for _name, table, owner, code in objects
             if owner not in team_roles]
    reach, frontier = set(start), set(start)
    while frontier:
        more = {w for table, writes in world if table in frontier for w in writes} - reach
        reach |= more
        frontier = more
    return reach
