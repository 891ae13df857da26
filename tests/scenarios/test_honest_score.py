"""An honest score (issue 10): every row of the issue's table, and the cheats found since,
played headless with the score range it must get and the reason it must give.

The plays live beside this file (`honest/`); the reference plays of the flagship keep their
order; two runs of a play are identical.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

ROOT = Path(__file__).resolve().parents[2]
PLAYS = Path(__file__).resolve().parent / "honest"
VARYING = {"wall_time", "elapsed_ms", "folder", "session"}


def play(path: Path, transcripts: Path) -> tuple[dict[str, Any], tuple[ev.Event, ...]]:
    exercise_id = "lost-update-basics" if "lost-update-basics" in path.read_text() else "dynamodb-dns-race"
    exercise = load_exercise(ROOT / "exercises" / exercise_id)
    _, result = run_script(exercise, load_script(path, exercise), transcripts)
    return result, read_events(Path(result["session"])).events


def reasons(result: dict[str, Any]) -> str:
    return "\n".join(result["reasons"])


# (play, lowest total, highest total, words the reasons must contain)
CHEATS = [
    ("drop-view", 0, 10, "view dns_answer is gone"),
    ("constant-view", 0, 10, "view dns_answer no longer gives what its definition says"),
    ("slow-view", 0, 10, "view dns_answer is too slow"),
    ("drop-endpoint", 0, 10, "table endpoint is gone"),
    ("drop-automation", 0, 10, "table automation is gone"),
    ("noop-enactor-a", 0, 10, "enactor-a-on-time"),
    ("ban-enactor-a", 0, 10, "enactor-a-on-time"),
    ("time-bomb-trigger", 0, 10, "enactor-a-on-time at 23:48"),
    ("hold-enactor-a-idle", 0, 10, "players' hands, not a guard"),
    ("hold-enactor-a-leave-early", 0, 10, "never surfaced"),
    ("unbound-parameter", 0, 10, "never surfaced"),
    ("declare-every-turn", 0, 10, "false alarm"),
    ("declare-early", 0, 10, "false alarm"),
    ("declare-everything", 0, 10, "wrong findings"),
    ("flapping-monitor", 0, 10, "noise, not detection"),
    ("lub-drop-config", 0, 10, "table config is gone"),
    ("lub-noop-save", 0, 10, "b-save-on-time"),
    ("never-plan-140", 0, 10, "in the variant night"),
    # its clock-free half (no plan in service deleted) is the article's least power and earns
    # what that trigger alone earns (85: tests/engine/test_replay_matrix.py, plan-in-use); the
    # clock-keyed half adds nothing (the stale plan still happens in the variant night)
    ("backwards-in-window", 0, 85, "in the variant night"),
    ("timed-monitor-plan", 0, 10, "not because of the fault"),
    ("timed-monitor-clock", 0, 10, "not because of the fault"),
    ("from-memory", 0, 10, "a diagnosis from memory is not a diagnosis"),
    ("lub-noop-everything", 0, 10, "refuse good writes of the normal night"),
    ("lub-spam-declare", 0, 10, "false alarm"),
    ("self-caused", 0, 10, "finding damage you caused is not detection"),
    ("fig-leaf-look", 0, 10, "a diagnosis needs a look that can show the fault"),
    ("noisy-monitor-look", 0, 10, "a diagnosis needs a look that can show the fault"),
]


@pytest.mark.parametrize(("name", "low", "high", "words"), CHEATS, ids=[c[0] for c in CHEATS])
def test_no_cheat_scores_more_than_what_it_honestly_did(name: str, low: int, high: int, words: str,
                                        tmp_path: Path) -> None:
    result, _ = play(PLAYS / f"{name}.yaml", tmp_path)
    assert low <= result["total"] <= high, reasons(result)
    assert words in reasons(result), reasons(result)


def test_no_op_edits_earn_no_task_points(tmp_path: Path) -> None:
    for name in ("lub-noop-save", "lub-noop-everything"):
        result, _ = play(PLAYS / f"{name}.yaml", tmp_path)
        assert result["tasks"]["points"] == 0, reasons(result)
        assert result["guards"]["points"] == 0, reasons(result)


def test_lost_update_basics_is_not_set_against_the_aws_night(tmp_path: Path) -> None:
    result, _ = play(ROOT / "exercises" / "lost-update-basics" / "scripts" / "solo-complete.yaml",
                     tmp_path)
    assert result["total"] == 100
    assert result["detection"]["event_minutes"] is None
    assert result["recovery"]["event_minutes"] is None
    assert "that night" not in reasons(result)


def test_rollbacks_let_through_by_their_times_are_refused_on_the_variant_night(
        tmp_path: Path) -> None:
    """Exempting the planned rollbacks by tonight's times refuses them on the variant night:
    a deduction for each, with its reason (issue 27), not the whole score."""
    result, _ = play(PLAYS / "rollback-exempt-by-time.yaml", tmp_path)
    assert "on the normal night of the variant night" in reasons(result)
    # the race's harms (30) less what the refused rollbacks cost; no practice-night guard
    assert result["guards"]["points"] == 30 - result["guards"]["collateral"] < 30


def test_a_guard_keyed_on_tonight_earns_nothing_in_the_shifted_race(tmp_path: Path) -> None:
    result, _ = play(PLAYS / "never-plan-140.yaml", tmp_path)
    steps = {s["id"]: s for s in result["guards"]["steps"]}
    assert steps["stale-apply"]["status"] == "happened"
    assert "tonight's race: prevented" in steps["stale-apply"]["detail"]
    assert "the variant night (the clock from" in steps["stale-apply"]["detail"]
    assert result["guards"]["points"] == 0


def test_a_monitor_keyed_on_the_schedule_is_noise(tmp_path: Path) -> None:
    result, events = play(PLAYS / "timed-monitor-plan.yaml", tmp_path)
    assert result["detection"]["alert_minutes"] is None
    assert result["detection"]["noise"] == ["after-149"]
    final = [e for e in of_kind(events, ev.Replay) if e.final][0]
    assert final.result is not None
    checks = final.result.monitor_checks
    assert checks and checks[0].name == "after-149" and checks[0].at == "23:49"
    assert not checks[0].caused_by_fault


def test_a_diagnosis_from_memory_counts_only_after_a_look(tmp_path: Path) -> None:
    _, events = play(PLAYS / "from-memory.yaml", tmp_path)
    declared = list(of_kind(events, ev.Declaration))
    assert [d.verdict for d in declared] == ["unseen"]


def test_a_guard_that_refuses_good_writes_pays_for_each(tmp_path: Path) -> None:
    """Refusing the normal night's two planned rollbacks is collateral: a deduction with its
    reason for each (issue 27), not the whole score."""
    result, events = play(PLAYS / "newest-only.yaml", tmp_path)
    blocked = result["guards"]["blocked_good_writes"]
    assert any(b["task"].startswith("planned-rollback") for b in blocked)
    assert result["guards"]["collateral"] == 5 * len(blocked)
    assert result["guards"]["points"] == 30 - 5 * len(blocked)  # the race's 30, less each
    assert "collateral: a good write of the normal night was refused: planned-rollback" \
        in reasons(result)
    # the replay's own figure agrees with the score (no line contradicts another)
    final = [e for e in of_kind(events, ev.Replay) if e.final][-1]
    assert final.guards is not None and final.guards.points == result["guards"]["points"]


def test_an_edit_with_an_unbound_parameter_is_refused_at_once(tmp_path: Path) -> None:
    _, events = play(PLAYS / "unbound-parameter.yaml", tmp_path)
    refused = [e for e in of_kind(events, ev.Refused) if e.action == "edit"]
    assert refused and ":token" in refused[0].error
    assert ":plan" in refused[0].error and ":version" in refused[0].error
    assert not list(of_kind(events, ev.Edit))


def test_the_version_equality_check_can_be_written(tmp_path: Path) -> None:
    result, _ = play(PLAYS / "version-column.yaml", tmp_path)
    # the race's harms; the practice nights need more (a version check alone carries on
    # after a write that lost)
    assert result["guards"]["points"] == 25
    assert result["guards"]["blocked_good_writes"] == []


def test_the_night_plays_itself_out_after_the_team_leaves(tmp_path: Path) -> None:
    result, events = play(PLAYS / "repair-end-early.yaml", tmp_path)
    left = list(of_kind(events, ev.TeamLeft))
    assert left and left[0].sim_time == "23:51"
    retry = [e for e in of_kind(events, ev.Statement) if e.task == "enactor-a-retry"]
    assert retry[0].sim_time == "00:12" and retry[0].after_team_left is True
    assert result["recovery"]["relapses"] == ["00:12"]
    assert result["recovery"]["points"] == 0  # undone, and down for the rest of the night
    held, _ = play(PLAYS / "stop-repair-end-early.yaml", tmp_path)
    assert held["recovery"]["points"] == 30 and held["recovery"]["relapses"] == []


def test_stopping_and_doing_nothing_scores_no_recovery(tmp_path: Path) -> None:
    result, _ = play(PLAYS / "stop-and-nothing.yaml", tmp_path)
    assert result["recovery"]["points"] == 0
    assert "'repaired' never happened" in reasons(result)


def test_a_noisy_monitor_is_reported_and_never_detects(tmp_path: Path) -> None:
    result, events = play(PLAYS / "flapping-monitor.yaml", tmp_path)
    assert result["detection"]["noise"] == ["flapper"]
    assert result["detection"]["alert_minutes"] is None
    alerts = list(of_kind(events, ev.Alert))
    assert alerts and all(e.noise for e in alerts if e.sim_time > "23:00")


# -- the reference plays ---------------------------------------------------------------------

SCRIPTS = ROOT / "exercises" / "dynamodb-dns-race" / "scripts"


def test_the_reference_plays_keep_their_order(tmp_path: Path) -> None:
    totals = {name: play(SCRIPTS / f"{name}.yaml", tmp_path)[0]["total"]
              for name in ("guarded", "textbook", "as-it-happened", "hasty-repair",
                           "stop-and-wait", "nothing")}
    assert min(totals["guarded"], totals["textbook"]) >= totals["as-it-happened"]
    assert totals["as-it-happened"] > totals["hasty-repair"] > totals["stop-and-wait"]
    assert totals["stop-and-wait"] > totals["nothing"] == 0


def test_aws_documented_play_scores_its_own_50_and_157_minutes(tmp_path: Path) -> None:
    result, _ = play(SCRIPTS / "as-it-happened.yaml", tmp_path)
    assert result["detection"]["diagnosis_minutes"] == 50
    assert result["detection"]["event_minutes"] == 50
    assert result["recovery"]["outage_minutes"] == 157
    assert result["recovery"]["minutes_to_restore"] == 157
    assert result["recovery"]["relapses"] == []  # the 02:25 repair held
    assert "+7/7: The repair held" in reasons(result)
    assert "+0/8: The Enactor automation was stopped before" in reasons(result)


def test_guards_added_after_the_race_are_judged_by_the_final_replay(tmp_path: Path) -> None:
    result, events = play(SCRIPTS / "textbook.yaml", tmp_path)
    assert result["guards"]["judged_by"] == "replay"
    steps = {s["id"]: s for s in result["guards"]["steps"]}
    assert steps["stale-apply"]["status"] == "prevented"
    assert steps["stale-apply"]["live"] == "happened" and steps["stale-apply"]["live_at"] == "23:48"
    finals = [e for e in of_kind(events, ev.Replay) if e.final]
    assert len(finals) == 1


def test_two_runs_of_a_play_are_identical(tmp_path: Path) -> None:
    def strip(events: tuple[ev.Event, ...]) -> list[ev.Event]:
        def steady(e: ev.Event) -> ev.Event:
            e = dataclasses.replace(e, wall_time="")
            if isinstance(e, ev.Statement):
                e = dataclasses.replace(e, elapsed_ms=0.0)
            if isinstance(e, ev.Replay) and e.result is not None:
                e = dataclasses.replace(e, result=dataclasses.replace(e.result, folder=""))
            return e
        return [steady(e) for e in events]

    first, a = play(SCRIPTS / "hasty-repair.yaml", tmp_path / "a")
    second, b = play(SCRIPTS / "hasty-repair.yaml", tmp_path / "b")
    assert strip(a) == strip(b)
    assert {k: v for k, v in first.items() if k != "session"} == {
        k: v for k, v in second.items() if k != "session"}


def test_a_blind_declaration_taken_back_leaves_a_later_real_look_its_due(tmp_path: Path) -> None:
    result, events = play(PLAYS / "fig-then-look.yaml", tmp_path)
    assert result["detection"]["diagnosed_at"] == "00:11", reasons(result)
    assert "declared at 23:49 counts for nothing" in reasons(result)
    declared = [e.verdict for e in of_kind(events, ev.Declaration)]
    assert declared == ["confirmed", "repeat"]  # live; the score corrects it at the end
