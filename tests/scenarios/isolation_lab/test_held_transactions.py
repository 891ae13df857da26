"""Held transactions, the smallest engine and store piece the lab needs: an automation
statement BEGIN/COMMIT/ROLLBACK holds or ends its role's transaction across calls, on a
connection of the role's own; SQLite shows its one writer at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lab import EXERCISE

from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.store.sqlite_store import WorldStore
from raceday.store.transactions import Control, NotControl, transaction_control
from raceday.transcript import events as ev

READ = "SELECT active_plan_id FROM endpoint"
WRITE = "UPDATE endpoint SET active_plan_id = :plan"


@pytest.mark.parametrize("sql, control", [
    ("BEGIN", Control("begin")),
    ("begin isolation level  serializable;", Control("begin", "serializable")),
    ("START TRANSACTION ISOLATION LEVEL REPEATABLE READ", Control("begin", "repeatable read")),
    ("BEGIN IMMEDIATE TRANSACTION", Control("begin", "immediate")),
    ("COMMIT", Control("commit")),
    ("end", Control("commit")),
    ("ROLLBACK WORK", Control("rollback")),
    ("SELECT 'BEGIN'", None),
    ("UPDATE endpoint SET version = 1", None),
])
def test_transaction_control_is_read_from_the_statement(sql: str, control: Control | None) -> None:
    assert transaction_control(sql) == control


@pytest.mark.parametrize("sql", ["BEGIN ISOLATION LEVEL SOMETIMES", "ROLLBACK TO here",
                                 "BEGIN; SELECT 1", "COMMIT AND CHAIN"])
def test_what_only_looks_like_transaction_control_is_named(sql: str) -> None:
    with pytest.raises(NotControl, match="not transaction control raceday knows"):
        transaction_control(sql)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[WorldStore]:
    exercise = load_exercise(EXERCISE)
    with WorldStore.create(tmp_path / "world.db", exercise.world_sql, exercise.roles,
                           time_limit_s=1) as store:
        yield store


def plan_of(store: WorldStore, role: str) -> int:
    result = store.execute(role, READ)[0]
    assert result.ok, result
    return int(result.rows[0][0])


def test_sqlite_refuses_a_write_whose_read_is_out_of_date(lab: WorldStore) -> None:
    assert lab.begin("enactor-b").ok and lab.begin("enactor-a").ok
    assert plan_of(lab, "enactor-b") == plan_of(lab, "enactor-a") == 3
    assert lab.execute("enactor-a", WRITE, {"plan": 5})[0].rowcount == 1
    assert lab.commit("enactor-a").ok
    stale = lab.execute("enactor-b", WRITE, {"plan": 4})[0]
    assert not stale.ok and "database is locked" in (stale.error or "")
    assert "rolled back" in (stale.error or "") and lab.holds("enactor-b") is None
    assert plan_of(lab, "enactor-b") == 5  # nothing lost


def test_sqlite_has_one_writer_at_a_time(lab: WorldStore) -> None:
    assert lab.begin("enactor-b", "immediate").ok
    second = lab.begin("enactor-a", "immediate")  # waits SQLite's busy timeout, then gives up
    assert not second.ok and second.error_kind == "timeout" and lab.holds("enactor-a") is None
    assert lab.rollback("enactor-b").ok
    assert lab.begin("enactor-a", "immediate").ok and lab.commit("enactor-a").ok


def test_sqlite_names_the_isolation_levels_it_does_not_have(lab: WorldStore) -> None:
    refused = lab.begin("enactor-a", "serializable")
    assert not refused.ok and "SQLite has no isolation level" in (refused.error or "")
    assert lab.holds("enactor-a") is None


def test_a_held_transaction_is_not_ended_by_a_probe(lab: WorldStore) -> None:
    assert lab.begin("enactor-a").ok
    assert lab.execute("enactor-a", WRITE, {"plan": 7})[0].ok
    assert not lab.probe("enactor-a", [READ])[0].ok
    assert lab.commit("enactor-a").ok and plan_of(lab, "enactor-b") == 7
    assert not lab.commit("enactor-a").ok  # nothing held any more


def test_an_edit_that_only_looks_like_a_begin_is_refused(tmp_path: Path) -> None:
    exercise = load_exercise(EXERCISE)
    session = open_session(exercise, ["operator"], tmp_path / "t")
    try:
        refused = session.edit_statement("operator", "b-begin", "BEGIN ISOLATION LEVEL SOMETIMES")
        assert isinstance(refused, ev.Refused) and "not transaction control" in refused.error
        taken = session.edit_statement("operator", "b-begin", "BEGIN IMMEDIATE")
        assert isinstance(taken, ev.Edit)
    finally:
        session.close()

