"""A session's world on the PostgreSQL server: its names, building it, describing it,
dropping it; and the few helpers every connection of raceday's uses.

What `PostgresStore` (store.py) does before and after a night: the schemas
(`rd_<id>_world`, `_state`, `_compat`), the roles and their logins, the GRANTs of each role's
rights, the copy of a world for the replay (pg_dump of the schema, the exercise's seed rows).
The trusted side only: no player's statement runs here.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from raceday.errors import ExerciseError
from raceday.store.base import StoreError, one_line
from raceday.store.dialect import postgres as pgsql
from raceday.store.postgres.runner import make_runner, run_as_code
from raceday.store.protocol import RoleRights
from raceday.store.results import ColumnInfo, ForeignKeyInfo, TableInfo

if TYPE_CHECKING:
    import psycopg

WORLD_TIME_LIMIT_MS = 30_000
"""How long the exercise's world script may run while it is built."""
_IDENT = re.compile(r"[^a-z0-9_]+")


class SessionNames:
    """The PostgreSQL names of one session: schemas and roles, all prefixed `rd_<id>_`."""

    def __init__(self, session: str, role_ids: Sequence[str]) -> None:
        self.session = session
        prefix = f"rd_{session}_"
        self.world = prefix + "world"
        self.state = prefix + "state"
        self.compat = prefix + "compat"
        self.checker = prefix + "check"
        self.world_code = prefix + "worldcode"
        self.roles: dict[str, str] = {}
        used: set[str] = {self.checker}
        for role_id in role_ids:
            slug = _IDENT.sub("_", role_id.lower()).strip("_")[:40] or "role"
            name, n = prefix + slug, 1
            while name in used:
                n += 1
                name = f"{prefix}{slug}_{n}"
            used.add(name)
            self.roles[role_id] = name

    @staticmethod
    def login(role: str) -> str:
        return role + "_login"

    def owner(self, index: int) -> str:
        return f"rd_{self.session}_own{index}"

    def all_roles(self) -> list[str]:
        return [*self.roles.values(), self.checker]



# -- building -----------------------------------------------------------------------------


def build_world(
    admin: psycopg.Connection[Any],
    names: SessionNames,
    world_sql: str,
    roles: Sequence[RoleRights],
    passwords: Mapping[str, str],
) -> None:
    for schema in (names.world, names.state, names.compat):
        admin.execute(f"CREATE SCHEMA {quoted(schema)}")
    make_roles(admin, names, passwords)
    code_role(admin, names)
    make_runner(admin, names.state, names.world_code)
    admin.execute(f"SET statement_timeout = {WORLD_TIME_LIMIT_MS}")
    line = 1
    try:
        for piece in _pieces(world_sql):  # as the world's code role: see runner.py
            line = piece[0]
            run_as_code(admin, names.state, piece[1], quoted(names.world))
    except Exception as exc:
        state = getattr(exc, "sqlstate", "")
        why = (f"took longer than {WORLD_TIME_LIMIT_MS / 1000:g} s to build (a runaway query?)"
               if state == "57014" else server_message(exc))
        raise ExerciseError([f"world SQL failed: line {line}: {why}"]) from exc
    admin.execute("RESET statement_timeout")
    admin.execute(f"CREATE TABLE {quoted(names.state)}.world_tables "
                  "(name TEXT PRIMARY KEY, kind TEXT NOT NULL)")
    admin.execute(
        f"INSERT INTO {quoted(names.state)}.world_tables (name, kind) "
        "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm')",
        [names.world],
    )
    schema_rights(admin, names, roles)
    _own_tables(admin, names, roles)
    _world_code(admin, names)
    grant_rights(admin, names, roles)


def run_all(admin: psycopg.Connection[Any], statements: Sequence[str]) -> None:
    """Statements raceday wrote (its own names and literals, nothing to bind) in one message:
    one round trip where there was one each, the server running them in order, as one
    transaction (a world being built is dropped whole if one fails)."""
    if statements:
        admin.execute(";\n".join(statements))


