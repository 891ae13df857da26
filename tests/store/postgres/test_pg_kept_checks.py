"""Kept checks on PostgreSQL (store/postgres/kept.py): a check's answer is reused only while
nothing it reads can have changed, so a kept answer never hides what a player did."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_fixtures import ROLES, WORLD_SQL, one

from raceday.store.base import StoreError
from raceday.store.postgres.catalog import Catalog
from raceday.store.postgres.kept import KEEP_VARIABLE
from raceday.store.postgres.shapes import check_reads, written
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

SWITCH = "SELECT 1 FROM automation WHERE name = 'dns-enactor' AND enabled = 1"
ANSWERS = "SELECT endpoint, address FROM dns_answer ORDER BY 1, 2"


def _ask(store: PostgresStore, sql: str, **params: Any) -> tuple[list[Any], bool]:
    """The check's rows, and whether they were given from memory."""
    before = store.kept_figures.kept
    rows = store.app_query(sql, params or None)[1]
    return rows, store.kept_figures.kept > before


def test_an_answer_is_kept_until_a_table_it_reads_is_written(pg_store: PostgresStore) -> None:
    assert _ask(pg_store, SWITCH) == ([(1,)], False)
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    assert one(pg_store, "planner", "INSERT INTO plan VALUES (4, '23:01')").ok  # not read
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    assert one(pg_store, "responder", "UPDATE automation SET enabled = 0").ok
    assert _ask(pg_store, SWITCH) == ([], False)
    # a write of no rows to a table it reads is still a write of it
    assert _ask(pg_store, SWITCH) == ([], True)
    assert one(pg_store, "responder", "DELETE FROM automation WHERE name = 'nobody'").ok
    assert _ask(pg_store, SWITCH) == ([], False)


def test_parameters_are_part_of_the_key(pg_store: PostgresStore) -> None:
    sql = "SELECT name FROM endpoint WHERE active_plan_id = :plan"
    assert _ask(pg_store, sql, plan=2)[0] == [("ddb",), ("fips",)]
    assert _ask(pg_store, sql, plan=1) == ([], False)
    assert _ask(pg_store, sql, plan=2) == ([("ddb",), ("fips",)], True)


def test_a_view_answers_for_the_tables_under_it(pg_store: PostgresStore) -> None:
    first, _ = _ask(pg_store, ANSWERS)
    assert _ask(pg_store, ANSWERS) == (first, True)
    assert one(pg_store, "planner", "UPDATE plan_record SET address = '192.0.2.99' "
                                    "WHERE plan_id = 2 AND endpoint = 'ddb'").ok
    again, kept = _ask(pg_store, ANSWERS)
    assert not kept and ("ddb", "192.0.2.99") in again


def test_a_cascade_is_a_write_of_the_table_it_reaches(pg_store: PostgresStore) -> None:
    sql = "SELECT count(*) FROM plan_record"
    assert _ask(pg_store, sql)[0] == [(6,)]
    assert _ask(pg_store, sql) == ([(6,)], True)
    assert one(pg_store, "enactor-b", "DELETE FROM plan WHERE id = 3").rowcount == 1
    assert _ask(pg_store, sql) == ([(4,)], False)


