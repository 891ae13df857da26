"""A flood of actions in one simulated minute is refused (one line in the transcript for
it), and the session goes on when the clock moves."""

from __future__ import annotations

from collections.abc import Callable

from raceday.engine.session import MAX_ACTIONS_PER_MINUTE, MAX_MONITORS, Session
from raceday.store.base import MAX_STATEMENTS
from raceday.transcript import events as ev
from raceday.transcript.log import read_events


def test_a_flood_of_notes_is_refused_once_a_minute_and_play_goes_on(
        make_session: Callable[..., Session]) -> None:
    session = make_session()
    replies = [session.note(f"note {i}", "operator") for i in range(MAX_ACTIONS_PER_MINUTE + 50)]
    refused = [r for r in replies if isinstance(r, ev.Refused)]
    assert len(refused) == 50
    assert "actions in one simulated minute" in refused[0].error
    assert "\n" not in refused[0].error
    recorded = [e for e in session.events if isinstance(e, ev.Refused)]
    assert len(recorded) == 1  # the rest of the flood leaves no line
    results = session.execute("operator", "SELECT 1")
    assert results[0].error_kind == "refused"
    session.advance_to(session.minute + 1)
    assert isinstance(session.note("after the flood", "operator"), ev.Note)
    assert session.execute("operator", "SELECT 1")[0].ok
    session.end()
    back = read_events(session.folder).events
    assert [e.seq for e in back] == list(range(1, len(back) + 1))
    assert isinstance(back[-1], ev.ScoreEvent)


def test_monitors_are_capped(make_session: Callable[..., Session]) -> None:
    session = make_session()
    for i in range(MAX_MONITORS):
        saved = session.save_monitor("operator", f"m{i}", "SELECT 1 WHERE 0")
        assert isinstance(saved, ev.MonitorSaved)
    extra = session.save_monitor("operator", "one-too-many", "SELECT 1 WHERE 0")
    assert isinstance(extra, ev.Refused) and "remove one first" in extra.error
    again = session.save_monitor("operator", "m0", "SELECT 2 WHERE 0")  # replacing is fine
    assert isinstance(again, ev.MonitorSaved)


def test_a_submission_past_the_statement_cap_runs_nothing(
        make_session: Callable[..., Session]) -> None:
    session = make_session()
    [result] = session.execute("operator", "SELECT 1;" * (MAX_STATEMENTS + 1))
    assert not result.ok and f"the limit is {MAX_STATEMENTS}" in (result.error or "")


def test_a_seat_flooding_commands_adds_no_line_per_command(
        make_session: Callable[..., Session]) -> None:
    session = make_session()
    for i in range(MAX_ACTIONS_PER_MINUTE):
        session.note(f"note {i}", "operator")
    before = len(session.events)
    for n in range(30):
        echoed = session.record(ev.SeatCommand(seat="s", role="operator", player="p",
                                               action="sql", command=n))
        assert echoed.seq == 0  # not recorded
        session.record(ev.CommandRefused(seat="s", action="sql", error="forged", command=n))
    added = session.events[before:]
    assert len(added) == 1 and isinstance(added[0], ev.Refused)
