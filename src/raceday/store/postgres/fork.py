"""A new world from one world's schema: what the replay plays its nights in on PostgreSQL
(`PostgresStore.fork`; store/replay_world.py does it for SQLite with a file).

The team's tables, constraints, indexes, triggers and functions, as pg_dump writes their
definitions, made again in a new session's schema under roles mapped to the new session's,
holding the rows of the world as the exercise built it. Needs pg_dump.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from raceday.store.postgres.runner import make_runner
from raceday.store.postgres.unblind import unblind
from raceday.store.postgres.world import (
    SessionNames,
    connect,
    current_user,
    drop_schemas,
    dump_schema,
    grant_rights,
    literal,
    load_seed,
    make_roles,
    quoted,
    rebuild,
    run_all,
    schema_rights,
)
from raceday.store.protocol import RoleRights

if TYPE_CHECKING:
    import psycopg


@dataclass(frozen=True)
class ForkSource:
    """A world's schema as `PostgresStore.fork` copies it (`read_source`)."""

    session: str
    pre: str
    post: str
    original: tuple[str, ...]
    owners: tuple[tuple[str, tuple[str, ...]], ...]

    def digest(self) -> str:
        """What a world forked from this source is built of, whichever session it is: the
        schema's definitions as pg_dump gives them (the session's prefix taken out of every
        name), its original tables and its owner roles with their members. The rows are the
        seed's in every fork, and the rights are raceday's: two sources with one digest fork
        into the same world."""
        prefix = f"rd_{self.session}_"

        def plain(text: str) -> str:
            return text.replace(prefix, "rd__")

        owners = sorted((plain(owner), sorted(plain(m) for m in members))
                        for owner, members in self.owners)
        return hashlib.sha256(json.dumps([plain(self.pre), plain(self.post),
                                          sorted(self.original), owners]).encode()).hexdigest()


def read_source(dsn: str, admin: psycopg.Connection[Any], names: SessionNames) -> ForkSource:
    """What a fork copies of the world `names` holds: its schema's definitions (pg_dump's
    pre-data and post-data sections), the world's original tables and the owner roles with
    their members. Read once, it serves every fork of a replay (two pg_dump runs each)."""
    pre, post = dump_schema(dsn, names.world, "pre-data", "post-data")
    original = tuple(str(r[0]) for r in admin.execute(
        f"SELECT name FROM {quoted(names.state)}.world_tables").fetchall())
    owners = tuple((str(r[0]), tuple(str(m) for m in r[1])) for r in admin.execute(
        "SELECT r.rolname, ARRAY(SELECT m.rolname::text FROM pg_catalog.pg_auth_members a "
        "JOIN pg_catalog.pg_roles m ON m.oid = a.member WHERE a.roleid = r.oid) "
        "FROM pg_catalog.pg_roles r WHERE r.rolname LIKE %s",
        [f"rd\\_{names.session}\\_own%"]).fetchall())
    return ForkSource(names.session, pre, post, original, owners)


def build_fork(dsn: str, live: SessionNames, roles: Sequence[RoleRights], seed_sql: str,
               renumber: str, source: ForkSource,
               ) -> tuple[str, dict[str, str], psycopg.Connection[Any], list[str]]:
    """A new session's world from `source` (the world `live` names), on a connection of its
    own: its session id, its logins' passwords, that connection, and the warnings (rows the
    team's schema refused, policies dropped). See `PostgresStore.fork`."""
    new = secrets.token_hex(4)
    names = SessionNames(new, [role.id for role in roles])
    old_prefix, new_prefix = f"rd_{live.session}_", f"rd_{new}_"
    pre = source.pre.replace(old_prefix, new_prefix)
    post = source.post.replace(old_prefix, new_prefix)
    original, owners = source.original, source.owners
    passwords = {SessionNames.login(role): secrets.token_hex(16) for role in names.all_roles()}
    admin = connect(dsn)
    warnings: list[str] = []
    try:
        make_roles(admin, names, passwords)
        me = quoted(current_user(admin))
        made = [names.world_code]
        steps: list[str] = []
        for old_owner, members in owners:
            made.append(str(old_owner).replace(old_prefix, new_prefix, 1))
            mapped = [quoted(m.replace(old_prefix, new_prefix, 1)) for m in members
                      if m.startswith(old_prefix)]
            steps.append(f"CREATE ROLE {quoted(made[-1])} NOLOGIN")
            if mapped:
                steps.append(f"GRANT {quoted(made[-1])} TO {', '.join(mapped)}")
        steps.append(f"CREATE ROLE {quoted(names.world_code)} NOLOGIN")
        steps += [f"GRANT {quoted(role)} TO {me}" for role in made]
        steps += [f"CREATE SCHEMA {quoted(schema)}"
                  for schema in (names.world, names.state, names.compat)]
        # owners must be able to create in the schema they own in
        steps += [f"GRANT USAGE, CREATE ON SCHEMA {quoted(names.world)} TO {quoted(role)}"
                  for role in made]
        run_all(admin, steps)
        make_runner(admin, names.state, names.world_code)
        # definitions only: nothing of the team's runs while they are made
        admin.execute(pre.replace(f"CREATE SCHEMA {names.world};",
                                  f"CREATE SCHEMA IF NOT EXISTS {names.world};"))
        warnings += load_seed(admin, names, seed_sql, live.world, renumber)
        warnings += rebuild(admin, names, post)
        if unblind(admin, names.world):
            warnings.append("row-level security is raceday's to leave off: the team's "
                            "policies were dropped")
        run_all(admin, [f"CREATE TABLE {quoted(names.state)}.world_tables "
                        "(name TEXT PRIMARY KEY, kind TEXT NOT NULL DEFAULT '')",
                        *(f"INSERT INTO {quoted(names.state)}.world_tables (name) "
                          f"VALUES ({literal(name)})" for name in original)])
        schema_rights(admin, names, roles)
        grant_rights(admin, names, roles)
    except BaseException:
        drop_schemas(admin, new)
        admin.close()
        raise
    return new, passwords, admin, warnings
