"""The session engine, played through its public methods on a tiny stale-write exercise."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

import pytest
from engine_fixtures import tiny_exercise

from raceday.engine.session import Session, SessionError
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

MakeSession = Callable[..., Session]
E = TypeVar("E", bound=ev.Event)


def kinds(session: Session, kind: type[E]) -> list[E]:
    return list(of_kind(session.events, kind))


def change_limit(session: Session) -> None:
    session.advance_to(2)
    session.execute("operator", "UPDATE config SET value = 20, version = 2 WHERE key = 'limit'")


def test_the_stale_write_happens_when_nobody_guards(make_session: MakeSession) -> None:
    session = make_session()
    change_limit(session)
    session.advance_to(session.end_minute)
    score = session.end()
    faults = kinds(session, ev.Fault)
    assert faults[0].sim_time == "00:05"
    assert (score.fault.occurred, score.fault.started_at, score.fault.invariant) == (
        True, "00:05", "lost")
    assert score.fault.outcome == "occurred"
    assert score.guards is not None and score.guards.happened == ("stale-write",)
    assert score.detection is not None and score.detection.points == 0
    automated = [e for e in kinds(session, ev.Statement) if e.automated]
    assert [e.statement for e in automated] == ["b-read", "b-write"]


def test_events_are_numbered_without_gaps_and_on_disk(make_session: MakeSession) -> None:
    session = make_session()
    change_limit(session)
    session.end()
    on_disk = read_events(session.folder).events
    assert on_disk == tuple(session.events)
    assert [e.seq for e in on_disk] == list(range(1, len(on_disk) + 1))
    assert isinstance(on_disk[-1], ev.ScoreEvent)
    assert all(e.sim_time and e.wall_time for e in on_disk)
    assert (session.folder / "world.db").exists()


def test_a_player_statement_costs_the_exercises_minutes(make_session: MakeSession) -> None:
    session = make_session()
    assert session.clock_face == "00:00"
    session.execute("operator", "SELECT * FROM config")
    assert session.clock_face == "00:01"
    session.execute("operator", "   ")  # nothing submitted: no time spent
    assert session.clock_face == "00:01"


def test_a_players_sql_error_is_play_not_a_crash(make_session: MakeSession) -> None:
    session = make_session()
    results = session.execute("operator", "SELEC nonsense")
    assert not results[0].ok
    event = next(e for e in kinds(session, ev.Statement) if not e.automated)
    assert event.ok is False and "syntax" in (event.error or "")


def test_the_kill_switch_skips_the_automation(make_session: MakeSession) -> None:
    session = make_session()
    change_limit(session)
    session.execute("operator", "UPDATE automation SET enabled = 0")
    session.advance_to(session.end_minute)
    score = session.end()
    skipped = [e for e in kinds(session, ev.Automation) if e.outcome == "skipped"]
    assert skipped and skipped[0].task == "write"
    assert not score.fault.occurred
    assert score.guards is not None and "never reached" in " ".join(score.guards.reasons)


def test_a_monitor_alerts_and_detects_the_fault(make_session: MakeSession) -> None:
    session = make_session()
    change_limit(session)
    session.save_monitor("operator", "went-back",
                         "SELECT key FROM config WHERE value = 10 AND version > 1")
    session.advance_to(session.end_minute)
    score = session.end()
    alert = kinds(session, ev.Alert)[0]
    assert alert.sim_time == "00:05" and alert.matched is True
    assert score.detection is not None and score.detection.latency_minutes == 0
    assert score.detection.points == 30


def test_a_broken_monitor_is_refused_at_once(make_session: MakeSession) -> None:
    session = make_session()
    event = session.save_monitor("operator", "bad", "SELECT nope FROM nowhere")
    assert isinstance(event, ev.Refused) and "nowhere" in event.error
    assert "bad" not in session.monitors


def test_declarations_are_judged_and_wrong_ones_cost(make_session: MakeSession) -> None:
    session = make_session()
    change_limit(session)
    session.advance_to(6)
    # a diagnosis needs a look that shows the fault (issue 27): the look costs the minute
    session.execute("operator", "SELECT key, value, version, updated_by FROM config")
    session.advance_to(7)
    session.declare("operator", "disk")
    session.declare("operator", "stale-write")
    score = session.end()
    detection = score.detection
    assert detection is not None
    assert detection.latency_minutes == 3  # 00:05 -> 00:08 (the wrong one cost a minute)
    assert any("wrong finding" in r for r in detection.reasons)
    assert detection.points == round(30 * (12 - 3) / 10) - 5


def test_an_unknown_finding_is_refused_with_the_known_ones(make_session: MakeSession) -> None:
    session = make_session()
    event = session.declare("operator", "aliens")
    assert isinstance(event, ev.Refused) and "stale-write" in event.error


def test_a_guard_prevents_the_race_and_detection_is_not_needed(make_session: MakeSession) -> None:
    session = make_session()
    session.execute("operator", """
        CREATE TRIGGER forward_only BEFORE UPDATE OF value ON config
        WHEN NEW.version <= OLD.version
        BEGIN SELECT RAISE(ABORT, 'stale write refused: version did not move forward'); END""")
    change_limit(session)
    session.advance_to(session.end_minute)
    score = session.end()
    assert not score.fault.occurred
    assert score.guards is not None and score.guards.prevented == ("stale-write",)
    refused = [e for e in kinds(session, ev.Statement) if e.automated and not e.ok]
    assert "stale write refused" in (refused[0].error or "")
    assert score.detection is not None and score.detection.points == 30
    assert score.recovery is not None and score.recovery.points == 30
    retries = [e for e in kinds(session, ev.Automation) if e.outcome == "failed"]
    assert retries[0].next == "retry at 00:10"
    assert len(retries) == 5  # 00:05, then every 5 min until 00:25


def test_a_guard_that_blocks_the_good_path_is_penalised(make_session: MakeSession) -> None:
    session = make_session()
    session.execute("operator", "CREATE TRIGGER frozen BEFORE UPDATE ON config "
                                "BEGIN SELECT RAISE(ABORT, 'config is frozen'); END")
    session.advance_to(session.end_minute)
    score = session.end()
    guards = score.guards
    assert guards is not None and guards.good_path[0].ok is False
    assert any("blocks the good path" in r and "config is frozen" in r for r in guards.reasons)
    assert guards.points == 0  # a guard that stops a good write earns nothing


def test_editing_the_automation_makes_its_write_conditional(make_session: MakeSession) -> None:
    session = make_session()
    session.edit_statement("operator", "b-write",
                           "UPDATE config SET value = :seen WHERE key = 'limit' AND version = 1")
    change_limit(session)
    session.advance_to(session.end_minute)
    score = session.end()
    zero = [e for e in kinds(session, ev.Automation) if e.outcome == "zero_rows"]
    assert zero and zero[0].next == "retry at 00:10"
    assert not score.fault.occurred
    assert kinds(session, ev.Edit)[0].before.startswith("UPDATE config SET value = :seen")


def test_only_schema_roles_may_edit_the_automation(make_session: MakeSession) -> None:
    session = make_session(players=("operator", "reader"))
    event = session.edit_statement("reader", "b-write", "SELECT 1")
    assert isinstance(event, ev.Refused) and "may not edit" in event.error


def test_automated_roles_cannot_be_played_without_holding_them(make_session: MakeSession) -> None:
    session = make_session()
    with pytest.raises(SessionError, match="played by the automation"):
        session.execute("writer-b", "SELECT 1")


def test_a_held_automation_role_gets_its_tasks_instead(make_session: MakeSession) -> None:
    session = make_session(players=("operator", "writer-b"))
    session.advance_to(6)
    due = kinds(session, ev.TaskDue)
    assert [e.task for e in due] == ["read", "write"]
    assert not [e for e in kinds(session, ev.Statement) if e.automated]
    score = session.end()
    assert score.guards is not None and score.guards.prevented == ("stale-write",)


def test_a_repair_undone_by_the_automation_is_a_relapse(make_session: MakeSession) -> None:
    from dataclasses import replace

    base = tiny_exercise()
    read, write = base.tasks
    repeating = replace(write, every=5, until=25)  # writer B keeps writing its stale value
    session = make_session(tiny_exercise(tasks=(read, repeating)))
    change_limit(session)
    session.advance_to(6)
    session.execute("operator", "UPDATE config SET value = 20, version = 3")  # hand repair
    session.advance_to(session.end_minute)
    score = session.end()
    faults = kinds(session, ev.Fault)
    assert [(e.sim_time, e.relapse) for e in faults] == [("00:05", False), ("00:10", True)]
    recovery = score.recovery
    assert recovery is not None and recovery.first_restored_at == "00:06"
    assert recovery.minutes_to_restore is None  # no repair held
    assert recovery.restored is False
    assert recovery.relapses == ("00:10",) and recovery.outage_minutes is not None
    assert any("came back at 00:10" in r for r in recovery.reasons)
    assert recovery.points == 0


def test_hints_cost_points(make_session: MakeSession) -> None:
    session = make_session()
    event = session.reveal_hint()
    assert isinstance(event, ev.Hint) and event.text == "Look at the version"
    session.advance_to(session.end_minute)
    score = session.end()
    assert score.hints.cost == 3 and any(r.startswith("hints -3") for r in score.reasons)


def test_the_same_actions_give_the_same_transcript(make_session: MakeSession) -> None:
    def steady(e: ev.Event) -> ev.Event:
        """The event without what varies from run to run (the wall clock, timings)."""
        if isinstance(e, ev.Statement):
            e = dataclasses.replace(e, elapsed_ms=0.0)
        return dataclasses.replace(e, wall_time="")

    def play() -> list[ev.Event]:
        session = make_session()
        change_limit(session)
        session.save_monitor("operator", "m", "SELECT key FROM config WHERE value = 10")
        session.advance_to(session.end_minute)
        session.end()
        return [steady(e) for e in session.events]

    assert play() == play()


def test_unknown_player_roles_are_refused(make_session: MakeSession) -> None:
    with pytest.raises(SessionError, match="unknown role 'chef'"):
        make_session(players=("chef",))


def test_timeline_end_is_announced_once(make_session: MakeSession) -> None:
    session = make_session(tiny_exercise())
    session.advance_to(10_000)
    session.advance_to(10_000)
    assert len(kinds(session, ev.TimelineEnd)) == 1
    assert session.clock_face == "00:30"


def test_ending_before_the_race_lets_the_night_play_itself_out(make_session: MakeSession) -> None:
    session = make_session()
    score = session.end()
    left = kinds(session, ev.TeamLeft)
    assert left and left[0].sim_time == "00:00"
    assert all(e.after_team_left for e in kinds(session, ev.Automation))
    assert session.timeline_over and score.detection is not None and score.detection.latency_minutes is None


def test_a_check_broken_by_the_teams_schema_is_reported_and_play_goes_on(
        make_session: MakeSession) -> None:
    session = make_session()
    session.execute("operator", "ALTER TABLE config RENAME COLUMN value TO amount")
    session.advance_to(session.end_minute)
    score = session.end()
    failed = kinds(session, ev.CheckFailed)
    assert failed and "value" in failed[0].error
    assert len({e.sql for e in failed}) == len(failed)  # each broken check reported once
    assert score.total >= 0


def test_a_monitor_that_writes_is_refused_and_changes_nothing(make_session: MakeSession) -> None:
    session = make_session()
    event = session.save_monitor("operator", "sneaky",
                                 "UPDATE config SET value = 1 RETURNING key")
    assert isinstance(event, ev.Refused) and "only read" in event.error
    rows = session.execute("operator", "SELECT value FROM config")[0].rows
    assert rows == ((10,),)


def test_an_edit_that_does_not_parse_is_refused_and_the_old_sql_stays(
        make_session: MakeSession) -> None:
    session = make_session()
    before = session.statement_sql["b-write"]
    event = session.edit_statement("operator", "b-write", "UPDAT config SET value = :seen")
    assert isinstance(event, ev.Refused) and "does not parse" in event.error
    assert session.statement_sql["b-write"] == before
