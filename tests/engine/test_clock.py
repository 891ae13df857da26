"""The live pace: simulated minutes from wall seconds the caller supplies (no timers)."""

from __future__ import annotations

from collections.abc import Callable

from raceday.engine.clock import LiveClock, Pace
from raceday.engine.session import Session
from raceday.transcript import events as ev


def test_speed_maps_wall_seconds_to_simulated_minutes() -> None:
    clock = LiveClock(speed=120)
    clock.start(wall=100.0)
    assert clock.minutes(100.0) == 0
    assert clock.minutes(130.0) == 60  # 30 s at 120x is an hour


def test_pause_freezes_and_resume_continues() -> None:
    clock = LiveClock(speed=60)
    clock.start(wall=0.0)
    clock.pause(wall=10.0)
    assert clock.paused and clock.minutes(500.0) == 10
    clock.resume(wall=500.0)
    assert clock.minutes(505.0) == 15


def test_changing_speed_keeps_the_time_reached() -> None:
    clock = LiveClock(speed=60)
    clock.start(wall=0.0)
    clock.set_speed(600, wall=10.0)
    assert clock.minutes(10.0) == 10
    assert clock.minutes(11.0) == 20


def test_jump_moves_the_clock_and_keeps_it_running() -> None:
    clock = LiveClock(speed=60)
    clock.start(wall=0.0)
    clock.jump_to(45, wall=5.0)
    assert clock.minutes(6.0) == 46


def test_in_the_live_pace_statements_cost_no_time(
        make_session: Callable[..., Session]) -> None:
    from engine_fixtures import tiny_exercise

    from raceday.engine.headless import open_session

    session = make_session()
    assert session.pace is Pace.TURNS
    live = open_session(tiny_exercise(), ("operator",), session.folder.parent / "live",
                        pace=Pace.LIVE)
    live.execute("operator", "SELECT 1")
    assert live.clock_face == "00:00"
    clock = LiveClock(speed=60)
    clock.start(wall=0.0)
    live.advance_to(int(clock.minutes(6.0)))  # the caller's tick
    assert live.clock_face == "00:06"
    assert any(isinstance(e, ev.Automation) and e.task == "write" for e in live.events)
    live.end()


def test_in_the_turns_pace_only_a_statement_that_ran_costs_time(
        make_session: Callable[..., Session]) -> None:
    """A typo, a refusal or a cancel did nothing: at recovery-under-load's five minutes a
    statement, each cost the team five minutes of the night for nothing."""
    session = make_session()
    session.start()
    before = session.minute
    session.execute("operator", "SELEC value FROM config")  # a typo
    session.execute("operator", "ATTACH DATABASE 'elsewhere.db' AS x")  # refused
    session.execute("operator", "SELECT * FROM no_such_table")  # an error
    assert session.minute == before
    session.execute("operator", "SELECT value FROM config; SELEC 1")  # one of them ran
    assert session.minute == before + session.exercise.clock.minutes_per_statement

