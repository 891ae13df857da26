"""An exercise's words for the debrief: its sources, phases and checklist, in its own file or
a shared one, checked with file:line like the rest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from raceday.engine.load import load_exercise
from raceday.errors import ExerciseError
from raceday.exercise.model import Judge, PhaseTeam

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"


def test_the_flagship_gives_its_phases_checklist_and_shared_sources() -> None:
    content = load_exercise(EXERCISES / "dynamodb-dns-race", check_sql=False).debrief
    assert content.night == "That night"
    assert content.source("dat453") is not None and content.source("aws-summary") is not None
    assert [p.team for p in content.phases] == [PhaseTeam.FAULT, PhaseTeam.DETECTED,
                                                PhaseTeam.STOPPED, PhaseTeam.REPAIRED,
                                                PhaseTeam.RESTORED]
    assert content.checklist_title == "The article's checklist"
    practices = {p.id: p for p in content.checklist}
    assert practices["read-decide-write"].steps == ("stale-apply",)
    assert practices["row-counts"].judge is Judge.ROW_COUNTS


def test_the_onboarding_exercise_has_its_own_words() -> None:
    content = load_exercise(EXERCISES / "lost-update-basics", check_sql=False).debrief
    assert content.night == ""
    assert content.checklist_title == "The morning's guards"
    assert "read-decide-write" not in {p.id for p in content.checklist}
    assert content.source("aws-summary") is not None  # shared, cited by its one reveal


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "dynamodb-dns-race"
    shutil.copytree(EXERCISES / "dynamodb-dns-race", folder)
    shutil.copytree(EXERCISES / "shared", tmp_path / "shared")
    return folder


@pytest.mark.parametrize(("old", "new", "message"), [
    ("    team: stopped\n", "    team: lunch\n", '"team" must be one of fault, detected'),
    ("        steps: [stale-apply]\n", "        steps: [stale-apply, lunch]\n",
     'race_step "lunch" is not defined'),
    ("    source: dat453\n", "    source: rumour\n",
     'source "rumour" is not one the exercise declares'),
    ("    phase: detection\n", "    phase: lunch\n", 'phase "lunch" is not one the exercise declares'),
    ("    team: fault\n", "    team: fault\n    milestone: repaired\n",
     '"milestone" is for a phase whose team is stopped or repaired'),
    ("  shared: aws-2025-10\n", "  shared: aws-1999\n", 'shared file "aws-1999" not found'),
])
def test_a_broken_debrief_section_is_reported_at_its_line(tmp_path: Path, old: str, new: str,
                                                          message: str) -> None:
    folder = _copy(tmp_path)
    path = folder / "exercise.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index(new)].count("\n") + 1 + new.count("\n") - 1
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder, check_sql=False)
    found = [p for p in caught.value.problems if message in p]
    assert found, caught.value.problems
    assert any(f"exercise.yaml:{n}:" in found[0] for n in range(line - 2, line + 1)), found


def test_a_problem_in_the_shared_file_names_that_file(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    shared = tmp_path / "shared" / "aws-2025-10.yaml"
    shared.write_text(shared.read_text(encoding="utf-8") + "colour: blue\n", encoding="utf-8")
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder, check_sql=False)
    assert any("aws-2025-10.yaml:" in p and "colour" in p for p in caught.value.problems)


def test_an_exercise_copied_alone_uses_raceday_s_own_shared_file(tmp_path: Path) -> None:
    """A copy without `shared/` beside it (an author starting from a bundled exercise) loads
    with the bundled shared file; its own `shared/` wins when it has one."""
    folder = tmp_path / "lost-update-basics"
    shutil.copytree(EXERCISES / "lost-update-basics", folder)
    content = load_exercise(folder, check_sql=False).debrief
    assert content.source("aws-summary") is not None
    (tmp_path / "shared").mkdir()
    own = (EXERCISES / "shared" / "aws-2025-10.yaml").read_text(encoding="utf-8")
    (tmp_path / "shared" / "aws-2025-10.yaml").write_text(own + "colour: blue\n",
                                                          encoding="utf-8")
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder, check_sql=False)
    assert any("colour" in p for p in caught.value.problems)