def make_roles(admin: psycopg.Connection[Any], names: SessionNames, passwords: Mapping[str, str]) -> None:
    """Each exercise role and the checker: a NOLOGIN role, and a login that is its only member."""
    me = quoted(current_user(admin))
    made: list[str] = []
    for pg_role in names.all_roles():
        login = SessionNames.login(pg_role)
        made += [f"CREATE ROLE {quoted(pg_role)} NOLOGIN",
                 f"CREATE ROLE {quoted(login)} LOGIN NOINHERIT PASSWORD {literal(passwords[login])} "
                 f"IN ROLE {quoted(pg_role)}",
                 f"GRANT {quoted(pg_role)} TO {me}"]
    run_all(admin, made)


def schema_rights(admin: psycopg.Connection[Any], names: SessionNames, roles: Sequence[RoleRights]) -> None:
    """Who may use the session's schemas, and what becomes of what roles make during play."""
    _compat(admin, names)
    everyone = ", ".join(quoted(r) for r in names.all_roles())
    rights = [f"GRANT USAGE ON SCHEMA {quoted(names.world)} TO {everyone}",
              f"GRANT USAGE ON SCHEMA {quoted(names.compat)} TO {quoted(names.checker)}",
              f"GRANT SELECT ON ALL TABLES IN SCHEMA {quoted(names.compat)} "
              f"TO {quoted(names.checker)}"]
    for role in roles:
        pg_role = names.roles[role.id]
        if role.schema:
            rights.append(f"GRANT CREATE ON SCHEMA {quoted(names.world)} TO {quoted(pg_role)}")
        # what a role makes during play is open to every role (and the checker may read it)
        for kind, given in (("TABLES", "ALL"), ("SEQUENCES", "ALL"), ("FUNCTIONS", "EXECUTE"),
                            ("TYPES", "USAGE")):
            rights.append(f"ALTER DEFAULT PRIVILEGES FOR ROLE {quoted(pg_role)} IN SCHEMA "
                          f"{quoted(names.world)} GRANT {given} ON {kind} TO {everyone}")
    run_all(admin, rights)


def _world_code(admin: psycopg.Connection[Any], names: SessionNames) -> None:
    """The world's own trigger functions act for the world, not for the role that fired them.

    As in SQLite, where the exercise's triggers are trusted: a role that may write `endpoint`
    need not be allowed to write the `audit` table its trigger fills. They become SECURITY
    DEFINER functions of a NOLOGIN role that may write the world's tables and nothing else,
    with a pinned search_path (pg_temp last), so hijacking one reaches no further.
    """
    code, world = quoted(names.world_code), quoted(names.world)
    made: list[str] = []
    functions = admin.execute(
        "SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p WHERE p.pronamespace = "
        "%s::regnamespace AND p.prorettype = 'pg_catalog.trigger'::pg_catalog.regtype", [names.world]
    ).fetchall()
    for (signature,) in functions:
        made += [f"ALTER FUNCTION {signature} SECURITY DEFINER SET search_path = {world}, pg_temp",
                 f"ALTER FUNCTION {signature} OWNER TO {code}"]
    run_all(admin, made)


def code_role(admin: psycopg.Connection[Any], names: SessionNames) -> None:
    """The world's code role (`_world_code`), which also builds the world: it owns what the
    exercise's world SQL makes, and may create in the world's schema, nothing more."""
    code = quoted(names.world_code)
    run_all(admin, [f"CREATE ROLE {code} NOLOGIN", f"GRANT {code} TO {quoted(current_user(admin))}",
                    f"GRANT USAGE, CREATE ON SCHEMA {quoted(names.world)} TO {code}"])


def dump_schema(dsn: str, schema: str, *sections: str) -> list[str]:
    """pg_dump's text of each section of a schema (`pre-data`, `post-data`): its definitions,
    no data, no GRANTs. One pg_dump a section, all running at once (each is mostly its own
    start and the server's catalog reads)."""
    import shutil

    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise StoreError("copying a PostgreSQL world needs pg_dump (PostgreSQL's client tools)")
    from raceday.store.postgres.driver import full_pauses, server_full

    pauses = full_pauses()
    while True:
        texts, failed = _dumped(pg_dump, dsn, schema, sections)
        pause = next(pauses, None) if server_full(failed) else None
        if pause is None:
            break
        time.sleep(pause)
    if failed:
        raise StoreError(f"pg_dump failed: {one_line(failed)}")
    return texts