def test_a_write_to_a_table_with_a_trigger_forgets_everything(pg_store: PostgresStore) -> None:
    """endpoint's trigger writes audit: a check of audit is asked again (and of
    automation too: a trigger may write any table)."""
    audit = "SELECT count(*) FROM audit"
    assert _ask(pg_store, audit)[0] == [(0,)]
    assert _ask(pg_store, SWITCH)[0] == [(1,)]
    resets = pg_store.kept_figures.resets
    assert one(pg_store, "enactor-a", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'").ok
    assert pg_store.kept_figures.resets == resets + 1
    assert _ask(pg_store, audit) == ([(1,)], False)
    assert _ask(pg_store, SWITCH) == ([(1,)], False)


def test_a_trigger_a_player_adds_is_seen_at_once(pg_store: PostgresStore) -> None:
    """A trigger on a new table that switches the automation off: a write to that table,
    which no check reads, still forgets the kill switch's answer."""
    assert _ask(pg_store, SWITCH)[0] == [(1,)]
    made = pg_store.execute("responder", """
        CREATE TABLE lease (name TEXT);
        CREATE FUNCTION off() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN UPDATE automation SET enabled = 0; RETURN new; END $$;
        CREATE TRIGGER off AFTER INSERT ON lease FOR EACH ROW EXECUTE FUNCTION off()""")
    assert all(r.ok for r in made), made
    assert _ask(pg_store, SWITCH) == ([(1,)], False)  # DDL forgot it
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    assert one(pg_store, "responder", "INSERT INTO lease VALUES ('a')").ok
    assert _ask(pg_store, SWITCH) == ([], False)


@pytest.mark.parametrize("change", [
    "DO $$ BEGIN UPDATE automation SET enabled = 0; END $$",
    "SELECT off()",
], ids=["do-block", "a-function-a-select-calls"])
def test_code_a_statement_runs_forgets_everything(pg_store: PostgresStore, change: str) -> None:
    assert one(pg_store, "responder", """CREATE FUNCTION off() RETURNS int LANGUAGE plpgsql AS $$
        BEGIN UPDATE automation SET enabled = 0; RETURN 1; END $$""").ok
    assert _ask(pg_store, SWITCH)[0] == [(1,)]
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    assert one(pg_store, "responder", change).ok
    assert _ask(pg_store, SWITCH) == ([], False)


def test_ddl_forgets_everything_and_a_broken_check_is_never_kept(pg_store: PostgresStore) -> None:
    assert _ask(pg_store, "SELECT * FROM plan ORDER BY id")[0][0] == (1, "22:55")
    assert one(pg_store, "responder", "ALTER TABLE plan ADD COLUMN note TEXT DEFAULT 'x'").ok
    assert _ask(pg_store, "SELECT * FROM plan ORDER BY id") == (
        [(1, "22:55", "x"), (2, "22:57", "x"), (3, "22:59", "x")], False)
    assert _ask(pg_store, SWITCH)[0] == [(1,)]
    assert one(pg_store, "responder", "DROP TABLE automation").ok
    for _ in range(2):
        with pytest.raises(StoreError, match="automation"):
            pg_store.app_query(SWITCH)
    assert one(pg_store, "responder", "CREATE TABLE automation (name TEXT, enabled INT)").ok
    assert _ask(pg_store, SWITCH) == ([], False)


def test_truncate_forgets_everything(pg_store: PostgresStore) -> None:
    assert one(pg_store, "responder", "CREATE TABLE lease (name TEXT)").ok
    assert one(pg_store, "responder", "INSERT INTO lease VALUES ('a')").ok
    assert _ask(pg_store, "SELECT count(*) FROM lease")[0] == [(1,)]
    assert one(pg_store, "responder", "TRUNCATE lease").ok
    assert _ask(pg_store, "SELECT count(*) FROM lease") == ([(0,)], False)


def test_a_held_transaction_shows_at_its_commit_and_a_rollback_forgets(pg_store: PostgresStore) -> None:
    assert pg_store.begin("responder").ok
    assert one(pg_store, "responder", "UPDATE automation SET enabled = 0").ok
    assert _ask(pg_store, SWITCH)[0] == [(1,)]  # not committed: the checker sees it on
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    assert pg_store.rollback("responder").ok
    assert _ask(pg_store, SWITCH) == ([(1,)], False)
    assert pg_store.begin("responder").ok
    assert one(pg_store, "responder", "UPDATE automation SET enabled = 0").ok
    assert _ask(pg_store, SWITCH)[0] == [(1,)]
    assert pg_store.commit("responder").ok
    assert _ask(pg_store, SWITCH) == ([], False)


def test_a_statement_rolled_back_before_its_commit_changes_nothing_kept(
        pg_store: PostgresStore) -> None:
    plans = "SELECT count(*) FROM plan"
    assert _ask(pg_store, SWITCH)[0] == [(1,)] and _ask(pg_store, plans)[0] == [(3,)]
    assert not one(pg_store, "planner", "INSERT INTO plan VALUES (4, 'x'), (1, 'again')").ok
    assert not one(pg_store, "responder", "DO $$ BEGIN UPDATE automation SET enabled = 0; "
                                          "RAISE EXCEPTION 'no'; END $$").ok
    assert _ask(pg_store, plans) == ([(3,)], True)
    assert _ask(pg_store, SWITCH) == ([(1,)], True)


def test_a_commit_that_fails_counts_as_written_and_a_probe_forgets_everything(
        pg_store: PostgresStore) -> None:
    assert one(pg_store, "responder", "CREATE TABLE lease (plan_id INT REFERENCES plan (id) "
                                      "DEFERRABLE INITIALLY DEFERRED)").ok
    leases = "SELECT count(*) FROM lease"
    assert _ask(pg_store, leases)[0] == [(0,)] and _ask(pg_store, SWITCH)[0] == [(1,)]
    refused = one(pg_store, "responder", "INSERT INTO lease VALUES (99)")
    assert refused.error_kind == "constraint", refused  # at COMMIT
    assert _ask(pg_store, leases) == ([(0,)], False)
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    pg_store.probe("responder", ["UPDATE automation SET enabled = 0"])
    assert _ask(pg_store, SWITCH) == ([(1,)], False)


def test_a_default_that_calls_code_makes_a_write_forget_everything(pg_store: PostgresStore) -> None:
    made = pg_store.execute("responder", """
        CREATE FUNCTION off() RETURNS int LANGUAGE plpgsql AS $$
        BEGIN UPDATE automation SET enabled = 0; RETURN 1; END $$;
        CREATE TABLE lease (name TEXT, n INT DEFAULT off())""")
    assert all(r.ok for r in made), made
    assert _ask(pg_store, SWITCH)[0] == [(1,)]
    assert _ask(pg_store, SWITCH) == ([(1,)], True)
    assert one(pg_store, "responder", "INSERT INTO lease (name) VALUES ('a')").ok
    assert _ask(pg_store, SWITCH) == ([], False)


@pytest.mark.parametrize("check", [
    "SELECT count(*) FROM plan WHERE random() < 2",
    "SELECT now() > '2000-01-01' FROM plan",
    "SELECT CURRENT_TIMESTAMP FROM plan",
    "SELECT 'now'::timestamptz > '2000-01-01' FROM plan",
    "SELECT count(*) FROM pg_catalog.pg_locks",
    "SELECT last_value FROM audit_id_seq",
])
def test_a_check_that_may_change_with_nothing_written_is_never_kept(
        pg_store: PostgresStore, check: str) -> None:
    pg_store.app_query(check)
    assert not _ask(pg_store, check)[1]


def test_a_view_a_player_made_unsteady_is_never_kept(pg_store: PostgresStore) -> None:
    assert one(pg_store, "responder", "CREATE VIEW sometimes AS SELECT * FROM dns_answer "
               "WHERE random() < 2").ok
    assert one(pg_store, "responder", "CREATE VIEW later AS SELECT * FROM dns_answer "
               "WHERE now() > '2000-01-01'").ok
    for view in ("sometimes", "later"):
        pg_store.app_query(f"SELECT * FROM {view}")
        assert not _ask(pg_store, f"SELECT * FROM {view}")[1]
    assert _ask(pg_store, ANSWERS)[0] and _ask(pg_store, ANSWERS)[1]


def test_a_player_function_in_a_view_is_never_kept(pg_store: PostgresStore) -> None:
    assert one(pg_store, "responder", "CREATE FUNCTION w(int) RETURNS int IMMUTABLE "
               "LANGUAGE sql AS 'SELECT $1'").ok
    assert one(pg_store, "responder", "CREATE VIEW heavy AS SELECT w(weight) AS w FROM plan_record").ok
    pg_store.app_query("SELECT * FROM heavy")
    assert not _ask(pg_store, "SELECT * FROM heavy")[1]
    assert not _ask(pg_store, "SELECT w(1) FROM plan")[1] and not _ask(pg_store, "SELECT w(1) FROM plan")[1]


def test_the_statement_shapes_fail_closed() -> None:
    catalog = Catalog(tables={"a": frozenset({"a"}), "b": frozenset({"b"})}, views={},
                      unkept=frozenset(), writes={"a": frozenset({"a", "b"}), "b": None},
                      code=frozenset({"f"}), unsteady=frozenset({"now"}),
                      volatile=frozenset({"query_to_xml"}), schemas=frozenset({"public"}))
    assert written("SELECT * FROM a", catalog) == frozenset()
    assert written("UPDATE a SET x = 1", catalog) == frozenset({"a", "b"})  # it cascades to b
    for unknown in ("UPDATE b SET x = 1",  # b has a trigger
                    "UPDATE c SET x = 1",  # not a table the catalog knows
                    "SELECT f()", "SELECT query_to_xml('select 1', true, true, '')",
                    "WITH d AS (DELETE FROM b RETURNING *) SELECT * FROM d",
                    "INSERT INTO a WITH d AS (DELETE FROM b RETURNING *) SELECT * FROM d",
                    "EXPLAIN ANALYZE DELETE FROM b", "DO $$ BEGIN END $$", "CALL p()",
                    "TRUNCATE a", "CREATE TABLE z (i int)", "SELECT * INTO z FROM a"):
        assert written(unknown, catalog) is None, unknown
    assert check_reads("SELECT 1 FROM a JOIN b USING (i)", catalog) == frozenset({"a", "b"})
    for never in ("SELECT now() FROM a", "SELECT * FROM public.a", "SELECT f() FROM a",
                  "SELECT localtimestamp FROM a", "WITH d AS (DELETE FROM a RETURNING 1) "
                  "SELECT * FROM d", "SELECT * FROM pg_stat_activity"):
        assert check_reads(never, catalog) is None, never


@pytest.fixture
def no_keeping(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(KEEP_VARIABLE, "0")
    yield


def test_without_keeping_every_check_is_sent(pg_dsn: str, no_keeping: None) -> None:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    try:
        for _ in range(3):
            assert _ask(store, SWITCH) == ([(1,)], False)
    finally:
        store.drop()


# -- whole nights: the same with and without kept checks -------------------------------------

NIGHTS = [
    ("lost-update-basics", "solo-complete.yaml"),
    ("dynamodb-dns-race", "postgres/guarded.yaml"),
]
_VARYING = ("elapsed_ms", "wall_time", "session", "folder", "path")


def _steady(value: Any) -> Any:
    """An event or score without what differs from run to run (times, folders)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in _VARYING}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _play(name: str, script: str, folder: Path, dsn: str) -> tuple[list[Any], Any]:
    from raceday.engine.headless import run_script
    from raceday.engine.load import load_named_exercise
    from raceday.engine.script import load_script
    from raceday.exercise.catalog import BUNDLED_DIR

    exercise = load_named_exercise(name)
    path = BUNDLED_DIR / name / "scripts" / script
    session, score = run_script(exercise, load_script(path, exercise), folder, db=dsn)
    lines = (session.folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [_steady(json.loads(line)) for line in lines]
    return events, _steady(json.loads(json.dumps(score)))


@pytest.mark.parametrize(("name", "script"), NIGHTS, ids=[n for n, _ in NIGHTS])
def test_a_night_is_the_same_with_and_without_kept_checks(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, script: str) -> None:
    kept_events, kept_score = _play(name, script, tmp_path / "kept", pg_dsn)
    monkeypatch.setenv(KEEP_VARIABLE, "0")
    asked_events, asked_score = _play(name, script, tmp_path / "asked", pg_dsn)
    assert kept_score == asked_score
    assert len(kept_events) == len(asked_events)
    for kept, asked in zip(kept_events, asked_events, strict=True):
        assert kept == asked
