"""Issue 57: the briefing's points are the rubric's. The flagship's briefing said guards were
30 + 10 while the judge gave 20 + 5 and three practice nights of 5."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from raceday.engine.load import load_exercise, load_named_exercise
from raceday.errors import ExerciseError
from raceday.exercise.catalog import BUNDLED_DIR

BUNDLED = ["dynamodb-dns-race", "isolation-lab", "lost-update-basics", "recovery-under-load"]


@pytest.mark.parametrize("name", BUNDLED)
def test_each_part_of_the_score_is_briefed_at_what_it_is_worth(name: str) -> None:
    exercise = load_named_exercise(name)
    text, scoring = exercise.briefing, exercise.scoring
    assert "{{" not in text
    parts = {"Detection": scoring.detection, "Guards": scoring.guards,
             "Recovery": scoring.recovery}
    for part, rubric in parts.items():
        assert rubric is not None
        said = re.search(rf"\*\*{part}\*?\*? ?\((\d+)", text)
        assert said is not None, part
        assert int(said.group(1)) == rubric.points, (part, said.group(0))


def test_the_flagship_briefs_every_guard_harm_and_practice_night() -> None:
    text = load_named_exercise("dynamodb-dns-race").briefing
    assert "no addresses (20," in text and "served (5," in text
    assert "Then 3 practice nights" in text and "earn 5 each" in text


def test_a_token_the_rubric_does_not_have_names_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "lost-update-basics"
    shutil.copytree(BUNDLED_DIR / "lost-update-basics", folder)
    briefing = folder / "briefing.md"
    lines = briefing.read_text(encoding="utf-8").splitlines()
    lines.insert(2, "Worth {{guards:no-such-harm}} points.")
    briefing.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ExerciseError) as refused:
        load_exercise(folder)
    assert any(p.endswith("briefing.md:3: {{guards:no-such-harm}} names nothing in the "
                          "exercise's scoring") for p in refused.value.problems), \
        refused.value.problems


def test_no_flagship_hint_teaches_a_guard_keyed_on_tonights_plan_numbers() -> None:
    """Issue 57: `recheck-at-write` taught `AND active_plan_id < 140`, a guard on tonight's
    plan number that the variant night shows for what it is (it scores 0 as a guard)."""
    exercise = load_named_exercise("dynamodb-dns-race")
    keyed = [h.id for h in exercise.hints
             if re.search(r"(<|>|=)\s*\d{2,}", h.text)]
    assert keyed == []
    recheck = next(h for h in exercise.hints if h.id == "recheck-at-write")
    assert "AND active_plan_id < :plan" in recheck.text
