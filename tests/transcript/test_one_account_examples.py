"""The defects the generated plays of tests/scenarios/test_one_account.py found (issue 57), each
replayed as one play: the debrief says what the score decided, once."""

from __future__ import annotations

from pathlib import Path

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript.debrief import build_debrief
from raceday.transcript.debrief.model import ChecklistItem, Debrief
from raceday.transcript.log import read_events

ROOT = Path(__file__).resolve().parents[2]


def _debrief(exercise_id: str, script: Path, tmp_path: Path) -> Debrief:
    exercise = load_exercise(ROOT / "exercises" / exercise_id)
    session, _ = run_script(exercise, load_script(script, exercise), tmp_path / "t")
    return build_debrief(read_events(session.folder).events)


def _item(debrief: Debrief, practice: str) -> ChecklistItem:
    return next(i for i in debrief.checklist if i.id == practice)


def test_a_step_the_race_never_reached_past_a_guard_is_not_an_area(tmp_path: Path) -> None:
    """textbook.yaml: the final replay stops the race at stale-apply, so wedged-automation is
    never reached; the AAR listed "wedged-automation did not happen, but no guard of the
    team's was seen stopping it" beside the strength that the guards stopped the race."""
    debrief = _debrief("dynamodb-dns-race",
                       ROOT / "exercises" / "dynamodb-dns-race" / "scripts" / "textbook.yaml",
                       tmp_path)
    aar = debrief.after_action
    assert not any("did not happen, but no guard" in x for x in aar.improvements), \
        aar.improvements
    assert any(s.startswith("After stale-apply happened tonight") for s in aar.strengths)


def test_a_guard_that_gives_way_on_the_variant_night_is_no_strength(tmp_path: Path) -> None:
    """A forward-only trigger keyed on the regional endpoint's name refuses the stale apply
    tonight, but the score's replay has it happen on the variant night: the AAR read "The
    team's guards were seen stopping the race step stale-apply" as a strength."""
    debrief = _debrief("dynamodb-dns-race",
                       ROOT / "tests" / "scenarios" / "judge" / "name-keyed-endpoint.yaml",
                       tmp_path)
    step = next(s for s in debrief.guards.steps if s.id == "stale-apply")
    assert step.verdict == "happened" and step.guarded  # the facts the sentences rest on
    aar = debrief.after_action
    assert not any("seen stopping the race step" in s for s in aar.strengths), aar.strengths
    assert any(x.startswith("A guard of the team's was seen stopping stale-apply in tonight's "
                            "race, but it still happened in the replay") for x in aar.improvements)
    item = _item(debrief, "read-decide-write")
    assert item.status == "not done"
    assert "the replay showed stale-apply still happens against the team's world" in item.note


def test_an_edit_that_refuses_the_good_writes_is_not_the_practice_done(tmp_path: Path) -> None:
    """cheat-stop-enactor-b.yaml edits Enactor B's write so it never changes a row: the stale
    write never lands, and neither does any good write of B's. The checklist read "The check
    and the write are one step the database can refuse: done"."""
    debrief = _debrief("isolation-lab", ROOT / "exercises" / "isolation-lab" / "scripts"
                       / "cheat-stop-enactor-b.yaml", tmp_path)
    item = _item(debrief, "one-step")
    assert item.status == "partly done", item
    assert ("the team's edit of b-apply also refused 3 good writes of the normal night "
            "(b-on-time at 23:39, b-on-time at 23:49, b-on-time at 23:59)") in item.did_not


def test_a_registration_made_a_no_op_is_not_a_harmless_retry(tmp_path: Path) -> None:
    """Making writer A's registration a no-op keeps the duplicate reader away, and db-4 out of
    the read pool on the normal morning too: "A retry is harmless" read done."""
    script = tmp_path / "no-registration.yaml"
    script.write_text("exercise: lost-update-basics\nroles: [operator]\nsteps:\n"
                      "  - {as: operator, edit: {statement: a-register, sql: SELECT 1}}\n"
                      "  - wait: \"09:22\"\n", encoding="utf-8")
    item = _item(_debrief("lost-update-basics", script, tmp_path), "harmless-retry")
    assert item.status == "partly done", item
    assert item.did_not == ("the team's edit of a-register also refused 1 good write of the "
                            "normal night (a-provision at 09:16)",)


def test_row_counts_done_by_an_edit_says_so(tmp_path: Path) -> None:
    """The conditional apply (an edit of the row-count practice's own statement) keeps its
    practice night away: the checklist read "Row counts: done" with only the night's verdict
    to show, beside its own "No write changed 0 rows, so reading the count was never put to
    the test"."""
    debrief = _debrief("dynamodb-dns-race",
                       ROOT / "tests" / "scenarios" / "judge" / "row-count-noop-next.yaml",
                       tmp_path)
    item = _item(debrief, "row-counts")
    assert item.status == "done"
    assert any(line.startswith("edited the automation's statement enactor-a-apply at 23:05")
               for line in item.did), item.did
    assert "never put to the test" not in item.note


def test_the_good_path_says_what_the_guards_broke_with_no_race(tmp_path: Path) -> None:
    """A trigger that clears the rollback pointer on every apply empties the regional answer
    on the normal night too: the score took 18 points for it, and "The good path" read
    "still works" twice, with no area for improvement."""
    debrief = _debrief("dynamodb-dns-race",
                       ROOT / "tests" / "scenarios" / "judge" / "rollback-null-trigger.yaml",
                       tmp_path)
    lines = debrief.guards.good_path_lines()
    assert any(line.startswith("HARMED with no race: the team's world showed 'An endpoint's "
                               "DNS answer is empty' for ") and "on the normal night" in line
               for line in lines), lines
    assert any(x.startswith("With no race to stop, the team's world harmed the customers: ")
               for x in debrief.after_action.improvements), debrief.after_action.improvements
