"""WorldStore: results, limits, permissions per role, probes, interrupts, schema and backups."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from store_fixtures import ROLES, WORLD_SQL, one, snapshot

from raceday.errors import ExerciseError
from raceday.exercise.model import Role
from raceday.store.base import StoreError
from raceday.store.results import StatementResult
from raceday.store.sqlite_store import WorldStore

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race" / "world.sql"


# -- results ------------------------------------------------------------------------------


def test_select_gives_columns_and_rows_and_no_rowcount(store: WorldStore) -> None:
    result = one(store, "planner", "SELECT id, created_at FROM plan ORDER BY id")
    assert result.ok and result.error_kind is None
    assert result.columns == ("id", "created_at")
    assert result.rows == ((1, "22:55"), (2, "22:57"), (3, "22:59"))
    assert result.rowcount is None and not result.truncated and not result.is_write
    assert result.elapsed_ms >= 0
    assert result.row_summary(store.row_cap) == "3 rows"


def test_row_cap_says_n_of_more_than_n(store: WorldStore) -> None:
    result = one(store, "planner", "SELECT n FROM numbers ORDER BY n")
    assert len(result.rows) == store.row_cap == 20
    assert result.truncated
    assert result.rows[-1] == (20,)
    assert result.row_summary(store.row_cap) == "20 of more than 20 rows"
    exact = one(store, "planner", "SELECT n FROM numbers WHERE n <= 20")
    assert len(exact.rows) == 20 and not exact.truncated


def test_rowcount_counts_the_statements_own_rows(store: WorldStore) -> None:
    update = one(store, "enactor-b", "UPDATE endpoint SET active_plan_id = 3")
    assert update.rowcount == 2 and update.columns == () and update.is_write
    assert update.row_summary(store.row_cap) == "2 rows changed"
    # The trigger's inserts into audit are not counted, but the table is named as written.
    assert update.writes == ("endpoint", "audit")
    nothing = one(store, "enactor-b", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'x'")
    assert nothing.rowcount == 0
    with_cte = one(
        store,
        "planner",
        "WITH old AS (SELECT 1 AS id) DELETE FROM plan_record WHERE plan_id IN old",
    )
    assert with_cte.rowcount == 2
    commented = one(store, "enactor-b", "-- apply\nUPDATE endpoint SET updated_at = '23:00'")
    assert commented.rowcount == 2
    upsert = one(
        store,
        "planner",
        "INSERT INTO plan VALUES (3, 'z') ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at",
    )
    assert upsert.rowcount == 1 and upsert.writes == ("plan",)


def test_returning_rows_are_capped_and_rowcount_is_complete(store: WorldStore) -> None:
    result = one(
        store,
        "planner",
        "INSERT INTO plan (id, created_at) SELECT n + 100, 'x' FROM numbers RETURNING id",
    )
    assert result.rowcount == 30
    assert len(result.rows) == 20 and result.truncated
    assert store.app_query("SELECT count(*) FROM plan WHERE id > 100")[1] == [(30,)]


def test_statements_run_in_order_and_stop_at_the_first_error(store: WorldStore) -> None:
    results = store.execute(
        "planner",
        "INSERT INTO plan VALUES (4, '23:01');\n"
        "SELECT max(id) FROM plan;\n"
        "SELECT * FROM no_such_table;\n"
        "INSERT INTO plan VALUES (5, '23:03');",
    )
    assert [r.ok for r in results] == [True, True, False]
    assert results[1].rows == ((4,),)
    assert results[2].error == "no such table: no_such_table" and results[2].error_kind == "error"
    ids = store.app_query("SELECT id FROM plan ORDER BY id")[1]
    assert ids == [(1,), (2,), (3,), (4,)]  # the first write stays, the last never ran


def test_empty_and_comment_only_submissions_return_nothing(store: WorldStore) -> None:
    assert store.execute("planner", "") == []
    assert store.execute("planner", "  -- thinking\n ; /* still */") == []


def test_syntax_errors_are_syntax(store: WorldStore) -> None:
    result = one(store, "planner", "SELEC nonsense")
    assert result.error_kind == "syntax" and "syntax error" in (result.error or "")
    assert one(store, "planner", "SELECT (1").error_kind == "syntax"


# -- parameters ---------------------------------------------------------------------------


def test_named_parameters_are_bound_and_extra_names_ignored(store: WorldStore) -> None:
    results = store.execute(
        "enactor-b",
        "UPDATE endpoint SET active_plan_id = :plan, updated_at = :now "
        "WHERE active_plan_id < :plan;"
        "SELECT name FROM endpoint WHERE active_plan_id = :plan ORDER BY name",
        {"plan": 3, "now": "23:48", "unused": object()},
    )
    assert [r.error for r in results] == [None, None]
    assert results[0].rowcount == 2
    assert results[1].rows == (("ddb",), ("fips",))


def test_missing_parameter_is_a_clear_error(store: WorldStore) -> None:
    result = one(store, "planner", "SELECT * FROM plan WHERE id = :plan")
    assert result.error == "no value was given for parameter :plan"
    assert result.error_kind == "error"
    assert one(store, "planner", "SELECT ?").error_kind == "error"


def test_unbindable_parameter_value_is_an_error_result(store: WorldStore) -> None:
    result = store.execute("planner", "SELECT :x", {"x": [1, 2]})[0]
    assert result.error_kind == "error" and result.error
    result = store.execute("planner", "SELECT :x", {"x": "caf\udce9"})[0]
    assert result.error_kind == "error" and result.error
    assert one(store, "planner", "SELECT 1").ok


# -- permissions --------------------------------------------------------------------------


def test_write_to_a_forbidden_table_names_role_and_table(store: WorldStore) -> None:
    result = one(store, "planner", "UPDATE endpoint SET active_plan_id = 3")
    assert result.error_kind == "refused"
    assert result.error == "refused: role planner may not write table endpoint"
    assert one(store, "enactor-a", "DELETE FROM plan").error == (
        "refused: role enactor-a may not write table plan"
    )
    assert one(store, "enactor-a", "INSERT INTO automation VALUES ('x', 1)").error == (
        "refused: role enactor-a may not write table automation"
    )


def test_read_of_a_forbidden_table_names_role_and_table(store: WorldStore) -> None:
    result = one(store, "enactor-a", "SELECT count(*) FROM audit")
    assert result.error_kind == "refused"
    assert result.error == "refused: role enactor-a may not read table audit"
    assert one(store, "enactor-a", "SELECT what FROM (SELECT * FROM audit)").error_kind == "refused"


def test_break_glass_writes_are_allowed(store: WorldStore) -> None:
    result = one(store, "responder", "UPDATE automation SET enabled = 0")
    assert result.ok and result.rowcount == 2


def test_trigger_writes_run_with_the_statement_that_fires_them(store: WorldStore) -> None:
    # enactor-a may not write audit, but the world's trigger on endpoint does.
    result = one(store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert result.ok and result.writes == ("endpoint", "audit")
    assert store.app_query("SELECT what FROM audit")[1] == [("endpoint ddb -> 3",)]


def test_cascade_deletes_follow_the_schema_not_the_role(store: WorldStore) -> None:
    # enactor-b may delete plans but not write plan_record: ON DELETE CASCADE still applies.
    one(store, "enactor-b", "UPDATE endpoint SET active_plan_id = 3, rollback_plan_id = 2")
    result = one(store, "enactor-b", "DELETE FROM plan WHERE id < 2")
    assert result.ok and result.rowcount == 1 and "plan_record" in result.writes
    assert store.app_query("SELECT count(*) FROM plan_record WHERE plan_id = 1")[1] == [(0,)]
    direct = one(store, "enactor-b", "DELETE FROM plan_record")
    assert direct.error == "refused: role enactor-b may not write table plan_record"


def test_foreign_keys_are_enforced(store: WorldStore) -> None:
    result = one(store, "planner", "DELETE FROM plan WHERE id = 1")  # endpoint rollback -> 1
    assert result.error_kind == "constraint"
    # the key is named (SQLite names none); plan_record's cascades, so it is not the one
    assert result.error == "FOREIGN KEY constraint failed: endpoint.rollback_plan_id -> plan.id"
    assert store.app_query("PRAGMA foreign_keys")[1] == [(1,)]


def test_a_key_added_during_play_is_named_when_it_fails(store: WorldStore) -> None:
    # The keys are read once per schema: a table the responder adds with its own key to plan
    # is named by the next failures, the delete's among the keys it can be.
    first = one(store, "planner", "DELETE FROM plan WHERE id = 1")
    assert first.error == "FOREIGN KEY constraint failed: endpoint.rollback_plan_id -> plan.id"
    created = one(store, "responder", "CREATE TABLE pinned (plan INTEGER REFERENCES plan (id))")
    assert created.ok, created.error
    bad = one(store, "responder", "INSERT INTO pinned VALUES (999)")
    assert bad.error == "FOREIGN KEY constraint failed: pinned.plan -> plan.id"
    again = one(store, "planner", "DELETE FROM plan WHERE id = 1")
    assert again.error == ("FOREIGN KEY constraint failed: one of endpoint.rollback_plan_id -> "
                           "plan.id, pinned.plan -> plan.id")


def test_check_constraint_is_a_constraint_error(store: WorldStore) -> None:
    result = one(store, "responder", "UPDATE automation SET enabled = 2")
    assert result.error_kind == "constraint"
    assert (result.error or "").startswith("CHECK constraint failed")


def test_views_read_through_their_tables(store: WorldStore) -> None:
    result = one(store, "enactor-a", "SELECT endpoint, address FROM dns_answer ORDER BY 1")
    assert result.rows == (("ddb", "192.0.2.12"), ("fips", "198.51.100.22"))


def test_non_schema_roles_may_not_change_the_schema(store: WorldStore) -> None:
    for sql in (
        "CREATE TABLE lease (id INTEGER PRIMARY KEY)",
        "DROP TABLE audit",
        "ALTER TABLE plan ADD COLUMN note TEXT",
        "CREATE INDEX ix ON plan (created_at)",
        "CREATE TRIGGER t AFTER INSERT ON plan BEGIN SELECT 1; END",
        "DROP VIEW dns_answer",
    ):
        result = one(store, "planner", sql)
        assert result.error == "refused: role planner may not change the schema", sql
        assert result.error_kind == "refused"


def test_schema_role_trigger_blocks_another_roles_write(store: WorldStore) -> None:
    guard = (
        "CREATE TRIGGER no_stale_apply BEFORE UPDATE OF active_plan_id ON endpoint "
        "WHEN new.active_plan_id < old.active_plan_id BEGIN "
        "SELECT RAISE(ABORT, 'stale plan: endpoint already serves a newer one'); END"
    )
    created = one(store, "responder", guard)
    assert created.ok and created.schema_changed and created.rowcount is None
    stale = one(store, "enactor-a", "UPDATE endpoint SET active_plan_id = 1 WHERE name = 'ddb'")
    assert stale.error_kind == "constraint"
    assert stale.error == "stale plan: endpoint already serves a newer one"
    fresh = one(store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert fresh.ok and fresh.rowcount == 1


def test_schema_role_trigger_may_write_tables_the_firing_role_may_not(store: WorldStore) -> None:
    one(store, "responder", "CREATE TABLE applied (plan INTEGER)")
    one(
        store,
        "responder",
        "CREATE TRIGGER log_apply AFTER UPDATE ON endpoint BEGIN "
        "UPDATE automation SET enabled = enabled WHERE 0; "
        "INSERT INTO applied VALUES (new.active_plan_id); END",
    )
    result = one(store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert result.ok, result.error
    assert "automation" in result.writes or "applied" in result.writes


def test_tables_created_during_play_are_open_to_every_role(store: WorldStore) -> None:
    made = store.execute(
        "responder",
        "CREATE TABLE lease (endpoint TEXT PRIMARY KEY, holder TEXT, token INTEGER NOT NULL);"
        "CREATE TABLE fencing (token INTEGER);",
    )
    assert all(r.ok and r.schema_changed for r in made)
    assert one(store, "enactor-a", "INSERT INTO lease VALUES ('ddb', 'enactor-a', 1)").ok
    assert one(store, "planner", "UPDATE lease SET holder = 'planner'").rowcount == 1
    assert one(store, "enactor-a", "SELECT holder FROM lease").rows == (("planner",),)
    assert one(store, "enactor-a", "DELETE FROM lease").rowcount == 1
    # ... but they still may not drop or alter them.
    assert one(store, "enactor-a", "DROP TABLE lease").error_kind == "refused"


def test_new_tables_stay_open_after_reopening(store: WorldStore, tmp_path: Path) -> None:
    one(store, "responder", "CREATE TABLE lease (holder TEXT)")
    copy = tmp_path / "copy.db"
    store.backup_to(copy)
    with WorldStore.open(copy, ROLES) as reopened:
        assert one(reopened, "enactor-a", "INSERT INTO lease VALUES ('a')").ok
        assert one(reopened, "enactor-a", "SELECT * FROM audit").error_kind == "refused"


def test_schema_role_can_alter_drop_and_index(store: WorldStore) -> None:
    results = store.execute(
        "responder",
        "ALTER TABLE endpoint ADD COLUMN version INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE endpoint ADD COLUMN checked INTEGER CHECK (checked IS NULL OR checked > 0);"
        "CREATE TABLE tmp_t (id INTEGER PRIMARY KEY AUTOINCREMENT, v);"
        "INSERT INTO tmp_t (v) VALUES (1);"
        "ALTER TABLE tmp_t RENAME TO tmp_u;"
        "ALTER TABLE tmp_u RENAME COLUMN v TO w;"
        "CREATE INDEX ix_w ON tmp_u (w);"
        "DROP INDEX ix_w;"
        "CREATE VIEW newest AS SELECT max(id) AS id FROM plan;"
        "DROP VIEW newest;"
        "DROP TABLE tmp_u;"
        "DROP TRIGGER trg_audit;",
    )
    assert [r.error for r in results] == [None] * 12
    assert all(r.schema_changed for r in results if not r.sql.startswith("INSERT"))
    names = {t.name for t in store.tables()}
    assert "tmp_u" not in names and "newest" not in names
    assert store.tables()[[t.name for t in store.tables()].index("endpoint")].triggers == ()


def test_schema_role_may_not_smuggle_printf_into_the_schema(store: WorldStore) -> None:
    for sql in (
        "ALTER TABLE plan ADD COLUMN x TEXT CHECK (printf('%d', 1) IS NOT NULL)",
        "CREATE TABLE pf (x TEXT DEFAULT (printf('%.*c', 900000000, 'x')))",
        "CREATE TRIGGER pf AFTER INSERT ON plan BEGIN SELECT format('%d', 1); END",
    ):
        result = one(store, "responder", sql)
        assert result.error_kind == "refused", sql
        assert "printf" in (result.error or "") or "format" in (result.error or "")


def test_unknown_role_is_a_caller_bug(store: WorldStore) -> None:
    with pytest.raises(KeyError):
        store.execute("nobody", "SELECT 1")


# -- probe --------------------------------------------------------------------------------


def test_probe_tells_what_would_change_and_leaves_the_world_unchanged(store: WorldStore) -> None:
    before = snapshot(store)
    results = store.probe(
        "enactor-b",
        [
            "UPDATE endpoint SET rollback_plan_id = active_plan_id, active_plan_id = :plan "
            "WHERE active_plan_id < :plan",
            "DELETE FROM plan WHERE id < :plan - 1",
        ],
        {"plan": 3},
    )
    assert [r.rowcount for r in results] == [2, 1]
    assert snapshot(store) == before


def test_probe_stops_at_a_refusal_and_rolls_back(store: WorldStore) -> None:
    before = snapshot(store)
    results = store.probe(
        "planner",
        ["INSERT INTO plan VALUES (9, 'x')", "UPDATE endpoint SET active_plan_id = 9", "SELECT 1"],
    )
    assert [r.ok for r in results] == [True, False]
    assert results[1].error_kind == "refused"
    assert snapshot(store) == before


def test_probe_of_ddl_rolls_back_the_schema_too(store: WorldStore) -> None:
    before = snapshot(store)
    results = store.probe(
        "responder",
        [
            "CREATE TABLE lease (holder TEXT)",
            "CREATE TRIGGER lease_log AFTER INSERT ON lease BEGIN "
            "UPDATE automation SET enabled = enabled; END",
            "INSERT INTO lease VALUES ('me')",
        ],
    )
    assert [r.error for r in results] == [None, None, None]
    assert snapshot(store) == before
    assert "lease" not in {t.name for t in store.tables()}
    # The names the sandbox knows follow the rollback: lease is gone again.
    assert one(store, "planner", "SELECT * FROM lease").error == "no such table: lease"


def test_probe_survives_a_trigger_that_rolls_back_everything(store: WorldStore) -> None:
    one(
        store,
        "responder",
        "CREATE TRIGGER no_delete BEFORE DELETE ON plan BEGIN SELECT RAISE(ROLLBACK, 'no deletes'); END",
    )
    before = snapshot(store)
    results = store.probe(
        "enactor-b",
        [
            "UPDATE endpoint SET active_plan_id = 3",
            "DELETE FROM plan WHERE id = 3",
            "UPDATE endpoint SET active_plan_id = 1",  # would autocommit if it ran
        ],
    )
    assert [r.ok for r in results] == [True, False]
    assert results[1].error == "no deletes" and results[1].error_kind == "constraint"
    assert snapshot(store) == before


def test_probe_timeout_rolls_back(store: WorldStore) -> None:
    before = snapshot(store)
    results = store.probe(
        "planner",
        [
            "INSERT INTO plan VALUES (50, 'x')",
            RUNAWAY,
        ],
    )
    assert results[-1].error_kind == "timeout"
    assert snapshot(store) == before


# -- interrupt, threads -------------------------------------------------------------------


def test_interrupt_from_another_thread_cancels_the_running_statement(world_path: Path) -> None:
    world_path.parent.mkdir(parents=True)
    with WorldStore.create(world_path, WORLD_SQL, ROLES, time_limit_s=30.0) as store:
        box: list[list[StatementResult]] = []
        worker = threading.Thread(target=lambda: box.append(store.execute("planner", RUNAWAY)))
        started = time.perf_counter()
        worker.start()
        time.sleep(0.3)
        store.interrupt()
        worker.join(5)
        assert not worker.is_alive()
        assert time.perf_counter() - started < 3
        [result] = box[0]
        assert result.error_kind == "timeout"
        assert (result.error or "").startswith("statement cancelled after")
        # The store is usable at once, and the cancel does not leak into the next call.
        assert one(store, "planner", "SELECT count(*) FROM plan").rows == ((3,),)


def test_calls_from_many_threads_are_serialized(store: WorldStore) -> None:
    errors: list[str] = []

    def work(i: int) -> None:
        for j in range(20):
            role = ("planner", "enactor-a", "enactor-b", "responder")[(i + j) % 4]
            for result in store.execute(role, "SELECT count(*) FROM plan; SELECT * FROM endpoint"):
                if result.error:
                    errors.append(result.error)
            store.app_query("SELECT count(*) FROM plan_record")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_time_limit_applies(store: WorldStore) -> None:
    started = time.perf_counter()
    result = one(store, "planner", RUNAWAY)
    assert result.error_kind == "timeout"
    assert result.error == "statement interrupted after 0.5 s (time limit)"
    assert time.perf_counter() - started < 0.9


# -- trusted SQL, schema, backups ---------------------------------------------------------


def test_app_query_is_trusted_but_timed(store: WorldStore) -> None:
    columns, rows = store.app_query("SELECT what FROM audit")  # no role limits
    assert columns == ("what",) and rows == []
    assert store.app_query("SELECT printf('%02d', :n) AS n", {"n": 7}) == (("n",), [("07",)])
    with pytest.raises(StoreError) as syntax:
        store.app_query("SELEC 1")
    assert syntax.value.kind == "syntax"
    with pytest.raises(StoreError) as timeout:
        store.app_query(RUNAWAY)
    assert timeout.value.kind == "timeout"


def test_tables_lists_columns_sql_and_triggers(store: WorldStore) -> None:
    tables = {t.name: t for t in store.tables()}
    assert set(tables) == {
        "plan",
        "plan_record",
        "endpoint",
        "dns_answer",
        "automation",
        "audit",
        "numbers",
    }
    plan = tables["plan"]
    assert plan.kind == "table"
    assert [(c.name, c.type, c.pk, c.notnull) for c in plan.columns] == [
        ("id", "INTEGER", True, False),
        ("created_at", "TEXT", False, True),
    ]
    assert plan.sql.startswith("CREATE TABLE plan")
    assert tables["endpoint"].triggers == ("trg_audit",)
    assert tables["dns_answer"].kind == "view"
    assert [c.name for c in tables["dns_answer"].columns] == ["endpoint", "address", "weight"]
    one(store, "responder", "CREATE TRIGGER g2 BEFORE DELETE ON endpoint BEGIN SELECT 1; END")
    assert {t.name: t for t in store.tables()}["endpoint"].triggers == ("g2", "trg_audit")


def test_backup_to_writes_one_consistent_file(store: WorldStore, tmp_path: Path) -> None:
    one(store, "planner", "INSERT INTO plan VALUES (7, '23:10')")
    copy = tmp_path / "backup" / "world.db"
    copy.parent.mkdir()
    store.backup_to(copy)
    assert sorted(p.name for p in copy.parent.iterdir()) == ["world.db"]
    conn = sqlite3.connect(copy)
    try:
        assert conn.execute("SELECT max(id) FROM plan").fetchone() == (7,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()


def test_create_refuses_an_existing_file_and_reports_bad_world_sql(tmp_path: Path) -> None:
    existing = tmp_path / "exists.db"
    existing.write_bytes(b"")
    with pytest.raises(StoreError):
        WorldStore.create(existing, WORLD_SQL, ROLES)
    broken = tmp_path / "broken.db"
    with pytest.raises(ExerciseError) as error:
        WorldStore.create(broken, "CREATE TABLE t (x); INSERT INTO nope VALUES (1);", ROLES)
    assert "no such table: nope" in str(error.value)
    assert not broken.exists()
    with pytest.raises(StoreError):
        WorldStore.open(tmp_path / "missing.db", ROLES)
    with pytest.raises(StoreError):
        WorldStore.create(tmp_path / "no" / "such" / "dir.db", WORLD_SQL, ROLES)
    not_a_db = tmp_path / "text.db"
    not_a_db.write_text("hello, this is not SQLite\n" * 100)
    with pytest.raises(StoreError):
        WorldStore.open(not_a_db, ROLES)


def test_closed_store_refuses_calls(world_path: Path) -> None:
    world_path.parent.mkdir(parents=True)
    store = WorldStore.create(world_path, WORLD_SQL, ROLES)
    store.close()
    store.close()  # twice is fine
    with pytest.raises(StoreError):
        store.execute("planner", "SELECT 1")
    assert sorted(p.name for p in world_path.parent.iterdir()) == ["world.db"]


@pytest.mark.skipif(not FLAGSHIP.exists(), reason="flagship exercise not present")
def test_flagship_world_builds_and_plays_the_race(tmp_path: Path) -> None:
    enactor_rights = ("endpoint", "plan", "plan_record")
    roles = (
        Role("planner", "Planner", write=("plan", "plan_record")),
        Role("enactor-a", "Enactor A", write=enactor_rights),
        Role("enactor-b", "Enactor B", write=enactor_rights),
        Role("responder", "Responder", break_glass=("endpoint", "automation"), schema=True),
    )
    regional = "dynamodb.us-east-1.amazonaws.com"
    apply = (
        "UPDATE endpoint SET rollback_plan_id = active_plan_id, active_plan_id = :plan, "
        "updated_by = :who, updated_at = :now_hhmm WHERE name = :name"
    )
    with WorldStore.create(tmp_path / "world.db", FLAGSHIP.read_text(), roles) as store:
        assert one(store, "enactor-b", "SELECT max(id) AS plan FROM plan").rows == ((124,),)
        stale = store.execute(
            "enactor-a",
            apply,
            {"plan": 120, "who": "enactor-a", "now_hhmm": "23:48", "name": regional},
        )
        assert stale[0].rowcount == 1
        cleanup = store.execute("enactor-b", "DELETE FROM plan WHERE id < :plan - 3", {"plan": 124})
        assert cleanup[0].ok and cleanup[0].rowcount == 10
        empty = one(store, "responder", f"SELECT count(*) FROM dns_answer WHERE endpoint = '{regional}'")
        assert empty.rows == ((0,),)
        wedged = store.execute(
            "enactor-b",
            apply,
            {"plan": 124, "who": "enactor-b", "now_hhmm": "23:50", "name": regional},
        )
        assert wedged[0].error == ("FOREIGN KEY constraint failed: "
                                   "endpoint.rollback_plan_id -> plan.id")
