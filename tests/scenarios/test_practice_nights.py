"""Practice nights (issue 27): the final replay also plays the normal night with one thing
gone wrong in it, so the article's other practices ("never empty" in any form) earn what they
keep from the customers; and a recovery reached by writing the measured state by hand
(break-glass) is forged, not earned.

Plays are beside this file, in `judge/`; each right answer is set against the same play
without it, and each pattern-bending play against what it honestly did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from reference_plays import ReferencePlays

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.debrief.model import ChecklistItem
from raceday.transcript.log import read_events

ROOT = Path(__file__).resolve().parents[2]
PLAYS = Path(__file__).resolve().parent / "judge"


def play(script: Path, transcripts: Path, exercise: str = "dynamodb-dns-race") -> dict[str, Any]:
    ex = load_exercise(ROOT / "exercises" / exercise)
    _, result = run_script(ex, load_script(script, ex), transcripts)
    return result


def practice(result: dict[str, Any], night: str) -> dict[str, Any]:
    return next(h for h in result["guards"]["harms"] if h.get("practice") == night)


def checklist(result: dict[str, Any]) -> tuple[ChecklistItem, ...]:
    return build_debrief(read_events(Path(result["session"])).events).checklist


def reasons(result: dict[str, Any]) -> str:
    return "\n".join(result["reasons"])


def test_a_never_empty_trigger_earns_on_both_practice_nights(tmp_path: Path) -> None:
    """The trigger does not stop tonight's race, so before practice nights it earned 0, the
    same as no guard: now each night where it keeps the empty answer away pays."""
    guarded = play(PLAYS / "never-empty-update.yaml", tmp_path / "guarded")
    bare = play(ROOT / "exercises/dynamodb-dns-race/scripts/nothing.yaml", tmp_path / "bare")
    assert practice(guarded, "dangling-pointer")["points"] == 5, reasons(guarded)
    assert practice(guarded, "empty-plan")["points"] == 5, reasons(guarded)
    assert guarded["guards"]["points"] == 10, reasons(guarded)
    assert bare["guards"]["points"] == 0, reasons(bare)
    assert "on the practice night: a plan written with no records" in reasons(guarded)
    # the debrief's checklist credits exactly what the judge credited
    items = {i.id: i for i in checklist(guarded)}
    # partly: it kept both practice nights' empty answers away, not tonight's race's
    assert items["never-states"].status == "partly done", items["never-states"]
    assert sum("kept away on the practice night" in line
               for line in items["never-states"].did) == 2, items["never-states"]
    assert any("still reaching the customers" in line for line in items["never-states"].did_not)
    assert {i.id: i for i in checklist(bare)}["never-states"].status != "done"


def test_a_foreign_key_earns_the_dangling_pointer_night_not_the_empty_plan(
        tmp_path: Path) -> None:
    """A foreign key on active_plan_id refuses a pointer to a plan that is not there, but a
    plan that exists with no records passes it: it earns one practice night, not both."""
    result = play(PLAYS / "foreign-key-only.yaml", tmp_path)
    assert practice(result, "dangling-pointer")["points"] == 5, reasons(result)
    assert practice(result, "empty-plan")["points"] == 0, reasons(result)
    assert practice(result, "empty-plan")["baseline"] > 0


def test_a_guard_keyed_on_the_practice_minute_earns_nothing_net(tmp_path: Path) -> None:
    result = play(PLAYS / "practice-value-keyed.yaml", tmp_path)
    assert result["guards"]["points"] == 0, reasons(result)
    assert "collateral" in reasons(result)


def test_the_textbook_earns_every_practice_night(tmp_path: Path) -> None:
    result = play(ROOT / "exercises/dynamodb-dns-race/scripts/textbook.yaml", tmp_path)
    assert result["guards"]["points"] == result["guards"]["max"] == 40, reasons(result)
    assert {h.get("practice", "") for h in result["guards"]["harms"]} == {
        "", "dangling-pointer", "empty-plan", "lost-write"}


def test_leases_written_by_hand_are_a_forged_recovery(tmp_path: Path) -> None:
    """The issue's play: break-glass leases, then restart: recovery 34 before, now nothing,
    and the reason says what was forged and when."""
    result = play(PLAYS / "forge-leases.yaml", tmp_path, "recovery-under-load")
    assert result["recovery"]["points"] == 0, reasons(result)
    assert "responder (by hand) wrote droplet at 02:40" in reasons(result)
    rehearsed = next(i for i in checklist(result) if i.id == "recovery-under-load")
    assert rehearsed.status == "not done" and not rehearsed.did, rehearsed


@pytest.mark.parametrize("script", ["as-it-happened", "throttle-by-queue"])
def test_an_honest_recovery_is_not_called_forged(script: str,
                                                reference_play: ReferencePlays) -> None:
    result = reference_play("recovery-under-load",
                            ROOT / f"exercises/recovery-under-load/scripts/{script}.yaml").result
    assert "forged" not in reasons(result)
    assert result["recovery"]["points"] > 0, reasons(result)


def test_a_guard_keyed_on_the_practice_nights_number_earns_nothing_net(tmp_path: Path) -> None:
    """The night's plan number is read from the world as the run starts (bind_sql), so no file
    prints it; keyed on what it reads on the normal night, a guard refuses the real plan. The
    practice night plays on the variant's renumbered plans, so the number misses it there too
    (it earned its 5 there while practice nights kept tonight's numbers)."""
    result = play(PLAYS / "practice-next-plan-keyed.yaml", tmp_path)
    assert practice(result, "dangling-pointer")["points"] == 0, reasons(result)
    assert "collateral: a good write of the normal night was refused" in reasons(result)
    assert result["guards"]["points"] == 0, reasons(result)


def test_the_checklist_credits_row_counts_as_the_judge_did(tmp_path: Path) -> None:
    """Row counts is done when the lost-write night's harm was kept away, and not done when
    the Enactor carried on after its write lost."""
    stop = {i.id: i for i in checklist(play(PLAYS / "row-count-stop.yaml", tmp_path / "s"))}
    carry = {i.id: i for i in checklist(
        play(PLAYS / "row-count-conditional-only.yaml", tmp_path / "c"))}
    assert stop["row-counts"].status == "done", stop["row-counts"]
    assert carry["row-counts"].status == "not done", carry["row-counts"]
