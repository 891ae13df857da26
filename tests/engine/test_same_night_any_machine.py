"""The same night on any machine (issue 58): the automation's statements are not cut by the
players' wall-clock limit but by a budget of work the database counts, so a slow or loaded
machine plays the night a fast one plays.

recovery-under-load at 100,000 droplets under CPU load had 56 of its automated statements
cut at the players' 2 s, and its outage moved by half an hour. Here a night is played twice,
once on a store slowed down on purpose (every thousand steps of SQLite's work take half a
millisecond more), and what the automation did is compared."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from engine_fixtures import tiny_exercise

from raceday.engine.automation import AUTOMATION_WORK_STEPS
from raceday.engine.headless import open_session
from raceday.engine.session import Session
from raceday.store import sqlite_store
from raceday.transcript import events as ev

# A view that counts to 400,000 the slow way (about 6 million steps, 0.3 s here), which the
# automation's write reads through a trigger of the team's: heavy work inside its statement.
HEAVY = """
CREATE VIEW heavy AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
                                            WHERE x < 400000) SELECT count(*) AS n FROM c;
CREATE TRIGGER heavy_on_write AFTER UPDATE ON config BEGIN SELECT n FROM heavy; END;
"""
RUNAWAY = """
CREATE VIEW endless AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
    SELECT count(*) AS n FROM c;
CREATE TRIGGER endless_on_write AFTER UPDATE ON config BEGIN SELECT n FROM endless; END;
"""


@pytest.fixture
def slowed() -> Iterator[Callable[[], None]]:
    """Call it to make every thousand steps of SQLite's work half a millisecond slower."""
    original = sqlite_store.WorldStore._progress

    def slow(self: sqlite_store.WorldStore) -> int:
        time.sleep(0.0005)
        return original(self)

    def apply() -> None:
        sqlite_store.WorldStore._progress = slow  # type: ignore[method-assign]

    yield apply
    sqlite_store.WorldStore._progress = original  # type: ignore[method-assign]


Run = tuple[int, str | None, bool, str | None, int | None]


def _night(folder: Path, schema: str) -> tuple[Session, list[Run]]:
    session = open_session(tiny_exercise(), ("operator",), folder)
    for statement in (s.strip() for s in schema.split(";\n") if s.strip()):
        [result] = session.execute("operator", statement)
        assert result.ok, result.error
    session.advance_to(12)
    automated = [(e.minute, e.task, e.ok, e.error_kind, e.rowcount) for e in session.events
                 if isinstance(e, ev.Statement) and e.automated]
    return session, automated


def test_a_slow_machine_plays_the_automations_night_as_a_fast_one(
        tmp_path: Path, slowed: Callable[[], None]) -> None:
    fast, on_fast = _night(tmp_path / "fast", HEAVY)
    fast.end()
    slowed()
    started = time.perf_counter()
    slow, on_slow = _night(tmp_path / "slow", HEAVY)
    heavy_write = time.perf_counter() - started
    slow.end()
    assert heavy_write > slow.store.time_limit_s  # longer than the players may take
    assert on_slow == on_fast
    assert any(task == "write" and ok for _m, task, ok, _k, _r in on_fast)


def test_a_runaway_trigger_in_the_automations_statement_is_cut_by_its_work_budget(
        tmp_path: Path) -> None:
    session, automated = _night(tmp_path / "runaway", RUNAWAY)
    session.end()
    [write, *_] = [e for e in session.events
                   if isinstance(e, ev.Statement) and e.automated and e.task == "write"]
    assert not write.ok and write.error_kind == "timeout"
    assert write.error == (f"statement stopped after {AUTOMATION_WORK_STEPS:,} steps of work "
                           "(the automation's work limit)")
