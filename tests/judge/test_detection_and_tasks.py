"""The judge on its own: facts in, verdicts out, no session, no database.

An alert that fires on the normal night too is noise; a diagnosis counts only on a look that
shows something a night without the fault would not; a guard task counts only when the
final replay bears it out."""

from __future__ import annotations

from pathlib import Path

from raceday.engine.load import load_exercise
from raceday.judge.detection import judge_diagnoses, sort_alerts
from raceday.judge.facts import Facts, Look
from raceday.judge.tasks import unproven_tasks
from raceday.transcript.events import BlockedWrite, MonitorCheck, ReplayResult, StepReplay

LOST_UPDATE = Path(__file__).resolve().parents[2] / "exercises" / "lost-update-basics"


def hhmm(minute: int) -> str:
    return f"{23 + minute // 60:02d}:{minute % 60:02d}"


def look(n: int, minute: int, digest: str, monitor: str | None = None) -> Look:
    return Look(n=n, since=0, minute=minute, role="responder", sql=f"SELECT {n}",
                tables=frozenset({"endpoint"}), digest=digest, monitor=monitor)


def test_an_alert_the_normal_night_also_raises_is_noise_with_its_reason() -> None:
    result = ReplayResult(monitor_checks=(
        MonitorCheck(name="empty", at="23:49", rows=0),
        MonitorCheck(name="clock", at="23:49", rows=2),
        MonitorCheck(name="clock", at="23:50", rows=2),
        MonitorCheck(name="broken", at="23:51", error="no such table: plans"),
    ))
    kept, noisy = sort_alerts([(49, "empty"), (49, "clock"), (50, "clock"), (51, "broken"),
                               (52, "unchecked")], result, hhmm)
    assert kept == [(49, "empty"), (52, "unchecked")]
    assert noisy["clock"] == (49, "on the normal night, with no fault, it returned 2 rows at "
                                  "23:49 too")  # its first noisy minute, said once
    assert "no such table: plans" in noisy["broken"][1]


def test_a_diagnosis_counts_on_a_look_that_differs_from_the_normal_night() -> None:
    result = ReplayResult(monitor_checks=(
        MonitorCheck(name="look 1", at="23:49", digest="same"),
        MonitorCheck(name="look 2", at="23:55", digest="healthy"),
    ))
    blind_look = look(1, 49, "same")  # showed what a healthy night shows too
    real_look = look(2, 55, "empty")  # showed the empty answer
    declared = [(49, "dns-empty", (blind_look,)), (55, "dns-empty", (blind_look, real_look))]
    confirmed, blind = judge_diagnoses(declared, [(49, "dns-empty")], set(), result, hhmm)
    assert confirmed == [(55, "dns-empty")]  # the repeat on a real look counts in its place
    assert blind == [(49, "dns-empty", "SELECT 1")]


def test_a_look_through_a_noisy_monitor_shows_nothing() -> None:
    result = ReplayResult(monitor_checks=(MonitorCheck(name="look 1", at="23:49",
                                                       digest="other"),))
    noisy = look(1, 49, "empty", monitor="flapper")
    confirmed, blind = judge_diagnoses([(49, "dns-empty", (noisy,))], [(49, "dns-empty")],
                                       {"flapper"}, result, hhmm)
    assert confirmed == [] and blind == [(49, "dns-empty", "SELECT 1")]


def test_a_guard_task_counts_only_when_the_replay_bears_it_out() -> None:
    exercise = load_exercise(LOST_UPDATE, check_sql=False)
    task = next(t for t in exercise.tasks if t.proves == ("duplicate-retry",))
    prevented = StepReplay(id="duplicate-retry", title="", status="prevented")
    happened = StepReplay(id="duplicate-retry", title="", status="happened")
    facts = Facts(tasks_done={task.id: 17}, replay=ReplayResult(steps=(prevented,)))
    assert unproven_tasks(exercise, facts) == {}
    facts.replay = ReplayResult(steps=(happened,))
    assert unproven_tasks(exercise, facts) == {
        task.id: "the replay shows duplicate-retry not prevented"}
    facts.replay = ReplayResult(steps=(prevented,), blocked_good_writes=(
        BlockedWrite(task="writer-a-failover", at="09:02", outcome="refused"),))
    assert "refuse good writes" in unproven_tasks(exercise, facts)[task.id]
    facts.replay = None
    assert "could not be replayed" in unproven_tasks(exercise, facts)[task.id]
