"""What a trusted query reads on PostgreSQL (`PostgresStore.reads_of`, from its plan), and the
catalog changes a kept answer must not outlive (`catalog_writes`): a night keeps a check's
answer while none of the tables it reads was written, so both must be complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from pg_fixtures import one

from raceday.engine.headless import open_session
from raceday.engine.load import load_named_exercise
from raceday.store.postgres.store import PostgresStore
from raceday.store.protocol import Store
from raceday.transcript import events as ev

pytestmark = pytest.mark.postgres


def test_a_check_reads_the_tables_it_names_and_those_behind_a_view(
        pg_store: PostgresStore) -> None:
    assert pg_store.reads_of("SELECT count(*) FROM plan") == frozenset({"plan"})
    assert pg_store.reads_of(
        "SELECT e.name FROM endpoint AS e WHERE NOT EXISTS (SELECT 1 FROM plan_record AS r "
        "WHERE r.plan_id = e.active_plan_id AND r.endpoint = e.name)") == frozenset(
            {"endpoint", "plan_record"})
    assert pg_store.reads_of("SELECT * FROM dns_answer") == frozenset({"endpoint", "plan_record"})
    assert pg_store.reads_of("SELECT lower(name) FROM automation WHERE enabled = 1") == \
        frozenset({"automation"})


def test_a_query_whose_answer_may_move_with_nothing_written_has_no_read_set(
        pg_store: PostgresStore) -> None:
    for sql in ("SELECT now()", "SELECT CURRENT_TIMESTAMP", "SELECT random()",
                "SELECT nextval('audit_id_seq')", "SELECT last_value FROM audit_id_seq",
                "SELECT count(*) FROM pg_catalog.pg_class", "SELECT * FROM sqlite_master",
                "SELECT to_char(now(), 'HH24:MI') FROM plan",
                "SELECT 1 WHERE false AND EXISTS (SELECT 1 FROM plan)"):
        assert pg_store.reads_of(sql) is None, sql
    # what a function the team made reads, and a clock behind a view: the query does not show
    assert one(pg_store, "responder", "CREATE FUNCTION plans() RETURNS bigint LANGUAGE sql "
                                      "AS 'SELECT count(*) FROM plan'").ok
    assert pg_store.reads_of("SELECT plans()") is None
    assert pg_store.reads_of("SELECT \"plans\"() FROM endpoint") is None
    assert one(pg_store, "responder", "CREATE VIEW stamped AS SELECT id, clock_timestamp() AS t "
                                      "FROM plan").ok
    assert pg_store.reads_of("SELECT id FROM stamped") is None


def test_a_query_with_parameters_or_not_one_query_has_no_read_set(
        pg_store: PostgresStore) -> None:
    # a value may fold away a part of the plan another value keeps
    assert pg_store.reads_of("SELECT 1 WHERE :failed = 1 OR EXISTS (SELECT 1 FROM plan)",
                             {"failed": 1}) is None
    for sql in ("SELEC 1", "SELECT 1; SELECT 2", "SELECT * FROM nowhere"):
        assert pg_store.reads_of(sql) is None, sql
    assert pg_store.app_query("SELECT count(*) FROM plan")[1] == [(3,)]  # nothing was run


def test_every_change_of_the_catalogs_is_counted_whatever_its_keyword(
        pg_store: PostgresStore) -> None:
    def counted(sql: str) -> int:
        before = pg_store.catalog_writes
        result = one(pg_store, "responder", sql)
        assert result.ok, result.error
        return pg_store.catalog_writes - before

    assert counted("SELECT count(*) FROM plan") == 0
    assert counted("UPDATE automation SET enabled = enabled") == 0
    assert counted("CREATE TABLE scratch (a integer)") == 1
    # a TRUNCATE changes no row the server counts as written: the table's new file is seen
    assert counted("TRUNCATE scratch") == 1
    # a function doing DDL, called by a SELECT: the statement's keyword says nothing
    assert counted("CREATE FUNCTION swap() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN "
                   "ALTER TABLE automation RENAME TO automation_old; "
                   "CREATE VIEW automation AS SELECT name, 0 AS enabled FROM automation_old; "
                   "RETURN 1; END $$") == 1
    assert counted("SELECT swap()") == 1
    # and the world's tables are found again by name: a write to the renamed one still counts
    assert one(pg_store, "responder", "UPDATE automation_old SET enabled = 0").writes == (
        "automation_old",)
    # a name psycopg or SQL would read as something else is still one table's
    assert counted('CREATE TABLE "50% of \'it\'" (a integer)') == 1
    assert one(pg_store, "responder", "SELECT 1").ok  # the tables are found by name again
    assert one(pg_store, "responder", 'INSERT INTO "50% of \'it\'" VALUES (1)').writes == (
        "50% of 'it'",)


def test_what_a_deferred_trigger_writes_at_commit_is_a_write_of_the_statement(
        pg_store: PostgresStore) -> None:
    """A constraint trigger deferred to COMMIT writes after the statement itself: still its."""
    for sql in ("CREATE FUNCTION later() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "UPDATE plan_record SET weight = weight + 1 WHERE plan_id = 1; RETURN NULL; END $$",
                "CREATE CONSTRAINT TRIGGER at_commit AFTER UPDATE ON automation DEFERRABLE "
                "INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION later()"):
        assert one(pg_store, "responder", sql).ok, sql
    result = one(pg_store, "responder", "UPDATE automation SET enabled = enabled")
    assert result.ok, result.error
    assert set(result.writes) == {"automation", "plan_record"}
    # once for each of the two automation rows, at COMMIT
    assert pg_store.app_query("SELECT DISTINCT weight FROM plan_record WHERE plan_id = 1")[1] == [
        (12,)]


def test_a_kept_kill_switch_is_asked_again_after_a_function_empties_its_table(
        pg_dsn: str, tmp_path: Path) -> None:
    """The Planner's `when` check is kept while `automation` is not written; a team function
    that TRUNCATEs it writes no row the server counts, yet the Planner is switched off."""
    session = open_session(load_named_exercise("dynamodb-dns-race"), ("responder",),
                           tmp_path, db=pg_dsn, ahead=False)
    try:
        session.advance_to(session.minute + 6)
        planner_runs = [e for e in session.events
                        if isinstance(e, ev.Automation) and e.task == "planner-generate"]
        assert planner_runs and all(e.outcome == "applied" for e in planner_runs)
        for sql in ("CREATE FUNCTION quiet() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN "
                    "TRUNCATE automation; RETURN 0; END $$", "SELECT quiet()"):
            result = session.execute("responder", sql)[0]
            assert result.ok, result.error
        seen = len(session.events)
        session.advance_to(session.minute + 6)
        later = [e for e in session.events[seen:]
                 if isinstance(e, ev.Automation) and e.task == "planner-generate"]
        assert later and all(e.outcome == "skipped" for e in later)
    finally:
        session.close()
        store = session.store
        assert isinstance(store, PostgresStore)
        store.drop()


def test_the_store_says_by_value_what_it_can_say_of_its_answers(pg_store: PostgresStore) -> None:
    seen: Store = pg_store  # the protocol declares each (engine/checks.py reads them plainly)
    assert (seen.reads_complete, seen.writes_complete, seen.asks_together) == (False, True, True)
    before = seen.catalog_writes
    assert seen.execute("responder", "CREATE TABLE note (id integer PRIMARY KEY)")[0].ok
    assert seen.catalog_writes == before + 1
