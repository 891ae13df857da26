"""The exercise's history statements (what the night left behind, run once, never edited) are
not cut short by the players' time limit: at 100,000 droplets on a loaded machine the
outage's aftermath overran it, and the night went on as if the leases had never timed out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.transcript import events as ev

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load"


def test_the_nights_history_runs_whole_under_a_limit_that_stops_the_players(
        tmp_path: Path) -> None:
    exercise = load_exercise(EXERCISE)
    exercise = dataclasses.replace(exercise, world_sql=exercise.world_sql.replace(
        "SELECT 20000 AS size", "SELECT 4000 AS size"))
    # a tenth of a millisecond: no statement that reads the fleet finishes in it
    session = open_session(exercise, ["responder"], tmp_path, time_limit_s=0.0001)
    try:
        aftermath = [e for e in session.events
                     if isinstance(e, ev.Statement) and e.statement == "leases-timed-out"]
        assert [(e.ok, e.rowcount, e.error) for e in aftermath] == [(True, 4000, None)]
        assert session.store.time_limit_s == 0.0001  # raised for the history statement only
        [mine] = session.execute("responder",
                                 "SELECT count(*) FROM droplet AS a, droplet AS b")
        assert not mine.ok and mine.error is not None and "time limit" in mine.error
    finally:
        session.close()


def test_a_limit_raised_for_the_history_is_the_raising_threads_alone(tmp_path: Path) -> None:
    """While the history runs with its minute, a night played beside it in another thread
    (a baseline played ahead reads the limit to make its worlds) keeps the players' limit:
    it got the minute too while the limit was the store's."""
    import threading

    from raceday.engine.load import load_named_exercise

    session = open_session(load_named_exercise("lost-update-basics"), ["operator"],
                           tmp_path, time_limit_s=0.5)
    store = session.store
    seen: list[float] = []
    try:
        with store.limit_raised_to(60):
            beside = threading.Thread(target=lambda: seen.append(store.time_limit_s))
            beside.start()
            beside.join()
            assert store.time_limit_s == 60
            with store.limit_raised_to(0.1):  # never lowered
                assert store.time_limit_s == 60
            assert store.time_limit_s == 60
        assert seen == [0.5] and store.time_limit_s == 0.5
    finally:
        session.close()
