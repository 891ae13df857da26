"""The only code that talks to a database."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.errors import InputError

if TYPE_CHECKING:
    from raceday.store.protocol import RoleRights, Store
    from raceday.store.results import TableInfo

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
DB_VARIABLE = "RACEDAY_DB"
"""Where `raceday play --db` and `host --db` leave their choice for the sessions they open."""
KEEP_VARIABLE = "RACEDAY_KEEP_WORLD"
"""Set (`--keep-world`): a session's PostgreSQL world stays on the server after its end."""
WORLD_NOTE = "world.postgres"
"""The session folder's note of its PostgreSQL world: the id, and whether it was dropped."""


def sqlite_version() -> str:
    """The SQLite library's version: what an exercise's SQL check says depends on it (a
    kept exercise is kept per version)."""
    import sqlite3

    return sqlite3.sqlite_version


def chosen_db(db: str | None) -> str | None:
    """The database a session's world goes to: `--db` when given, else the choice `raceday
    play --db` left in RACEDAY_DB, else None (SQLite, the default)."""
    import os

    return db or os.environ.get(DB_VARIABLE) or None


def is_postgres(db: str | None) -> bool:
    """Whether `--db` names a PostgreSQL server (else the world is SQLite, the default)."""
    return db is not None and db.startswith(POSTGRES_SCHEMES)


def dialect_of(db: str | None) -> str:
    """The SQL dialect a world on `db` speaks: "postgresql" for a server's DSN, else "sqlite"
    (the default). The engine picks the exercise's variant by it, and asks no other question
    of which database it plays on."""
    return "postgresql" if is_postgres(db) else "sqlite"


def describe_world(world_sql: str, db: str | None = None) -> list[TableInfo]:
    """The tables and views `world_sql` builds (a briefing's cheat-sheet before any session
    exists), built where `db` says as a session's world would be, and thrown away."""
    if is_postgres(db):
        from raceday.store.postgres.store import describe_world as describe_on_server

        assert db is not None
        return describe_on_server(db, world_sql)
    from raceday.store.sqlite_world import describe_world as describe_in_memory

    return describe_in_memory(world_sql)


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
        (folder / WORLD_NOTE).write_text(f"{store.session}\n", encoding="utf-8")
        return store
    from raceday.store.sqlite_store import WorldStore

    return WorldStore.create(folder / "world.db", world_sql, roles, time_limit_s=time_limit_s)


def open_world_file(path: Path, roles: Sequence[RoleRights], *, durable: bool = True) -> Store:
    """A world in a file, opened (a replay's copy: `durable=False`, nothing synced to disk,
    since nothing reads it after a crash)."""
    from raceday.store.sqlite_store import WorldStore

    return WorldStore.open(path, roles, durable=durable)


def create_world_file(path: Path, world_sql: str, roles: Sequence[RoleRights], *,
                      time_limit_s: float = 2.0) -> Store:
    """A fresh world of the exercise's own in a file at `path` (a replay's pristine world, a
    resumed session's world before its statements are played again)."""
    from raceday.store.sqlite_store import WorldStore

    return WorldStore.create(path, world_sql, roles, time_limit_s=time_limit_s)


def end_world(store: Store, folder: Path) -> None:
    """Close a session's world at the session's end.

    A PostgreSQL world (its schemas and its roles, which are the whole server's) is dropped
    from the server unless RACEDAY_KEEP_WORLD is set (`--keep-world`): the transcript folder
    keeps everything the debrief and `raceday review` read, and a shared server should not
    fill with finished sessions. A SQLite world.db is a file in the folder and stays.
    """
    store.close()
    if store.backend != "postgresql":  # a SQLite night never imports psycopg's store
        return
    from raceday.store.postgres.store import PostgresStore

    assert isinstance(store, PostgresStore)
    import os

    note = folder / WORLD_NOTE
    if os.environ.get(KEEP_VARIABLE):
        _note(note, f"{store.session}\nkept on the server at the end of the session "
                    f"(schemas and roles rd_{store.session}_*)\n")
        return
    store.drop()
    _note(note, f"{store.session}\ndropped from the server at the end of the session\n")


def _note(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError:
        pass  # a note for people only: the session has ended either way
