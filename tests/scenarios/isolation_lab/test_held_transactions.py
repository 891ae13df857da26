"""Held transactions, the smallest engine and store piece the lab needs: an automation
statement BEGIN/COMMIT/ROLLBACK holds or ends its role's transaction across calls, on a
connection of the role's own; SQLite shows its one writer at a time."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab import EXERCISE

from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.store.sqlite_store import WorldStore
from raceday.store.sqlite_world import LOCK_WAIT_S
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
    second = lab.begin("enactor-a", "immediate")  # at once: enactor-b holds the lock
    assert not second.ok and second.error_kind == "timeout" and lab.holds("enactor-a") is None
    assert lab.rollback("enactor-b").ok
    assert lab.begin("enactor-a", "immediate").ok and lab.commit("enactor-a").ok


def test_a_lock_only_the_session_can_let_go_is_not_waited_for(lab: WorldStore) -> None:
    """Another role of the session holds the write lock: only a later call can end it, so
    the write is refused at once instead of after LOCK_WAIT_S (a frozen screen)."""
    assert lab.begin("enactor-a").ok
    assert lab.execute("enactor-a", WRITE, {"plan": 5})[0].ok
    blocked = lab.execute("enactor-b", WRITE, {"plan": 4})[0]
    assert not blocked.ok and "database is locked" in (blocked.error or "")
    assert blocked.elapsed_ms < LOCK_WAIT_S * 1000 / 2, "it waited for its own session's lock"
    assert lab.commit("enactor-a").ok
    assert lab.execute("enactor-b", WRITE, {"plan": 4})[0].ok


def test_a_lock_held_outside_the_session_is_still_waited_for(lab: WorldStore) -> None:
    """A facilitator's sqlite3 shell holding the lock a moment: the write waits and goes
    through (after the session's own lock came and went, too)."""
    assert lab.begin("enactor-a").ok and lab.execute("enactor-a", WRITE, {"plan": 5})[0].ok
    assert not lab.execute("enactor-b", WRITE, {"plan": 4})[0].ok  # its own: at once
    assert lab.commit("enactor-a").ok
    shell = sqlite3.connect(lab.path, isolation_level=None, check_same_thread=False)
    shell.execute("BEGIN IMMEDIATE")
    threading.Timer(0.2, shell.rollback).start()
    try:
        result = lab.execute("enactor-b", WRITE, {"plan": 6})[0]
    finally:
        time.sleep(0.25)
        shell.close()
    assert result.ok, result.error


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

