"""What players are told follows the world: an inject tied to a fault (`on_fault`) arrives
when that fault first begins (plus its `after`), never when it never does, and only while
the fault is still there; waiting for the next inject stops at one a fault brings."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from engine_fixtures import tiny_exercise

from raceday.engine.headless import play_step
from raceday.engine.resume import resume_session
from raceday.engine.script import Step, When
from raceday.engine.session import Session
from raceday.exercise.model import Exercise, Inject, InjectKind
from raceday.transcript import events as ev
from raceday.transcript.log import EVENTS_FILE, read_events

MakeSession = Callable[..., Session]


def fault_exercise() -> Exercise:
    """The tiny stale write, told by an alarm at once and a complaint three minutes on."""
    return tiny_exercise(injects=(
        Inject("opening", 0, "Quiet morning"),
        Inject("alarm", None, "The limit went back", kind=InjectKind.ALARM, on_fault="lost"),
        Inject("complaint", None, "Users say the limit is wrong", on_fault="lost", after=3),
    ))


def heard(session: Session) -> list[tuple[str, str]]:
    return [(e.id, e.sim_time) for e in session.events if isinstance(e, ev.Inject)]


def change_limit(session: Session) -> None:
    """The operator's change at 00:02 that writer B's stale write at 00:05 undoes."""
    session.advance_to(2)
    session.execute("operator", "UPDATE config SET value = 20, version = 2 WHERE key = 'limit'")


def test_a_night_without_the_fault_hears_none_of_its_injects(make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    session.advance_to(session.end_minute)
    assert not [e for e in session.events if isinstance(e, ev.Fault)]
    assert heard(session) == [("opening", "00:00")]


def test_the_faults_injects_follow_it_when_the_automation_causes_it(
        make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    change_limit(session)
    session.advance_to(session.end_minute)
    assert heard(session) == [("opening", "00:00"), ("alarm", "00:05"), ("complaint", "00:08")]
    fault = next(e for e in session.events if isinstance(e, ev.Fault))
    alarm = next(e for e in session.events if isinstance(e, ev.Inject) and e.id == "alarm")
    assert alarm.seq == fault.seq + 1  # told right after the fault, in the same minute
    assert alarm.inject_kind == "alarm"


def test_a_fault_the_team_causes_early_brings_its_injects_early(
        make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    session.advance_to(1)
    session.execute("operator", "UPDATE config SET version = 2 WHERE key = 'limit'")
    session.advance_to(session.end_minute)
    assert heard(session)[:3] == [("opening", "00:00"), ("alarm", "00:01"),
                                  ("complaint", "00:04")]


def test_an_inject_whose_fault_has_cleared_by_its_time_is_not_sent(
        make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    change_limit(session)
    session.advance_to(5)
    session.execute("operator", "UPDATE automation SET enabled = 0")
    session.execute("operator", "UPDATE config SET value = 20, version = 3 WHERE key = 'limit'")
    session.advance_to(session.end_minute)
    assert any(isinstance(e, ev.InvariantClear) for e in session.events)
    assert heard(session) == [("opening", "00:00"), ("alarm", "00:05")]


def test_an_inject_not_sent_waits_for_a_spell_of_the_fault_that_lasts(
        make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    change_limit(session)
    session.advance_to(5)
    session.execute("operator", "UPDATE automation SET enabled = 0")
    session.execute("operator", "UPDATE config SET value = 20, version = 3 WHERE key = 'limit'")
    session.advance_to(12)
    session.execute("operator", "UPDATE config SET value = 10 WHERE key = 'limit'")  # 00:12
    session.advance_to(session.end_minute)
    faults = [e.sim_time for e in session.events if isinstance(e, ev.Fault)]
    assert faults == ["00:05", "00:12"]
    assert heard(session) == [("opening", "00:00"), ("alarm", "00:05"), ("complaint", "00:15")]


def test_a_relapse_brings_no_second_round(make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    change_limit(session)
    session.advance_to(9)
    session.execute("operator", "UPDATE config SET value = 20, version = 3 WHERE key = 'limit'")
    session.execute("operator", "UPDATE config SET value = 10 WHERE key = 'limit'")
    session.advance_to(session.end_minute)
    assert len([e for e in session.events if isinstance(e, ev.Fault)]) == 2
    assert [i for i, _ in heard(session)] == ["opening", "alarm", "complaint"]


def test_waiting_for_the_next_inject_stops_at_one_a_fault_brings(
        make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    change_limit(session)
    assert session.next_inject_minute() is None  # nothing timed is left: the fault has no time
    session.wait(None)
    assert session.clock_face == "00:05"  # the alarm, not the end of the night
    wait = next(e for e in session.events if isinstance(e, ev.Wait))
    assert wait.next_inject and wait.until == "00:30"
    assert session.next_inject_minute() == 8  # the complaint is due now the fault began
    session.wait(None)
    assert session.clock_face == "00:08"


def test_a_session_cut_after_such_a_wait_resumes_to_the_same_transcript(
        make_session: MakeSession, tmp_path: Path) -> None:
    exercise = fault_exercise()
    session = make_session(exercise)
    change_limit(session)
    session.wait(None)
    session.execute("operator", "SELECT * FROM config")
    cut = len(session.events)
    session.end()
    folder = tmp_path / "crash" / "session"
    folder.mkdir(parents=True)
    lines = (session.folder / EVENTS_FILE).read_bytes().splitlines(keepends=True)
    (folder / EVENTS_FILE).write_bytes(b"".join(lines[:cut]))
    shutil.copy(session.folder / "world.db", folder / "world.db")
    resumed = resume_session(folder, exercise).session
    assert resumed.clock_face == "00:06"  # the wait stopped at 00:05, as it did; then a query
    assert heard(resumed) == [("opening", "00:00"), ("alarm", "00:05")]
    resumed.end()
    again = [e for e in read_events(folder).events if not isinstance(e, ev.SessionResumed)]
    assert [(e.kind, e.sim_time) for e in again][:cut] == \
        [(e.kind, e.sim_time) for e in session.events][:cut]


def test_a_script_step_at_next_stops_at_a_faults_inject(make_session: MakeSession) -> None:
    session = make_session(fault_exercise())
    change_limit(session)
    play_step(session, Step(1, "sql", "operator", When("next"), sql="SELECT 1"), "play.yaml:1")
    mine = [e for e in session.events if isinstance(e, ev.Statement) and not e.automated]
    assert mine[-1].sim_time == "00:05"  # at the alarm, not at the end of the night
    assert not any(isinstance(e, ev.Wait) for e in session.events)


def flapping_exercise() -> Exercise:
    """The tiny stale write, with a page once the fault has held 4 minutes of the last 10,
    however many spells, beside the complaint that needs 3 in one spell."""
    return tiny_exercise(injects=(
        Inject("complaint", None, "Users say the limit is wrong", on_fault="lost", after=3),
        Inject("page", None, "The limit keeps going back", on_fault="lost", after=4, within=10),
    ))


def flap(session: Session) -> None:
    """The fault from 00:05, put right by hand at 00:06, back at 00:09 (the stale value)."""
    change_limit(session)
    session.advance_to(6)
    session.execute("operator", "UPDATE automation SET enabled = 0")
    session.execute("operator", "UPDATE config SET value = 20, version = 3 WHERE key = 'limit'")
    session.advance_to(9)
    session.execute("operator", "UPDATE config SET value = 10 WHERE key = 'limit'")


def spells(session: Session) -> list[str]:
    return [f"{e.kind} {e.sim_time}" for e in session.events
            if isinstance(e, ev.Fault | ev.InvariantClear)]


def test_a_window_counts_every_spell_of_a_flapping_fault(make_session: MakeSession) -> None:
    session = make_session(flapping_exercise())
    flap(session)
    session.advance_to(session.end_minute)
    assert spells(session) == ["fault 00:05", "invariant_clear 00:07", "fault 00:09"]
    # 2 minutes in the first spell, 2 more in the second: the page at 00:11; the complaint
    # waits for 3 minutes of one spell (00:12)
    assert heard(session) == [("page", "00:11"), ("complaint", "00:12")]


def test_a_window_forgets_spells_older_than_it(make_session: MakeSession) -> None:
    exercise = flapping_exercise()
    short = replace(exercise, injects=(replace(exercise.injects[1], within=5),))
    session = make_session(short)
    flap(session)
    session.advance_to(session.end_minute)
    # at 00:11 the last 5 minutes (00:06-00:11) hold 3 of them (00:06 and 00:09-00:11); the
    # first spell has left the window by 00:12, when the second has held 3: 00:13 (4 of 5)
    assert heard(session) == [("page", "00:13")]


def test_a_window_brings_nothing_while_the_fault_is_away(make_session: MakeSession) -> None:
    session = make_session(flapping_exercise())
    change_limit(session)
    session.advance_to(6)
    session.execute("operator", "UPDATE automation SET enabled = 0")
    session.execute("operator", "UPDATE config SET value = 20, version = 3 WHERE key = 'limit'")
    session.advance_to(session.end_minute)
    assert heard(session) == []
