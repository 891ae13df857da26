"""Dropping a world leaves nothing of it on the server: its schemas, what its roles own, its
roles; a drop that meets something already gone still removes the rest and says so."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from pg_fixtures import ROLES, WORLD_SQL, on_server

from raceday.store.postgres import world
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


def test_a_dropped_world_and_a_dropped_fork_leave_nothing(pg_dsn: str) -> None:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    fork, _ = store.fork(WORLD_SQL)
    assert on_server(pg_dsn, store.session) and on_server(pg_dsn, fork.session)
    fork.drop()
    store.drop()
    assert on_server(pg_dsn, fork.session) == []
    assert on_server(pg_dsn, store.session) == []


def test_drops_that_fail_in_one_message_are_made_one_by_one(pg_dsn: str) -> None:
    """The statements go in one message; when one fails (a role another drop took first),
    the message's others are undone with it: each is then made on its own, and the first
    failure is raised."""
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    schemas = [n for n in on_server(pg_dsn, store.session) if n.endswith(("_world", "_state"))]
    assert len(schemas) == 2
    admin = world.connect(pg_dsn)
    try:
        with pytest.raises(psycopg.Error, match="does not exist"):
            world.run_each(admin, [
                f"DROP SCHEMA {world.quoted(schemas[0])} CASCADE",
                f"DROP ROLE {world.quoted(f'rd_{store.session}_gone')}",
                f"DROP SCHEMA {world.quoted(schemas[1])} CASCADE"])
    finally:
        admin.close()
    assert not set(schemas) & set(on_server(pg_dsn, store.session))  # both went all the same
    store.drop()
    assert on_server(pg_dsn, store.session) == []


def test_a_store_drops_its_world_on_its_own_admin_connection(
        pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from raceday.store.postgres import store as store_module

    fresh: list[Any] = []
    monkeypatch.setattr(store_module, "drop_world", lambda *args: fresh.append(args))
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    store.drop()
    assert fresh == []
    assert on_server(pg_dsn, store.session) == []
    closed = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    closed.close()  # no connection left: a new one drops it
    monkeypatch.undo()
    closed.drop()
    assert on_server(pg_dsn, closed.session) == []
