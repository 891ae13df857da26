"""Running SQL that may call a team's code, from raceday's own connection, as a role without
raceday's privileges.

raceday's login (the DSN's) has CREATEROLE and reads raceday's state. A fork copies the
team's rows (`load_seed`), and its indexes and constraints are rebuilt: any CHECK, default,
trigger, rule, policy or index expression a team wrote runs then, as whoever runs the
statement. `SET ROLE` on raceday's connection is no sandbox: the team's code could
`RESET ROLE`. So the statement runs inside a SECURITY DEFINER function owned by the
world's NOLOGIN code role (`SessionNames.world_code`): PostgreSQL refuses any change of role
within a security-definer function ("cannot set parameter role"), so everything called from
it acts as that role, which has no CREATEROLE and no USAGE on raceday's state schema.

The function lives in the session's state schema (no player role has USAGE on it), its
EXECUTE revoked from PUBLIC; its `SET search_path` clause puts the caller's search path
back when it returns, whatever the team's code set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

    from raceday.store.postgres.world import SessionNames

RUNNER = "run_as_world_code"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def runner_name(names: SessionNames) -> str:
    return f"{_quoted(names.state)}.{RUNNER}"


def make_runner(admin: psycopg.Connection[Any], names: SessionNames) -> None:
    """The world code role's runner (the role and the state schema exist, raceday's login is
    a member of the role). The role may create in the state schema only while its function
    is handed to it."""
    state, code = _quoted(names.state), _quoted(names.world_code)
    admin.execute(";\n".join([
        f"GRANT CREATE ON SCHEMA {state} TO {code}",
        f"CREATE FUNCTION {runner_name(names)}(statement text, path text) RETURNS void "
        "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ BEGIN "
        "PERFORM pg_catalog.set_config('search_path', path, true); EXECUTE statement; END $$",
        f"ALTER FUNCTION {runner_name(names)}(text, text) OWNER TO {code}",
        f"REVOKE CREATE ON SCHEMA {state} FROM {code}",
        f"REVOKE ALL ON FUNCTION {runner_name(names)}(text, text) FROM PUBLIC",
    ]))


def run_as_code(admin: psycopg.Connection[Any], names: SessionNames, statement: str,
                search_path: str) -> None:
    """Run one statement as the world code role, `search_path` its schemas."""
    admin.execute(f"SELECT {runner_name(names)}(%s, %s)", [statement, search_path])


def rebuild(admin: psycopg.Connection[Any], names: SessionNames, post: str) -> list[str]:
    """Run a fork's post-data (pg_dump's indexes, constraints, triggers, rules) as the world
    code role, made a member of the fork's roles for the while (an index or a constraint
    is its table owner's to make): an index expression or a constraint a team wrote runs on
    the copied rows as the team, never as raceday. Each statement that fails is a warning."""
    from raceday.store.dialect import postgres as pgsql
    from raceday.store.postgres.world import server_message

    roles = [str(r[0]) for r in admin.execute(
        "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE %s AND NOT rolcanlogin "
        "AND rolname NOT IN (%s, %s)",
        [f"rd\\_{names.session}\\_%", names.world_code, names.checker]).fetchall()]
    code = _quoted(names.world_code)
    members = ", ".join(_quoted(r) for r in roles)
    if roles:
        admin.execute(f"GRANT {members} TO {code}")
    warnings: list[str] = []
    try:
        for statement in pgsql.split(post):
            try:
                run_as_code(admin, names, statement, "pg_catalog")
            except Exception as exc:
                what = " ".join(statement.split())[:80]
                warnings.append(f"{what} could not be rebuilt ({server_message(exc)})")
    finally:
        if roles:
            admin.execute(f"REVOKE {members} FROM {code}")
    return warnings
