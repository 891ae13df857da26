"""What a trusted query reads, as the session keys its kept answers on (store.reads)."""

from __future__ import annotations

from raceday.store.protocol import Store
from raceday.store.sqlite_store import WorldStore


def test_a_check_reads_the_tables_it_names_and_those_behind_a_view(store: WorldStore) -> None:
    assert store.reads_of("SELECT count(*) FROM plan") == frozenset({"plan"})
    assert store.reads_of(
        "SELECT e.name FROM endpoint AS e WHERE NOT EXISTS (SELECT 1 FROM plan_record AS r "
        "WHERE r.plan_id = e.active_plan_id AND r.endpoint = e.name)") == frozenset(
            {"endpoint", "plan_record"})
    assert {"endpoint", "plan_record"} <= (store.reads_of("SELECT * FROM dns_answer") or set())
    assert store.reads_of("SELECT 1 WHERE :failed = 1 AND EXISTS (SELECT 1 FROM plan)",
                          {"failed": 0}) == frozenset({"plan"})


def test_a_query_whose_answer_follows_no_write_has_no_read_set(store: WorldStore) -> None:
    for sql in ("SELECT datetime('now')", "SELECT CURRENT_TIMESTAMP", "SELECT random()",
                "SELECT name FROM pragma_table_info('plan')", "SELECT total_changes()"):
        assert store.reads_of(sql) is None, sql
    # the clock behind a view the team made: the query's text does not show it
    assert store.execute("responder", "CREATE VIEW stamped AS SELECT id, julianday('now') AS t "
                                      "FROM plan")[0].ok
    assert store.reads_of("SELECT id FROM stamped") is None


def test_what_cannot_be_prepared_or_is_not_one_query_has_no_read_set(store: WorldStore) -> None:
    for sql in ("SELEC 1", "SELECT 1; SELECT 2", "DELETE FROM plan", "SELECT * FROM nowhere"):
        assert store.reads_of(sql) is None, sql
    assert store.app_query("SELECT count(*) FROM plan")[1] == [(3,)]  # nothing was run


def test_the_store_says_by_value_what_it_can_say_of_its_answers(store: WorldStore) -> None:
    seen: Store = store  # the protocol declares each (engine/checks.py reads them plainly)
    assert (seen.reads_complete, seen.writes_complete, seen.asks_together) == (True, True, False)
    assert seen.catalog_writes == 0  # not counted: a schema change is told by its result
    assert seen.execute("responder", "CREATE TABLE note (id INTEGER PRIMARY KEY)")[0].schema_changed
    assert seen.catalog_writes == 0
