"""The isolation lab's outcomes, at the store: two Enactors run the night's read-check-write
as real concurrent transactions, and what happens depends on how they hold them.

Each Enactor reads the endpoint's plan, decides, then writes the plan it read plus one
(the naive read-then-write). Run interleaved (A reads, B reads, A writes and commits, B
writes and commits):
- READ COMMITTED: both commit, one increment is lost;
- REPEATABLE READ and SERIALIZABLE: B is refused (40001) and must retry;
- SELECT ... FOR UPDATE: B waits for A's lock, then reads A's plan: nothing is lost;
- a version column: B's conditional write changes 0 rows, and says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from pg_fixtures import ROLES, WORLD_SQL, one

from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

READ = "SELECT active_plan_id FROM endpoint WHERE name = 'ddb'"
WRITE = "UPDATE endpoint SET active_plan_id = :plan WHERE name = 'ddb'"


@pytest.fixture
def lab(pg_dsn: str) -> Iterator[PostgresStore]:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, time_limit_s=3)
    try:
        yield store
    finally:
        store.drop()


def plan_now(store: PostgresStore) -> int:
    return int(store.app_query(READ)[1][0][0])


def read_plan(store: PostgresStore, role: str, sql: str = READ) -> int:
    result = one(store, role, sql)
    assert result.ok, result
    return int(result.rows[0][0])


def test_read_committed_loses_an_update(lab: PostgresStore) -> None:
    assert lab.begin("enactor-a").ok and lab.begin("enactor-b").ok
    a, b = read_plan(lab, "enactor-a"), read_plan(lab, "enactor-b")
    assert a == b == 2
    assert lab.execute("enactor-a", WRITE, {"plan": a + 1})[0].rowcount == 1
    assert lab.commit("enactor-a").ok
    assert lab.execute("enactor-b", WRITE, {"plan": b + 1})[0].rowcount == 1
    assert lab.commit("enactor-b").ok
    assert plan_now(lab) == 3  # two increments, one survived: the lost update


@pytest.mark.parametrize("level", ["repeatable read", "serializable"])
def test_a_stricter_level_refuses_the_second_writer(lab: PostgresStore, level: str) -> None:
    assert lab.begin("enactor-a", level).ok and lab.begin("enactor-b", level).ok
    a, b = read_plan(lab, "enactor-a"), read_plan(lab, "enactor-b")
    assert lab.execute("enactor-a", WRITE, {"plan": a + 1})[0].ok
    assert lab.commit("enactor-a").ok
    refused = lab.execute("enactor-b", WRITE, {"plan": b + 1})[0]
    assert not refused.ok and "could not serialize access" in (refused.error or "")
    assert "run it again" in (refused.error or "") and "rolled back" in (refused.error or "")
    assert lab.holds("enactor-b") is None
    # the retry reads A's plan and builds on it
    assert lab.begin("enactor-b", level).ok
    again = read_plan(lab, "enactor-b")
    assert lab.execute("enactor-b", WRITE, {"plan": again + 1})[0].ok and lab.commit("enactor-b").ok
    assert plan_now(lab) == 4


def test_select_for_update_makes_the_second_reader_wait(lab: PostgresStore) -> None:
    locked = READ + " FOR UPDATE"
    assert lab.begin("enactor-a").ok and lab.begin("enactor-b").ok
    a = read_plan(lab, "enactor-a", locked)
    seen: list[int] = []
    waited: list[float] = []

    def enactor_b() -> None:
        started = time.perf_counter()
        seen.append(read_plan(lab, "enactor-b", locked))  # blocks on A's row lock
        waited.append(time.perf_counter() - started)
        lab.execute("enactor-b", WRITE, {"plan": seen[0] + 1})
        lab.commit("enactor-b")

    other = threading.Thread(target=enactor_b)
    other.start()
    time.sleep(0.3)
    assert lab.execute("enactor-a", WRITE, {"plan": a + 1})[0].ok
    assert lab.commit("enactor-a").ok
    other.join(5)
    assert seen == [a + 1] and waited[0] >= 0.25  # B waited, then read A's plan
    assert plan_now(lab) == a + 2


def test_a_lock_held_too_long_is_a_clear_refusal_not_a_hang(lab: PostgresStore) -> None:
    assert lab.begin("enactor-a").ok
    assert one(lab, "enactor-a", READ + " FOR UPDATE").ok
    started = time.perf_counter()
    waited = one(lab, "enactor-b", "UPDATE endpoint SET active_plan_id = 9 WHERE name = 'ddb'")
    assert waited.error_kind == "timeout" and "lock" in (waited.error or "")
    assert time.perf_counter() - started < 2.5
    assert lab.rollback("enactor-a").ok
    assert one(lab, "enactor-b", "UPDATE endpoint SET active_plan_id = 9 WHERE name = 'ddb'").ok


def test_a_version_column_turns_the_lost_update_into_zero_rows(lab: PostgresStore) -> None:
    assert one(lab, "responder", "ALTER TABLE endpoint ADD COLUMN version INTEGER NOT NULL DEFAULT 1").ok
    versioned = ("UPDATE endpoint SET active_plan_id = :plan, version = version + 1 "
                 "WHERE name = 'ddb' AND version = :version")
    assert lab.begin("enactor-a").ok and lab.begin("enactor-b").ok
    a = one(lab, "enactor-a", "SELECT active_plan_id, version FROM endpoint WHERE name = 'ddb'").rows[0]
    b = one(lab, "enactor-b", "SELECT active_plan_id, version FROM endpoint WHERE name = 'ddb'").rows[0]
    assert lab.execute("enactor-a", versioned, {"plan": a[0] + 1, "version": a[1]})[0].rowcount == 1
    assert lab.commit("enactor-a").ok
    stale = lab.execute("enactor-b", versioned, {"plan": b[0] + 1, "version": b[1]})[0]
    assert stale.ok and stale.rowcount == 0  # B sees it changed nothing: re-read and retry
    assert lab.commit("enactor-b").ok
    assert plan_now(lab) == 3


def test_a_held_transaction_is_the_roles_own_and_ends_on_error(lab: PostgresStore) -> None:
    assert lab.begin("enactor-a").ok
    assert not lab.begin("enactor-a").ok  # one at a time
    assert not lab.begin("enactor-b", "read uncommitted-ish").ok
    assert one(lab, "enactor-a", "UPDATE endpoint SET active_plan_id = 7 WHERE name = 'ddb'").ok
    assert plan_now(lab) == 2  # not committed: others do not see it
    failed = one(lab, "enactor-a", "SELECT * FROM audit")  # enactor-a may not read audit
    assert failed.error_kind == "refused" and "rolled back" in (failed.error or "")
    assert lab.holds("enactor-a") is None and plan_now(lab) == 2
    assert not lab.commit("enactor-a").ok  # nothing to commit any more


def test_a_transaction_left_open_is_ended_by_the_server_and_the_role_plays_on(lab: PostgresStore) -> None:
    lab.idle_timeout_ms = 300
    assert lab.begin("enactor-a").ok
    assert one(lab, "enactor-a", "UPDATE endpoint SET active_plan_id = 7 WHERE name = 'ddb'").ok
    time.sleep(1.0)  # the player walked away with the transaction open
    assert one(lab, "enactor-b", "UPDATE endpoint SET active_plan_id = 8 WHERE name = 'ddb'").ok
    lost = one(lab, "enactor-a", "SELECT 1")
    assert not lost.ok and "rolled back" in (lost.error or "")
    assert lab.holds("enactor-a") is None
    assert one(lab, "enactor-a", "SELECT active_plan_id FROM endpoint WHERE name = 'ddb'").rows == ((8,),)
