"""Row-level security is raceday's to leave off: a policy would hide rows from its checks.

A team's policy (`USING (current_user NOT LIKE '%\\_check')`) once showed the checker's login
an empty `endpoint`, live and in every fork (pg_dump copies policies). Three layers, each
enough on its own for the checks to stay honest:

- a player's `CREATE POLICY` and `ALTER TABLE … ROW LEVEL SECURITY` are refused before they
  are sent (`refusal`);
- after any statement that changed the catalogs (a DO block, a function run by a trigger)
  and after a fork is built, raceday turns row-level security off on every world table and
  drops every policy (`unblind`): statements that run none of a team's code;
- the checker reads with `row_security = off`, with which PostgreSQL raises an error rather
  than filter rows: a check a policy would shape fails closed, as a harm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

REFUSED = ("row-level security is not allowed here: a policy would hide rows from the "
           "exercise's checks")


def refusal(keyword: str, words: Sequence[str]) -> str | None:
    """Why a player's statement touching row-level security is refused, or None."""
    if keyword in ("CREATE", "ALTER") and len(words) > 1 and words[1] == "POLICY":
        return REFUSED
    if keyword == "ALTER" and "SECURITY" in words and any(
            words[i:i + 3] == ["ROW", "LEVEL", "SECURITY"] for i in range(len(words))):
        return REFUSED
    return None


def unblind(admin: psycopg.Connection[Any], world: str) -> int:
    """Turn row-level security off on `world`'s tables and drop their policies; how many
    tables were changed (0: nothing to do, one catalog read)."""
    tables = admin.execute(
        "SELECT c.oid::regclass::text, ARRAY(SELECT p.polname::text FROM pg_catalog.pg_policy p "
        "WHERE p.polrelid = c.oid) FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'p') AND "
        "(c.relrowsecurity OR c.relforcerowsecurity OR EXISTS (SELECT 1 FROM "
        "pg_catalog.pg_policy p WHERE p.polrelid = c.oid))", [world]).fetchall()
    statements: list[str] = []
    for table, policies in tables:
        statements.append(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY, "
                          "DISABLE ROW LEVEL SECURITY")
        statements += [f'DROP POLICY "{str(p).replace(chr(34), chr(34) * 2)}" ON {table}'
                       for p in policies]
    if statements:
        admin.execute(";\n".join(statements))
    return len(tables)
