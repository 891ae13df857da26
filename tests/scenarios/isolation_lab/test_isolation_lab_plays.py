"""The isolation lab on SQLite (the default): the lost update as it happened, SQLite's own
ways of refusing it, and the lazy or destructive plays that earn nothing for the rounds.

On SQLite the Enactors start with no transaction (each statement commits on its own): the
lost update happens. SQLite has no isolation levels, so the contrast is its one writer at a
time: BEGIN IMMEDIATE makes the other Enactor's write wait and fail ("database is locked"),
and its retry comes after.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lab import SCRIPTS, Play, world_rows

from raceday.engine.session import Session
from raceday.transcript import events as ev

SAFE = ["begin-immediate", "version-column", "check-in-the-write"]
CHEATS = ["cheat-stop-enactor-b", "cheat-drop-table", "cheat-declare-everything",
          "cheat-never-commit"]


def statements(session: Session, role: str, at: str | None = None) -> list[ev.Statement]:
    return [e for e in session.events if isinstance(e, ev.Statement) and e.role == role
            and (at is None or session.time_of(e.minute) == at)]


def decisions(session: Session, db: str | None = None) -> list[tuple[str, int, str]]:
    rows = world_rows(session, "SELECT role, plan_id, outcome FROM enactor_run ORDER BY id", db)
    return [(str(r[0]), int(r[1]), str(r[2])) for r in rows]


def active_plan(session: Session, db: str | None = None) -> int:
    return int(world_rows(session, "SELECT active_plan_id FROM endpoint", db)[0][0])


def test_as_it_happened_the_stale_write_wins_twice(play: Play) -> None:
    session, result = play("as-it-happened")
    assert result["fault"]["started_at"] == "23:44"
    assert result["recovery"]["relapses"] == ["23:54"]  # round 2 loses an update again
    # B applied 4 after A's 5, and 6 after A's 7: each time the older plan won
    applied = [(role, plan) for role, plan, outcome in decisions(session) if outcome == "applied"]
    assert applied[:4] == [("enactor-a", 5), ("enactor-b", 4), ("enactor-a", 7), ("enactor-b", 6)]
    assert result["tasks"]["points"] == 0 and result["guards"]["points"] == 0
    assert result["detection"]["points"] == result["detection"]["max"]


def test_begin_immediate_is_one_writer_at_a_time(play: Play) -> None:
    session, result = play("begin-immediate")
    waited = [s for s in statements(session, "enactor-a", "23:52") if not s.ok]
    assert waited and "database is locked" in (waited[0].error or "")
    assert [s.sql for s in statements(session, "enactor-b", "23:50")][0] == "BEGIN IMMEDIATE"
    # B wrote 6 while it held the lock; A's retry at 23:55 read it and wrote 7 after it
    assert ("enactor-b", 6, "applied") in decisions(session)
    assert ("enactor-a", 7, "applied") in decisions(session)
    assert active_plan(session) == 9
    assert result["recovery"]["relapses"] == []
    assert "refuse-it" in result["tasks"]["done"]


def test_sqlite_has_no_isolation_levels_and_says_so(play: Play) -> None:
    session, result = play("serializable-with-retry")
    refused = [s for s in statements(session, "enactor-b", "23:50") if not s.ok]
    assert refused[0].sql == "BEGIN ISOLATION LEVEL SERIALIZABLE"
    assert "SQLite has no isolation level" in (refused[0].error or "")
    # B's continuation does not run outside the transaction it never got
    skipped = [e for e in session.events if isinstance(e, ev.Automation) and e.task == "b-apply"
               and session.time_of(e.minute) == "23:54"]
    assert skipped[0].outcome == "skipped" and "rolled back" in (skipped[0].note or "")
    assert ("enactor-b", 6, "gave up") in decisions(session)
    assert result["tasks"]["points"] == 0


@pytest.mark.parametrize("name", SAFE)
def test_a_safe_play_refuses_the_stale_write_and_lets_the_newer_one_through(
        play: Play, name: str) -> None:
    session, result = play(name)
    assert result["recovery"]["relapses"] == []
    assert active_plan(session) == 9  # round 3: B's newer plan went out
    assert not [d for d in decisions(session) if d[2] == "gave up"]
    assert result["guards"]["prevented"] == ["stale-apply"]
    assert result["guards"]["blocked_good_writes"] == []
    assert result["total"] == result["max"]


def test_a_version_check_turns_the_stale_write_into_zero_rows_and_a_retry(play: Play) -> None:
    session, _ = play("version-column")
    b = {session.time_of(s.minute): s for s in statements(session, "enactor-b")
         if s.sql.startswith("UPDATE")}
    assert b["23:54"].rowcount == 0  # round 2: stale, 0 rows, B keeps A's 7
    assert b["00:04"].rowcount == 0  # round 3: A wrote after B read: 0 rows ...
    assert b["00:05"].rowcount == 1  # ... and the retry, on a fresh read, applies 9
    assert ("enactor-b", 6, "kept the newer active plan") in decisions(session)


@pytest.mark.parametrize("name", CHEATS)
def test_a_lazy_or_destructive_play_earns_nothing_for_the_rounds(play: Play, name: str) -> None:
    _, naive = play("as-it-happened")
    _, cheat = play(name)
    assert cheat["tasks"]["points"] == 0
    assert cheat["guards"]["points"] == 0
    assert cheat["total"] <= naive["total"]


def test_keying_the_write_on_tonights_plan_numbers_is_seen_by_the_replay(play: Play) -> None:
    _, result = play("cheat-plan-numbers")
    assert result["guards"]["points"] == 0
    assert result["tasks"]["points"] == 0  # the rounds look right live; the replay disproves them
    # on the normal night Enactor B is on time with plans 4 and 6: its writes are refused
    assert {(b["task"], b["at"]) for b in result["guards"]["blocked_good_writes"]} == {
        ("b-on-time", "23:39"), ("b-on-time", "23:49")}


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_each_reference_play_scores_what_it_says_on_sqlite(play: Play, path: Path) -> None:
    said = re.search(r"^# This play scores (\d+) of 100 on SQLite", path.read_text(), re.M)
    assert said is not None, f"{path.name} does not say what it scores"
    _, result = play(path)
    assert result["total"] == int(said.group(1))


def test_the_page_follows_the_stale_write(play: Play) -> None:
    session, _ = play("as-it-happened")
    fault = next(e for e in session.events if isinstance(e, ev.Fault))
    page = next(e for e in session.events if isinstance(e, ev.Inject) and e.id == "page")
    assert (fault.sim_time, page.sim_time) == ("23:44", "23:45")
    assert page.inject_kind == "alarm"
    assert next(i for i in session.exercise.injects if i.id == "page").on_fault == "lost-update"
