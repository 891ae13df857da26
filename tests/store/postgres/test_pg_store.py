"""The PostgreSQL store as a player and the engine meet it: rights, writes, rows, checks."""

from __future__ import annotations

import secrets
import threading
import time

import pytest
from pg_fixtures import ROLES, WORLD_SQL, one

from raceday.errors import ExerciseError
from raceday.store.base import StoreError
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


def test_a_role_reads_what_its_list_allows_and_is_refused_the_rest(pg_store: PostgresStore) -> None:
    seen = one(pg_store, "enactor-a", "SELECT name, active_plan_id FROM endpoint ORDER BY name")
    assert seen.ok and seen.rows == (("ddb", 2), ("fips", 2))
    refused = one(pg_store, "enactor-a", "SELECT * FROM audit")
    assert refused.error_kind == "refused"
    assert "permission denied for table audit" in (refused.error or "")


def test_a_role_writes_only_its_tables(pg_store: PostgresStore) -> None:
    refused = one(pg_store, "planner", "UPDATE endpoint SET active_plan_id = 3")
    assert refused.error_kind == "refused"
    done = one(pg_store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert done.ok and done.rowcount == 1
    assert pg_store.app_query("SELECT active_plan_id FROM endpoint WHERE name = 'ddb'")[1] == [(3,)]


def test_the_store_names_a_break_glass_write_as_sqlites_does(pg_store: PostgresStore) -> None:
    """The transcript's [break-glass] comes from the store, on PostgreSQL as on SQLite."""
    broke = one(pg_store, "responder", "UPDATE automation SET enabled = 0 WHERE name = 'dns-planner'")
    assert broke.ok and broke.break_glass == ("automation",)
    own = one(pg_store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert own.ok and own.break_glass == ()
    probed = pg_store.probe("responder", ["UPDATE automation SET enabled = 1"])
    assert probed[0].ok and probed[0].break_glass == ("automation",)


def test_writes_name_the_tables_a_trigger_wrote_and_a_write_of_no_rows(pg_store: PostgresStore) -> None:
    fired = one(pg_store, "enactor-b", "UPDATE endpoint SET active_plan_id = 1 WHERE name = 'fips'")
    assert set(fired.writes) == {"endpoint", "audit"}
    none = one(pg_store, "enactor-b", "UPDATE endpoint SET active_plan_id = 1 WHERE name = 'nowhere'")
    assert none.ok and none.rowcount == 0 and none.writes == ("endpoint",)
    read = one(pg_store, "enactor-b", "SELECT * FROM endpoint")
    assert read.writes == () and read.rowcount is None


def test_rows_stop_at_the_cap_and_a_huge_result_is_not_computed(pg_dsn: str) -> None:
    # a time limit a loaded CI machine never reaches for 21 rows, and that all 729 million
    # rows would pass by far: only the rows fetched are computed
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, row_cap=20, time_limit_s=5.0)
    try:
        capped = one(store, "planner", "SELECT g FROM generate_series(1, 25) AS g")
        assert len(capped.rows) == 20 and capped.truncated
        exact = one(store, "planner", "SELECT g FROM generate_series(1, 20) AS g")
        assert len(exact.rows) == 20 and not exact.truncated
        huge = one(store, "planner", "SELECT * FROM numbers a, numbers b, numbers c, "
                                     "numbers d, numbers e, numbers f")
        assert huge.ok and huge.truncated and len(huge.rows) == 20
    finally:
        store.drop()


def test_returning_rows_are_capped_and_counted(pg_store: PostgresStore) -> None:
    result = one(pg_store, "planner",
                 "INSERT INTO plan SELECT g, '23:00' FROM generate_series(10, 40) AS g RETURNING id")
    assert result.ok and result.rowcount == 31 and len(result.rows) == 20 and result.truncated


def test_a_submission_runs_statement_by_statement_and_stops_at_the_first_error(
    pg_store: PostgresStore,
) -> None:
    results = pg_store.execute(
        "planner", "INSERT INTO plan VALUES (7, 'a'); INSERT INTO plan VALUES (7, 'b'); "
                   "INSERT INTO plan VALUES (8, 'c')")
    assert [r.ok for r in results] == [True, False]
    assert results[1].error_kind == "constraint"
    assert pg_store.app_query("SELECT id FROM plan WHERE id >= 7")[1] == [(7,)]
    # a statement is atomic: the engine's kept answers need not be asked again after it
    assert results[1].kept_in == ()


def test_probe_rolls_everything_back(pg_store: PostgresStore) -> None:
    results = pg_store.probe("planner", ["DELETE FROM plan_record", "SELECT count(*) FROM plan_record"])
    assert results[-1].rows == ((0,),)
    assert pg_store.app_query("SELECT count(*) FROM plan_record")[1] == [(6,)]


def test_named_parameters_bind_beside_casts(pg_store: PostgresStore) -> None:
    results = pg_store.execute("planner", "SELECT id, :note::text FROM plan WHERE id = :plan",
                               {"plan": 2, "note": "50% done"})
    assert results[0].rows == ((2, "50% done"),)
    missing = pg_store.execute("planner", "SELECT * FROM plan WHERE id = :plna", {"plan": 2})
    assert missing[0].error == "no value was given for parameter :plna"


def test_a_schema_role_adds_a_postgres_guard_and_it_refuses_a_bad_write(pg_store: PostgresStore) -> None:
    guard = pg_store.execute("responder", """
        CREATE FUNCTION forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF new.active_plan_id < old.active_plan_id THEN
                RAISE EXCEPTION 'plan % is older than %', new.active_plan_id, old.active_plan_id;
            END IF;
            RETURN new;
        END $$;
        CREATE TRIGGER forward_only BEFORE UPDATE ON endpoint
            FOR EACH ROW EXECUTE FUNCTION forward_only();
        ALTER TABLE plan_record ADD CONSTRAINT real_address CHECK (length(trim(address)) > 0)""")
    assert [r.ok for r in guard] == [True, True, True], guard
    assert all(r.schema_changed for r in guard)
    stale = one(pg_store, "enactor-a", "UPDATE endpoint SET active_plan_id = 1 WHERE name = 'ddb'")
    assert stale.error_kind == "constraint" and "plan 1 is older than 2" in (stale.error or "")
    blank = one(pg_store, "planner", "INSERT INTO plan_record VALUES (3, 'x', '  ', 1)")
    assert blank.error_kind == "constraint"
    assert "forward_only" in next(t for t in pg_store.tables() if t.name == "endpoint").triggers


def test_a_guard_a_cascade_fires_reads_what_its_maker_may_read(pg_store: PostgresStore) -> None:
    """PostgreSQL runs a cascade as the owner of the table it changes: the guard on
    plan_record that `DELETE FROM plan` fires reads endpoint as that owner, and refuses with
    its own words, as on SQLite (not "permission denied for table endpoint")."""
    guard = pg_store.execute("responder", """
        CREATE FUNCTION records_in_use() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM endpoint AS e
                       WHERE e.active_plan_id = old.plan_id AND e.name = old.endpoint) THEN
                RAISE EXCEPTION 'refused: an endpoint serves these records';
            END IF;
            RETURN old;
        END $$;
        CREATE TRIGGER records_in_use BEFORE DELETE ON plan_record
            FOR EACH ROW EXECUTE FUNCTION records_in_use()""")
    assert [r.ok for r in guard] == [True, True], guard
    served = one(pg_store, "enactor-b", "DELETE FROM plan WHERE id = 2")
    assert "refused: an endpoint serves these records" in (served.error or ""), served
    assert one(pg_store, "enactor-b", "DELETE FROM plan WHERE id = 3").rowcount == 1
    assert pg_store.app_query("SELECT count(*) FROM plan_record WHERE plan_id = 3")[1] == [(0,)]


def test_a_role_without_schema_rights_cannot_change_the_schema(pg_store: PostgresStore) -> None:
    for sql in ("CREATE TABLE lease (name TEXT)", "ALTER TABLE plan ADD COLUMN x INT",
                "DROP TABLE plan", "CREATE INDEX ON plan (created_at)"):
        assert one(pg_store, "planner", sql).error_kind == "refused", sql


def test_a_world_table_made_again_keeps_its_rights_and_a_new_table_is_open_to_all(
    pg_store: PostgresStore,
) -> None:
    remade = pg_store.execute("responder", "DROP TABLE automation; "
                              "CREATE TABLE automation (name TEXT PRIMARY KEY, enabled INTEGER)")
    assert all(r.ok for r in remade), remade
    # enactor-a may read automation but not write it, as before
    assert one(pg_store, "enactor-a", "SELECT * FROM automation").ok
    assert one(pg_store, "enactor-a", "INSERT INTO automation VALUES ('x', 1)").error_kind == "refused"
    assert one(pg_store, "responder", "CREATE TABLE lease (holder TEXT, token SERIAL)").ok
    assert one(pg_store, "enactor-a", "INSERT INTO lease (holder) VALUES ('a')").ok
    assert pg_store.app_query("SELECT holder, token FROM lease")[1] == [("a", 1)]


def test_a_world_table_a_function_made_again_keeps_its_rights(pg_store: PostgresStore) -> None:
    """The statement's keyword (SELECT) says nothing of the DDL its function ran."""
    assert one(pg_store, "responder", "CREATE FUNCTION remake() RETURNS integer LANGUAGE plpgsql "
                                      "AS $$ BEGIN DROP TABLE automation; CREATE TABLE automation "
                                      "(name TEXT PRIMARY KEY, enabled INTEGER); RETURN 1; END $$").ok
    assert one(pg_store, "responder", "SELECT remake()").ok
    assert one(pg_store, "enactor-a", "SELECT * FROM automation").ok
    assert one(pg_store, "enactor-a", "INSERT INTO automation VALUES ('x', 1)").error_kind == "refused"


def test_a_world_table_made_again_keeps_its_rights_when_the_grants_message_fails(
        pg_store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rights go in one message; when it fails (a table another role dropped meanwhile),
    each is set on its own: the table made again is not left open to every role."""
    from raceday.store.postgres import world

    sent = world.run_all

    def refused_once(admin: object, statements: list[str]) -> None:
        if any(s.startswith("REVOKE ALL ON TABLE") for s in statements):
            monkeypatch.setattr(world, "run_all", sent)
            raise RuntimeError("a table went away meanwhile")
        sent(admin, statements)  # type: ignore[arg-type]

    monkeypatch.setattr(world, "run_all", refused_once)
    remade = pg_store.execute("responder", "DROP TABLE automation; "
                              "CREATE TABLE automation (name TEXT PRIMARY KEY, enabled INTEGER)")
    assert all(r.ok for r in remade), remade
    assert world.run_all is sent  # the grants' message was refused, once
    assert one(pg_store, "enactor-a", "INSERT INTO automation VALUES ('x', 1)").error_kind == "refused"
    assert one(pg_store, "enactor-a", "SELECT * FROM automation").ok


def test_the_engines_catalog_reads_answer_for_the_world(pg_store: PostgresStore) -> None:
    _, objects = pg_store.app_query("SELECT type, name FROM sqlite_master ORDER BY 2")
    assert ("view", "dns_answer") in objects and ("table", "plan") in objects
    assert ("trigger", "trg_audit") in objects
    _, columns = pg_store.app_query("SELECT name, pk FROM pragma_table_info(:t)", {"t": "plan_record"})
    assert columns == [("plan_id", 1), ("endpoint", 2), ("address", 3), ("weight", 0)]


def test_tables_describe_columns_keys_and_views(pg_store: PostgresStore) -> None:
    infos = {t.name: t for t in pg_store.tables()}
    assert set(infos) == {"plan", "plan_record", "endpoint", "dns_answer", "automation", "audit", "numbers"}
    assert infos["dns_answer"].kind == "view"
    record = infos["plan_record"]
    assert [c.name for c in record.columns if c.pk] == ["plan_id", "endpoint", "address"]
    assert record.foreign_keys[0].other_table == "plan"


def test_a_check_that_fails_raises_a_store_error_with_its_kind(pg_store: PostgresStore) -> None:
    with pytest.raises(StoreError) as caught:
        pg_store.app_query("SELECT * FROM no_such_table")
    assert caught.value.kind == "error"
    with pytest.raises(StoreError) as slow:
        pg_store.app_query("SELECT pg_sleep(3)")
    assert slow.value.kind == "timeout"


def test_escape_cancels_a_running_statement(pg_dsn: str) -> None:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, time_limit_s=20)
    try:
        threading.Timer(0.3, store.interrupt).start()
        started = time.perf_counter()
        result = one(store, "planner", "SELECT pg_sleep(10)")
        assert result.error_kind == "timeout" and "cancelled" in (result.error or "")
        assert time.perf_counter() - started < 5
        assert one(store, "planner", "SELECT 1").ok
    finally:
        store.drop()


def test_a_broken_world_script_names_its_line_and_leaves_nothing_behind(pg_dsn: str) -> None:
    session = "brokenworld" + secrets.token_hex(2)  # its own: other runs share the server
    with pytest.raises(ExerciseError) as caught:
        PostgresStore.create(pg_dsn, "CREATE TABLE a (x INT);\n\nCREATE TABLE b (y NOPE);", ROLES,
                             session=session)
    assert "line 3" in str(caught.value) and "nope" in str(caught.value)
    with pytest.raises(StoreError, match="no raceday world"):
        PostgresStore.open(pg_dsn, session, ROLES)


def test_a_session_reopened_keeps_its_world(pg_dsn: str) -> None:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    try:
        assert one(store, "planner", "INSERT INTO plan VALUES (9, 'x')").ok
        store.close()
        again = PostgresStore.open(pg_dsn, store.session, ROLES)
        assert one(again, "planner", "SELECT created_at FROM plan WHERE id = 9").rows == (("x",),)
        again.close()
    finally:
        store.drop()


def test_a_new_world_never_takes_over_an_existing_one(pg_store: PostgresStore, pg_dsn: str) -> None:
    with pytest.raises(StoreError, match="already exists"):
        PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, session=pg_store.session)
    assert one(pg_store, "planner", "SELECT count(*) FROM plan").rows == ((3,),)


def test_a_schema_role_reads_a_world_view_it_could_write(pg_dsn: str) -> None:
    """A view keeps raceday as its owner, so it reads its tables whoever may change it."""
    from raceday.exercise.model import Role

    roles = (*ROLES, Role("operator", "Operator", write=("*",), schema=True))
    store = PostgresStore.create(pg_dsn, WORLD_SQL, roles)
    try:
        assert one(store, "operator", "SELECT count(*) FROM dns_answer").rows == ((2,),)
        assert one(store, "enactor-b", "SELECT count(*) FROM dns_answer").ok
    finally:
        store.drop()


def test_a_tables_create_text_shows_the_guards_added_later(pg_store: PostgresStore) -> None:
    assert one(pg_store, "responder", "ALTER TABLE plan_record ADD CONSTRAINT real_address "
                                      "CHECK (length(btrim(address)) > 0)").ok
    text = next(t for t in pg_store.tables() if t.name == "plan_record").sql
    assert text.startswith("CREATE TABLE plan_record (")
    assert "CONSTRAINT real_address CHECK ((length(btrim(address)) > 0))" in text
    assert "REFERENCES plan(id) ON DELETE CASCADE" in text


def test_a_failed_statement_leaves_no_psycopg_warning_on_the_terminal(
        pg_store: PostgresStore, caplog: pytest.LogCaptureFixture) -> None:
    # a statement goes in a pipeline; when it fails, psycopg warns that the rest of the
    # pipeline was not run, which says nothing a player needs (the error is the result)
    import logging

    from raceday.store.postgres import driver  # noqa: F401  (installs the filter)

    caplog.set_level(logging.WARNING, logger="psycopg")
    for _ in range(20):
        assert one(pg_store, "planner", "INSERT INTO plan VALUES (1, 'again')").error_kind == "constraint"
    logging.getLogger("psycopg").warning("error ignored terminating %r: %s", "<pipeline>",
                                         "pipeline aborted")
    assert caplog.records == []
    logging.getLogger("psycopg").warning("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]