def _dumped(pg_dump: str, dsn: str, schema: str,
            sections: Sequence[str]) -> tuple[list[str], str]:
    """Each section's text, and the first pg_dump's error ("" when none failed)."""
    running = [subprocess.Popen(
        [pg_dump, "--dbname", dsn, "--schema-only", "--no-privileges", "--schema", schema,
         f"--section={section}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for section in sections]
    texts: list[str] = []
    failed = ""
    for dump in running:
        try:
            out, err = dump.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            dump.kill()
            out, err = dump.communicate()
            err = err or "timed out after 120 s"
        if dump.returncode != 0 and not failed:
            failed = err or f"exit status {dump.returncode}"
        # psql's own commands (\restrict) are not SQL
        texts.append("\n".join(line for line in out.splitlines() if not line.startswith("\\")))
    return texts, failed


def rebuild(admin: psycopg.Connection[Any], names: SessionNames, post: str) -> list[str]:
    """Run a fork's post-data (pg_dump's indexes, constraints, triggers, rules) as the world
    code role, made a member of the fork's roles for the while (an index or a constraint
    is its table owner's to make): an index expression or a constraint a team wrote runs on
    the copied rows as the team, never as raceday. Each statement that fails is a warning."""
    roles = [str(r[0]) for r in admin.execute(
        "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE %s AND NOT rolcanlogin "
        "AND rolname NOT IN (%s, %s)",
        [f"rd\\_{names.session}\\_%", names.world_code, names.checker]).fetchall()]
    code = quoted(names.world_code)
    members = ", ".join(quoted(r) for r in roles)
    if roles:
        admin.execute(f"GRANT {members} TO {code}")
    warnings: list[str] = []
    try:
        for statement in pgsql.split(post):
            try:
                run_as_code(admin, names.state, statement, "pg_catalog")
            except Exception as exc:
                what = " ".join(statement.split())[:80]
                warnings.append(f"{what} could not be rebuilt ({server_message(exc)})")
    finally:
        if roles:
            admin.execute(f"REVOKE {members} FROM {code}")
    return warnings


def load_seed(admin: psycopg.Connection[Any], names: SessionNames, seed_sql: str, live: str,
               renumber: str = "") -> list[str]:
    """Fill the new world's tables: seed rows where the seed has the table, else the live rows.

    `renumber` runs on the seed schema first, its foreign keys dropped (the seed schema is
    thrown away: the new world keeps the team's own constraints)."""
    seed = f"rd_{names.session}_seed"
    warnings: list[str] = []
    admin.execute(f"CREATE SCHEMA {quoted(seed)}; "
                  f"GRANT USAGE, CREATE ON SCHEMA {quoted(seed)} TO {quoted(names.world_code)}")
    admin.execute("SET search_path = pg_catalog")
    try:
        for _line, statement in _pieces(seed_sql):
            run_as_code(admin, names.state, statement, quoted(seed))
    except Exception as exc:
        raise ExerciseError([f"world SQL failed: {server_message(exc)}"]) from exc
    if renumber.strip():
        _renumber(admin, names, seed, renumber)

    def tables(schema: str) -> dict[str, list[str]]:
        rows = admin.execute(
            "SELECT c.relname, a.attname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a "
            "ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' "
            "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'p') "
            "ORDER BY c.relname, a.attnum",
            [schema]).fetchall()
        found: dict[str, list[str]] = {}
        for table, column in rows:
            found.setdefault(str(table), []).append(str(column))
        return found

    seeded, now, wanted = tables(seed), tables(live), tables(names.world)
    _loader_rights(admin, names, live, [t for t in wanted if t not in seeded and t in now])
    for table, columns in wanted.items():
        source, have = (seed, seeded[table]) if table in seeded else (live, now.get(table, []))
        common = ", ".join(quoted(c) for c in columns if c in have)
        if not common:
            continue
        try:  # the team's CHECKs, defaults and triggers fire: as the world's code role
            run_as_code(admin, names.state, f"INSERT INTO {quoted(names.world)}.{quoted(table)} "
                        f"({common}) OVERRIDING SYSTEM VALUE "
                        f"SELECT {common} FROM {quoted(source)}.{quoted(table)}",
                        quoted(names.world))
        except Exception as exc:
            warnings.append(f"table {table}: the seed rows do not fit the team's schema "
                            f"({server_message(exc)})")
    admin.execute(f"DROP SCHEMA {quoted(seed)} CASCADE")
    sequences = admin.execute(
        "SELECT s.oid::regclass::text, t.oid::regclass::text, a.attname FROM pg_catalog.pg_depend d "
        "JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S' "
        "JOIN pg_catalog.pg_class t ON t.oid = d.refobjid "
        "JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid "
        "WHERE s.relnamespace = %s::regnamespace AND d.deptype IN ('a', 'i')", [names.world]).fetchall()
    for sequence, table, column in sequences:  # a team's policy may call its code
        top = f"(SELECT max({quoted(str(column))}) FROM {table})"
        run_as_code(admin, names.state, f"SELECT pg_catalog.setval({literal(str(sequence))}, "
                    f"COALESCE({top}, 0) + 1, false)", quoted(names.world))
    return warnings


def _loader_rights(admin: psycopg.Connection[Any], names: SessionNames, live: str,
                   from_live: Sequence[str]) -> None:
    """What the world's code role needs to fill a fork: its tables and sequences, and the
    live world's tables the team made (their rows are copied as they are now)."""
    world, code = quoted(names.world), quoted(names.world_code)
    rights = [f"GRANT INSERT, SELECT ON ALL TABLES IN SCHEMA {world} TO {code}",
              f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {world} TO {code}"]
    if from_live:
        rights += [f"GRANT USAGE ON SCHEMA {quoted(live)} TO {code}",
                   f"GRANT SELECT ON {', '.join(f'{quoted(live)}.{quoted(t)}' for t in from_live)} "
                   f"TO {code}"]
    run_all(admin, rights)


def _renumber(admin: psycopg.Connection[Any], names: SessionNames, seed: str,
              renumber: str) -> None:
    """Run the exercise's renumbering on the seed rows with no foreign key in the way (what
    SQLite's `PRAGMA foreign_keys=OFF` gives; a non-superuser cannot turn PostgreSQL's off)."""
    keys = admin.execute(
        "SELECT conrelid::regclass::text, conname FROM pg_catalog.pg_constraint "
        "WHERE contype = 'f' AND connamespace = %s::regnamespace", [seed]).fetchall()
    for table, name in keys:
        admin.execute(f"ALTER TABLE {table} DROP CONSTRAINT {quoted(str(name))}")
    try:
        for _line, statement in _pieces(renumber):
            run_as_code(admin, names.state, statement, quoted(seed))
    except Exception as exc:
        raise ExerciseError([f"replay shifted seed SQL failed: {server_message(exc)}"]) from exc


def _pieces(world_sql: str) -> list[tuple[int, str]]:
    """(line, statement) for each statement of a world script."""
    out: list[tuple[int, str]] = []
    for statement in pgsql.split(world_sql):
        offset = world_sql.find(statement)
        out.append((world_sql.count("\n", 0, max(offset, 0)) + 1, statement))
    return out


def _own_tables(admin: psycopg.Connection[Any], names: SessionNames, roles: Sequence[RoleRights]) -> None:
    """Give each world table an owner role shared by the roles that may change its schema.

    ALTER TABLE ... ADD CONSTRAINT, CREATE INDEX and DROP need ownership in PostgreSQL: a
    role with `schema: true` that may write a table is a member of its owner role. Views stay
    raceday's: a view reads its tables with its owner's rights, which an owner role lacks.
    """
    tables = admin.execute(
        "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relnamespace = %s::regnamespace "
        "AND c.relkind IN ('r', 'p') ORDER BY c.relname", [names.world]
    ).fetchall()
    me = quoted(current_user(admin))
    made: list[str] = []
    for index, (table,) in enumerate(tables):
        owners = [names.roles[r.id] for r in roles if r.schema and r.may_write(str(table))]
        if not owners:
            continue
        owner = names.owner(index)
        made += [f"CREATE ROLE {quoted(owner)} NOLOGIN", f"GRANT {quoted(owner)} TO {me}",
                 f"GRANT {quoted(owner)} TO {', '.join(quoted(o) for o in owners)}",
                 # to own there, and to run the foreign-key checks PostgreSQL runs as the owner
                 f"GRANT USAGE, CREATE ON SCHEMA {quoted(names.world)} TO {quoted(owner)}",
                 f"ALTER TABLE {quoted(names.world)}.{quoted(str(table))} OWNER TO {quoted(owner)}"]
    run_all(admin, made)


def grant_rights(admin: psycopg.Connection[Any], names: SessionNames, roles: Sequence[RoleRights]) -> None:
    world = quoted(names.world)
    original = {str(r[0]) for r in admin.execute(
        f"SELECT name FROM {quoted(names.state)}.world_tables").fetchall()}
    objects = admin.execute(
        "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm', 'S')",
        [names.world],
    ).fetchall()
    everyone = ", ".join(quoted(r) for r in names.all_roles())
    grants: list[str] = []
    for name, kind in objects:
        target = f"{world}.{quoted(str(name))}"
        if kind == "S":
            grants.append(f"GRANT USAGE, SELECT, UPDATE ON SEQUENCE {target} TO {everyone}, "
                          f"{quoted(names.world_code)}")
            continue
        grants.append(f"GRANT ALL ON TABLE {target} TO {quoted(names.world_code)}")
        if str(name) not in original:
            grants.append(f"GRANT ALL ON TABLE {target} TO {everyone}")
            continue
        grants += [f"REVOKE ALL ON TABLE {target} FROM {everyone}",
                   f"GRANT SELECT ON TABLE {target} TO {quoted(names.checker)}"]
        for role in roles:
            rights = []
            if role.may_read(str(name)):
                rights.append("SELECT")
            if role.may_write(str(name)):
                rights += ["INSERT", "UPDATE", "DELETE", "TRIGGER", "REFERENCES"]
            if rights:
                grants.append(f"GRANT {', '.join(rights)} ON TABLE {target} "
                              f"TO {quoted(names.roles[role.id])}")
    run_each(admin, grants)  # a table dropped meanwhile leaves every other one's rights set
    _owners_read(admin, names, roles,
                 {str(n) for n, k in objects if k != "S" and str(n) in original})


def _owners_read(admin: psycopg.Connection[Any], names: SessionNames, roles: Sequence[RoleRights],
                 tables: set[str]) -> None:
    """Each table's owner role may read the world's tables (of the world as first built, as
    they are now) that every one of its members may read.

    PostgreSQL runs a foreign key's cascade as the owner of the table it changes, and a
    player's trigger the cascade fires acts for that owner: `DELETE FROM plan` cascading to
    `plan_record` runs a guard on `plan_record` that reads `endpoint` as plan_record's owner.
    On SQLite the same guard reads as the role that made it. Reads every member already has
    widen no member's rights.
    """
    by_name = {names.roles[r.id]: r for r in roles}
    owners = admin.execute(
        "SELECT r.rolname, ARRAY(SELECT m.rolname::text FROM pg_catalog.pg_auth_members a "
        "JOIN pg_catalog.pg_roles m ON m.oid = a.member WHERE a.roleid = r.oid) "
        "FROM pg_catalog.pg_roles r WHERE r.rolname LIKE %s",
        [f"rd\\_{names.session}\\_own%"]).fetchall()
    for owner, members in owners:
        players = [by_name[m] for m in members if m in by_name]
        readable = sorted(t for t in tables if players and all(p.may_read(t) for p in players))
        if readable:
            targets = ", ".join(f"{quoted(names.world)}.{quoted(t)}" for t in readable)
            admin.execute(f"GRANT SELECT ON TABLE {targets} TO {quoted(str(owner))}")


def _compat(admin: psycopg.Connection[Any], names: SessionNames) -> None:
    """The two SQLite catalog reads the engine's checks make, answered for this world.

    `sqlite_master` and `pragma_table_info(t)` in a schema only the checker can use, first on
    its search path (no player can put an object there to shadow them).
    """
    compat, world = quoted(names.compat), names.world.replace("'", "''")
    admin.execute(
        f"CREATE VIEW {compat}.sqlite_master AS "
        "SELECT CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END AS type, "
        "c.relname::text AS name, c.relname::text AS tbl_name, "
        "CASE WHEN c.relkind = 'v' THEN pg_catalog.pg_get_viewdef(c.oid) "
        "ELSE 'CREATE TABLE ' || c.relname END AS sql "
        f"FROM pg_catalog.pg_class c WHERE c.relnamespace = '{world}'::regnamespace "
        "AND c.relkind IN ('r', 'v', 'p', 'm') "
        "UNION ALL SELECT 'trigger', t.tgname::text, c.relname::text, "
        "pg_catalog.pg_get_triggerdef(t.oid) FROM pg_catalog.pg_trigger t "
        f"JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = '{world}'::regnamespace "
        "AND NOT t.tgisinternal"
    )
    admin.execute(
        f"CREATE FUNCTION {compat}.pragma_table_info(t text) RETURNS TABLE "
        "(cid int, name text, type text, \"notnull\" int, dflt_value text, pk int) "
        "LANGUAGE sql STABLE SET search_path = pg_catalog AS $$ "
        "SELECT a.attnum::int - 1, a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), "
        "a.attnotnull::int, pg_catalog.pg_get_expr(d.adbin, d.adrelid), "
        "COALESCE((SELECT k.n FROM pg_catalog.pg_index i, unnest(i.indkey) WITH ORDINALITY k(att, n) "
        "WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.att = a.attnum), 0)::int "
        "FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d "
        "ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
        f"WHERE a.attrelid = (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relnamespace = "
        f"'{world}'::regnamespace AND lower(c.relname) = lower(t)) "
        "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum $$"
    )


def drop_world(dsn: str, session: str) -> None:
    """Remove a session's world from the server: its schemas and roles (`rd_<session>_*`)."""
    admin = connect(dsn)
    try:
        drop_schemas(admin, session)
    finally:
        admin.close()


def drop_schemas(admin: psycopg.Connection[Any], session: str) -> None:
    """Remove a session's schemas and roles; what is already gone is skipped."""
    admin.execute("SET statement_timeout = 0")
    pattern = f"rd\\_{session}\\_%"
    schemas = admin.execute("SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname LIKE %s",
                            [pattern]).fetchall()
    run_each(admin, [f"DROP SCHEMA IF EXISTS {quoted(str(schema))} CASCADE"
                       for (schema,) in schemas])
    roles = admin.execute(
        "SELECT rolname, pg_catalog.pg_has_role(current_user, oid, 'MEMBER') FROM pg_catalog.pg_roles "
        "WHERE rolname LIKE %s ORDER BY rolcanlogin DESC, rolname", [pattern]).fetchall()
    # a role made but not yet granted to raceday owns nothing
    run_each(admin, [f"DROP OWNED BY {quoted(str(role))} CASCADE" for role, member in roles
                       if member])
    run_each(admin, [f"DROP ROLE IF EXISTS {quoted(str(role))}" for role, _member in roles])


def run_each(admin: psycopg.Connection[Any], statements: Sequence[str]) -> None:
    """`run_all`, and one at a time when that fails (a table or role another connection took
    first): then each that can still be made is made, and the first failure is raised. For
    what must not be left half done by one failure: rights, and a drop."""
    try:
        run_all(admin, statements)
        return
    except Exception as exc:
        failed: Exception = exc
    first: Exception | None = None
    for statement in statements:
        try:
            admin.execute(statement)
        except Exception as exc:
            first = first or exc
    if first is not None:
        raise first from failed


def describe_schema(admin: psycopg.Connection[Any], world: str) -> list[TableInfo]:
    rows = admin.execute(
        "SELECT c.oid, c.relname, c.relkind FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = %s::regnamespace AND c.relkind IN ('r', 'v', 'p', 'm') "
        "ORDER BY c.relname", [world]).fetchall()
    infos: list[TableInfo] = []
    for oid, name, kind in rows:
        columns = admin.execute(
            "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, "
            "EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = a.attrelid "
            "AND i.indisprimary AND a.attnum = ANY (i.indkey)) "
            "FROM pg_catalog.pg_attribute a WHERE a.attrelid = %s AND a.attnum > 0 "
            "AND NOT a.attisdropped ORDER BY a.attnum", [oid]).fetchall()
        triggers = admin.execute(
            "SELECT tgname FROM pg_catalog.pg_trigger WHERE tgrelid = %s AND NOT tgisinternal "
            "ORDER BY tgname", [oid]).fetchall()
        fks = admin.execute(
            "SELECT (SELECT array_agg(a.attname ORDER BY k.n) FROM unnest(con.conkey) "
            "WITH ORDINALITY k(att, n) "
            "JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.att), "
            "f.relname, (SELECT array_agg(a.attname ORDER BY k.n) FROM unnest(con.confkey) WITH ORDINALITY "
            "k(att, n) JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.att) "
            "FROM pg_catalog.pg_constraint con JOIN pg_catalog.pg_class f ON f.oid = con.confrelid "
            "WHERE con.conrelid = %s AND con.contype = 'f' ORDER BY con.conname", [oid]).fetchall()
        if kind in ("v", "m"):
            view = admin.execute("SELECT pg_catalog.pg_get_viewdef(%s::oid)", [oid]).fetchone()
            sql = f"CREATE VIEW {name} AS {view[0] if view else ''}"
        else:
            # PostgreSQL keeps no CREATE text: one is written from the catalog, a line per
            # column and per constraint, so a guard added with ALTER TABLE shows like SQLite's.
            constraints = admin.execute(
                "SELECT conname, pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint "
                "WHERE conrelid = %s ORDER BY contype, conname", [oid]).fetchall()
            lines = [f"    {c[0]} {c[1]}{' NOT NULL' if c[2] else ''}" for c in columns]
            lines += [f"    CONSTRAINT {c[0]} {c[1]}" for c in constraints]
            sql = f"CREATE TABLE {name} (\n" + ",\n".join(lines) + "\n)"
        infos.append(TableInfo(
            name=str(name),
            kind="view" if kind in ("v", "m") else "table",
            columns=tuple(ColumnInfo(str(c[0]), str(c[1]), bool(c[2]), bool(c[3])) for c in columns),
            sql=sql,
            triggers=tuple(str(t[0]) for t in triggers),
            foreign_keys=tuple(ForeignKeyInfo(tuple(f[0]), str(f[1]), tuple(f[2])) for f in fks),
        ))
    return infos


# -- helpers ------------------------------------------------------------------------------


def connect(dsn: str, user: str | None = None, password: str | None = None) -> psycopg.Connection[Any]:
    try:
        from raceday.store.postgres import driver
    except ImportError as exc:
        raise StoreError("a PostgreSQL world needs psycopg: pip install 'raceday[postgres]'") from exc
    try:
        return driver.connect(dsn, user, password)
    except driver.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL: {one_line(str(exc))}") from exc


def current_user(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_user").fetchone()
    return str(row[0]) if row else ""


def end_transaction(conn: psycopg.Connection[Any], word: str) -> None:
    """End raceday's transaction and release any session advisory lock a player took."""
    conn.execute(f"{word}; SELECT pg_catalog.pg_advisory_unlock_all()")


def as_sql(text: str) -> Any:
    """Trusted SQL text built by raceday, for psycopg's typed `execute`."""
    return text.encode("utf-8")


def literal(text: str) -> str:
    """A string literal for utility statements, which take no parameters."""
    return "'" + text.replace("'", "''") + "'"


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def server_message(exc: BaseException) -> str:
    """The server's own sentence (without the LINE/QUERY context), on one line."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    return one_line(str(primary or exc)) or type(exc).__name__
