"""The names the sandbox knows follow every schema change, though not re-read every call.

WorldStore asks SQLite for the schema version only when something it ran could have changed
the schema (role DDL, a trusted statement that is not a plain query): these tests change the
schema each way and check the roles' rights follow at once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store_fixtures import ROLES, WORLD_SQL, one

from raceday.store.sqlite_store import WorldStore


def test_plain_statements_do_not_ask_for_the_schema_version(store: WorldStore) -> None:
    one(store, "planner", "SELECT 1")  # settle
    statements: list[str] = []
    store._app.set_trace_callback(statements.append)
    try:
        for _ in range(3):
            one(store, "planner", "SELECT id FROM plan")
            one(store, "enactor-b", "UPDATE endpoint SET updated_at = '23:00'")
            store.app_query("SELECT count(*) FROM plan")
            store.app_query("WITH x AS (SELECT 1) SELECT * FROM x")
    finally:
        store._app.set_trace_callback(None)
    assert not [s for s in statements if "schema_version" in s]


def test_a_table_a_trusted_statement_creates_is_known_at_once(store: WorldStore) -> None:
    one(store, "planner", "SELECT 1")
    store.app_query("CREATE TABLE lease (holder TEXT)")
    # A table created during play is open to every role: the sandbox must know it exists.
    assert one(store, "enactor-a", "INSERT INTO lease VALUES ('a')").ok
    store.app_query("DROP TABLE lease")
    assert one(store, "enactor-a", "SELECT * FROM lease").error == "no such table: lease"


def test_a_view_a_trusted_statement_makes_of_a_table_reads_through(store: WorldStore) -> None:
    # enactor-a may not read audit; a view over it is checked on the table underneath.
    store.app_query("CREATE VIEW audit_view AS SELECT * FROM audit")
    result = one(store, "enactor-a", "SELECT * FROM audit_view")
    assert result.error_kind == "refused"
    assert one(store, "planner", "SELECT * FROM audit_view").ok


def test_a_trigger_a_trusted_statement_adds_may_write_for_the_firing_role(store: WorldStore) -> None:
    one(store, "enactor-b", "SELECT 1")
    store.app_query(
        "CREATE TRIGGER note_plan AFTER INSERT ON plan BEGIN "
        "INSERT INTO audit (what) VALUES ('plan ' || new.id); END"
    )
    result = one(store, "enactor-b", "INSERT INTO plan VALUES (9, '23:10')")
    assert result.ok, result.error
    assert result.writes == ("plan", "audit")


def test_a_trigger_a_role_adds_counts_for_the_next_statement(store: WorldStore) -> None:
    # The trigger writes for the responder, who made it (break-glass on automation).
    made = one(
        store,
        "responder",
        "CREATE TRIGGER note_plan AFTER INSERT ON plan BEGIN "
        "UPDATE automation SET enabled = 1 WHERE name = 'dns-planner'; END",
    )
    assert made.ok and made.schema_changed
    result = one(store, "enactor-b", "INSERT INTO plan VALUES (9, '23:10')")
    assert result.ok, result.error
    assert result.writes == ("plan", "automation")
    assert result.break_glass == ("automation",)


def test_failed_ddl_leaves_the_names_right(store: WorldStore) -> None:
    failed = one(store, "responder", "CREATE TABLE plan (x)")
    assert failed.error == "table plan already exists"
    assert one(store, "enactor-a", "SELECT * FROM audit").error_kind == "refused"
    assert one(store, "enactor-a", "SELECT id FROM plan").ok


def test_a_rolled_back_trusted_transaction_takes_its_tables_along(store: WorldStore) -> None:
    one(store, "planner", "SELECT 1")
    store.app_query("BEGIN")
    store.app_query("CREATE TABLE lease (holder TEXT)")
    store.app_query("ROLLBACK")
    assert one(store, "enactor-a", "SELECT * FROM lease").error == "no such table: lease"


def test_a_probe_after_ddl_sees_the_new_names(store: WorldStore) -> None:
    one(store, "responder", "CREATE TABLE lease (holder TEXT)")
    results = store.probe("enactor-a", ["INSERT INTO lease VALUES ('a')"])
    assert [r.ok for r in results] == [True]
    assert one(store, "enactor-a", "SELECT count(*) FROM lease").rows == ((0,),)


def test_a_store_opened_on_a_changed_world_reads_its_names(tmp_path: Path) -> None:
    path = tmp_path / "world.db"
    WorldStore.create(path, WORLD_SQL, ROLES).close()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE lease (holder TEXT)")
    conn.commit()
    conn.close()
    with WorldStore.open(path, ROLES) as store:
        # Not in the world as first built (recorded at creation): open to every role.
        assert one(store, "enactor-a", "INSERT INTO lease VALUES ('a')").ok
