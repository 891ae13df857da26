"""The flagship exercise, played end to end by its five reference scripts.

Each script is run headless, the way `raceday run ... --json` runs it, and its outcome is
asserted: when the fault began, how fast it was surfaced, which race steps were prevented,
whether the world was restored and why the recovery scored what it did.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from reference_plays import ReferencePlays

from raceday.cli import main
from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
SCRIPTS = EXERCISE / "scripts"
REGIONAL = "dynamodb.us-east-1.amazonaws.com"
STEPS = ["stale-apply", "active-plan-delete", "empty-answer", "wedged-automation"]
SOURCES = {"aws-summary", "dat453", "health-dashboard", "secondary", "exercise-assumption"}
Events = tuple[ev.Event, ...]
E = TypeVar("E", bound=ev.Event)


def play(name: str, transcripts: Path) -> tuple[dict[str, Any], Events]:
    """Play one reference script; return its JSON result and its transcript's events."""
    exercise = load_exercise(EXERCISE)
    script = load_script(SCRIPTS / f"{name}.yaml", exercise)
    session, result = run_script(exercise, script, transcripts)
    return result, read_events(Path(result["session"])).events


Played = Callable[[str], tuple[dict[str, Any], Events]]


@pytest.fixture
def played(reference_play: ReferencePlays) -> Played:
    """A reference script's play, played once for the whole run: for tests that only read it."""

    def get(name: str) -> tuple[dict[str, Any], Events]:
        done = reference_play(EXERCISE.name, SCRIPTS / f"{name}.yaml")
        return done.result, read_events(done.folder).events

    return get


def kinds(events: Events, kind: type[E]) -> list[E]:
    return list(of_kind(events, kind))


def steady(events: Events) -> list[ev.Event]:
    """The events without what differs from run to run by nature (wall clock, timings)."""
    out: list[ev.Event] = []
    for e in events:
        if isinstance(e, ev.Statement):
            e = dataclasses.replace(e, elapsed_ms=0.0)
        out.append(dataclasses.replace(e, wall_time=""))
    return out


def reasons(result: dict[str, Any], section: str) -> str:
    return "\n".join(result[section]["reasons"])


# -- the exercise itself ---------------------------------------------------------------------


def test_the_exercise_loads_and_every_inject_has_a_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", str(EXERCISE)]) == 0
    assert "ok (dynamodb-dns-race" in capsys.readouterr().out
    exercise = load_exercise(EXERCISE)
    assert {i.source for i in exercise.injects} <= SOURCES
    assert [s.id for s in exercise.scoring.guards.steps] == STEPS  # type: ignore[union-attr]
    assert exercise.default_roles == ("responder",)


def test_the_injects_arrive_at_the_nights_times(played: Played) -> None:
    _, events = played("as-it-happened")
    seen = {e.id: (e.sim_time, e.source) for e in kinds(events, ev.Inject)}
    assert seen["other-teams-2351"] == ("23:51", "secondary")
    for at in ("00:11", "00:51", "02:01", "02:22"):
        assert seen[f"health-dashboard-{at.replace(':', '')}"] == (at, "health-dashboard")
    assert seen["reveal-cause-identified"] == ("00:38", "aws-summary")
    assert seen["reveal-mitigations"][0] == "01:15"
    assert seen["reveal-dns-restored"] == ("02:25", "aws-summary")
    assert seen["reveal-caches"][0] == "02:40"
    alarms = [e for e in kinds(events, ev.Inject) if e.inject_kind == "alarm"]
    assert len(alarms) >= 6  # the one that points at the cause is one of many


# -- what players are told follows the world --------------------------------------------------

# Each alarm and message that reports the empty answer, with its time as that night (the
# fault began at 23:48). Enactor A's lock retries (23:40) come before any fault: timed.
FAULT_INJECTS = {
    "alarm-redshift": "23:48", "alarm-dwfm": "23:48", "alarm-ddb-errors": "23:48",
    "alarm-flood": "23:49", "alarm-traffic": "23:49", "alarm-tls": "23:50",
    "alarm-dns-canary": "23:50", "alarm-storage": "23:50", "other-teams-2351": "23:51",
    "other-teams-0020": "00:20",
}


def test_the_alarms_of_the_empty_answer_follow_that_fault() -> None:
    exercise = load_exercise(EXERCISE)
    following = {i.id for i in exercise.injects if i.on_fault}
    assert following == set(FAULT_INJECTS)
    assert all(i.on_fault == "empty-answer" for i in exercise.injects if i.on_fault)
    timed = {i.id: i for i in exercise.injects if i.at is not None}
    assert "enactor-a-lock-retries" in timed
    # reveals and the Health Dashboard's posts are history, told whatever the team does
    history = [i for i in exercise.injects if i.kind.value in ("reveal", "status")]
    assert history and all(i.at is not None for i in history)
    assert all(i.title.startswith(("That night", "Later")) for i in history)


