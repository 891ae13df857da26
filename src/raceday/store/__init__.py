"""The only code that talks to a database."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.errors import InputError

if TYPE_CHECKING:
    from raceday.store.protocol import RoleRights, Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
DB_VARIABLE = "RACEDAY_DB"
"""Where `raceday play --db` and `host --db` leave their choice for the sessions they open."""


def is_postgres(db: str | None) -> bool:
    """Whether `--db` names a PostgreSQL server (else the world is SQLite, the default)."""
    return db is not None and db.startswith(POSTGRES_SCHEMES)


def create_world(
    folder: Path,
    world_sql: str,
    roles: Sequence[RoleRights],
    *,
    db: str | None = None,
    time_limit_s: float = 2.0,
) -> Store:
    """A session's fresh world: `folder/world.db` in SQLite, or a schema on the `db` server.

    Only the chosen store's module is imported: SQLite users never load psycopg.
    """
    if db is not None and not is_postgres(db):
        raise InputError([f"--db {db!r}: give a PostgreSQL DSN (postgresql://user:password@host/db)"])
    if is_postgres(db):
        from raceday.store.postgres.store import PostgresStore

        assert db is not None
        store = PostgresStore.create(db, world_sql, roles, time_limit_s=time_limit_s)
        (folder / "world.postgres").write_text(f"{store.session}\n", encoding="utf-8")
        return store
    from raceday.store.sqlite_store import WorldStore

    return WorldStore.create(folder / "world.db", world_sql, roles, time_limit_s=time_limit_s)
