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

RUNNER = "run_as_world_code"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def runner_name(state: str) -> str:
    return f"{_quoted(state)}.{RUNNER}"


def make_runner(admin: psycopg.Connection[Any], state_schema: str, code_role: str) -> None:
    """The world code role's runner in the session's state schema (both exist, raceday's
    login is a member of the role). The role may create in the state schema only while its
    function is handed to it."""
    state, code = _quoted(state_schema), _quoted(code_role)
    run = runner_name(state_schema)
    admin.execute(";\n".join([
        f"GRANT CREATE ON SCHEMA {state} TO {code}",
        f"CREATE FUNCTION {run}(statement text, path text) RETURNS void "
        "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ BEGIN "
        "PERFORM pg_catalog.set_config('search_path', path, true); EXECUTE statement; END $$",
        f"ALTER FUNCTION {run}(text, text) OWNER TO {code}",
        f"REVOKE CREATE ON SCHEMA {state} FROM {code}",
        f"REVOKE ALL ON FUNCTION {run}(text, text) FROM PUBLIC",
    ]))


def run_as_code(admin: psycopg.Connection[Any], state_schema: str, statement: str,
                search_path: str) -> None:
    """Run one statement as the world code role (its runner is in `state_schema`),
    `search_path` its schemas."""
    admin.execute(f"SELECT {runner_name(state_schema)}(%s, %s)", [statement, search_path])