def test_as_it_happened_the_alarms_arrive_at_that_nights_times(played: Played) -> None:
    _, events = played("as-it-happened")
    seen = {e.id: e.sim_time for e in kinds(events, ev.Inject)}
    assert {i: seen.get(i) for i in FAULT_INJECTS} == FAULT_INJECTS
    fault = kinds(events, ev.Fault)[0]
    first = min(e.seq for e in kinds(events, ev.Inject) if e.id in FAULT_INJECTS)
    assert fault.sim_time == "23:48" and first == fault.seq + 1  # told right after it began
    assert seen["enactor-a-lock-retries"] == "23:40"


def test_a_night_without_the_fault_hears_none_of_its_alarms(played: Played) -> None:
    result, events = played("guarded")
    assert result["fault"]["occurred"] is False
    seen = {e.id for e in kinds(events, ev.Inject)}
    assert not seen & set(FAULT_INJECTS)
    assert not [e for e in kinds(events, ev.Inject) if "dns-canary" in e.title]
    # what does not report the fault is still told: the lock retries, the night's history
    assert {"enactor-a-lock-retries", "health-dashboard-0011", "reveal-dns-restored"} <= seen


def test_a_fault_the_team_causes_early_brings_its_alarms_early(tmp_path: Path) -> None:
    exercise = load_exercise(EXERCISE)
    path = Path(__file__).parent / "alarms" / "empty-answer-at-2321.yaml"
    _, result = run_script(exercise, load_script(path, exercise), tmp_path)
    events = read_events(Path(result["session"])).events
    fault = kinds(events, ev.Fault)[0]
    assert (fault.sim_time, fault.invariant) == ("23:21", "empty-answer")
    seen = {e.id: e.sim_time for e in kinds(events, ev.Inject)}
    moved = {i: seen.get(i) for i in FAULT_INJECTS}
    assert moved == {
        "alarm-redshift": "23:21", "alarm-dwfm": "23:21", "alarm-ddb-errors": "23:21",
        "alarm-flood": "23:22", "alarm-traffic": "23:22", "alarm-tls": "23:23",
        "alarm-dns-canary": "23:23", "alarm-storage": "23:23", "other-teams-2351": "23:24",
        "other-teams-0020": "23:53",
    }
    assert len([e for e in kinds(events, ev.Inject) if e.id in FAULT_INJECTS]) == 10  # once


# -- the race as the automation plays it -----------------------------------------------------


def test_untouched_the_race_runs_as_it_did_that_night(played: Played) -> None:
    result, events = played("as-it-happened")
    steps = {e.step: e.sim_time for e in kinds(events, ev.RaceStep)}
    assert steps == {"stale-apply": "23:48", "active-plan-delete": "23:48",
                     "empty-answer": "23:48", "wedged-automation": "23:50"}
    fault = kinds(events, ev.Fault)[0]
    assert fault.sim_time == "23:48"
    assert fault.rows == ((REGIONAL,),)  # only the regional endpoint, not its siblings
    # In the minute of the race: B applies the newest plan, A its stale one, B cleans up.
    minute = [(e.statement, e.ok, e.rowcount)
              for e in kinds(events, ev.Statement) if e.sim_time == "23:48"]
    assert minute == [("enactor-b-pick", True, None), ("enactor-b-apply", True, 4),
                      ("enactor-a-apply", True, 1), ("enactor-b-cleanup", True, 1)]
    # Afterwards every apply fails on the rollback pointer until the automation is stopped.
    applies = [e for e in kinds(events, ev.Statement)
               if e.statement in {"enactor-b-apply", "enactor-c-apply"}
               and "23:50" <= e.sim_time <= "23:59"]
    assert applies and all(not e.ok and "FOREIGN KEY" in (e.error or "") for e in applies)
    retries = [e for e in kinds(events, ev.Statement) if e.task == "enactor-a-retry"]
    assert [e.sim_time for e in retries] == ["00:12", "00:42", "01:12"]
    assert all("FOREIGN KEY" in (e.error or "") for e in retries)


# -- the five reference plays -----------------------------------------------------------------


def test_as_it_happened(played: Played) -> None:
    result, events = played("as-it-happened")
    assert result["fault"]["occurred"] is True
    assert result["fault"]["started_at"] == "23:48"
    assert result["detection"]["latency_minutes"] == 50
    assert 8 <= result["detection"]["points"] <= 12  # the event's 50 minutes: about a third
    assert result["guards"]["prevented"] == []
    assert result["recovery"]["restored"] is True
    assert result["recovery"]["minutes_to_restore"] == 157  # 02:25, as that night
    assert result["recovery"]["outage_minutes"] == 157
    # a third of the outage curve (5 of 15), not stopped first (AWS stopped it at 05:38),
    # and the repair held (7)
    assert result["recovery"]["points"] == 12
    assert "'automation-stopped' never happened" in reasons(result, "recovery")
    assert not [e for e in of_kind(events, ev.Milestone) if e.id == "automation-stopped"]
    assert result["total"] == result["detection"]["points"] + result["recovery"]["points"]


def test_textbook(played: Played) -> None:
    result, events = played("textbook")
    assert result["fault"]["started_at"] == "23:48"
    assert result["detection"]["latency_minutes"] <= 5
    assert result["detection"]["points"] == 30
    assert "monitor 'empty-endpoints' alerted" in reasons(result, "detection")
    alert = kinds(events, ev.Alert)[0]
    assert alert.sim_time == "23:48" and alert.matched is True
    assert result["recovery"]["restored"] is True
    assert result["recovery"]["points"] == 30
    assert result["recovery"]["minutes_to_restore"] <= 10  # restored by 23:58, well before 01:00
    assert "Enactor automation was stopped before the hand repair: reached at 23:49" in reasons(
        result, "recovery")
    # The guards it added after the race are judged by the replay at the end: they hold.
    steps = {s["id"]: s for s in result["guards"]["steps"]}
    for step in ("stale-apply", "active-plan-delete", "empty-answer"):
        assert steps[step]["live"] == "happened" and steps[step]["status"] == "prevented"
    assert result["guards"]["points"] == 40
    assert all(path["ok"] for path in result["guards"]["good_path"])  # its late guards cost nothing


def test_guarded(played: Played) -> None:
    result, events = played("guarded")
    assert result["fault"]["occurred"] is False
    assert result["detection"]["latency_minutes"] is None
    assert sorted(result["guards"]["prevented"]) == sorted(STEPS)
    assert result["guards"]["points"] == 40
    assert all(path["ok"] for path in result["guards"]["good_path"])
    assert "not needed" in reasons(result, "detection")
    assert "not needed" in reasons(result, "recovery")
    assert result["total"] == 100
    refused = [e for e in kinds(events, ev.Statement)
               if e.statement == "enactor-a-apply"]
    assert refused and all(e.error_kind == "constraint" for e in refused)
    assert not kinds(events, ev.Fault)


def test_enactor_a_refuses(played: Played) -> None:
    result, events = played("enactor-a-refuses")
    assert result["fault"]["occurred"] is False
    # A person's care is not a guard: the replay, with every role automated, races again.
    assert result["guards"]["prevented"] == []
    assert result["guards"]["happened"] == STEPS
    assert result["total"] == 0
    assert "players' hands, not a guard" in reasons(result, "detection")
    assert result["recovery"]["restored"] is True
    due = [e for e in kinds(events, ev.TaskDue) if e.role == "enactor-a"]
    assert [e.task for e in due][:1] == ["enactor-a-check"]
    assert any(e.task == "enactor-a-apply" and e.sim_time == "23:48" for e in due)
    # The automation never writes as enactor-a: the player holds the role.
    assert not [e for e in kinds(events, ev.Statement)
                if e.role == "enactor-a" and e.automated]
    refusal = [e for e in kinds(events, ev.Statement)
               if e.role == "enactor-a" and e.rowcount is not None]
    assert [e.rowcount for e in refusal] == [0]


def test_hasty_repair(played: Played) -> None:
    result, events = played("hasty-repair")
    assert result["fault"]["started_at"] == "23:48"
    assert result["detection"]["diagnosis_minutes"] == 50
    relapses = [e.sim_time for e in kinds(events, ev.Fault) if e.relapse]
    assert relapses == ["00:42"]  # Enactor A's late retry undoes the 00:39 repair
    undo = [e for e in kinds(events, ev.Statement)
            if e.task == "enactor-a-retry" and e.sim_time in relapses]
    assert undo and all(e.ok and e.rowcount == 1 for e in undo)
    assert result["recovery"]["restored"] is True  # the second repair, at 02:01, holds
    text = reasons(result, "recovery")
    assert "the fault came back at 00:42 after a repair" in text
    assert result["recovery"]["outage_minutes"] == 51 + 79
    as_documented, _ = played("as-it-happened")
    assert result["total"] < as_documented["total"]


# -- determinism and the command line --------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["as-it-happened", "textbook", "guarded", "enactor-a-refuses", "hasty-repair"]
)
def test_a_script_plays_the_same_twice(name: str, tmp_path: Path, played: Played) -> None:
    first, events_1 = played(name)  # the run's play of it, and one of this test's own
    second, events_2 = play(name, tmp_path / "two")
    second = json.loads(json.dumps(second))  # as `raceday run --json` printed the first

    assert steady(events_1) == steady(events_2)
    first.pop("session"), second.pop("session")
    assert first == second


def test_the_cli_prints_one_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(EXERCISE), "--script", str(SCRIPTS / "guarded.yaml"), "--json",
                 "--transcripts", str(tmp_path)])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["exercise"] == "dynamodb-dns-race"
    assert result["total"] == result["max"] == 100
    assert Path(result["session"]).parent == tmp_path
