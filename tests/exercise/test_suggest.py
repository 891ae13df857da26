"""Where a newcomer starts and what the launcher offers next, from what was finished."""

from __future__ import annotations

import pytest

from raceday.exercise.catalog import ExerciseEntry, find_exercises
from raceday.exercise.suggest import suggest


@pytest.fixture(scope="module")
def entries() -> list[ExerciseEntry]:
    return [e for e in find_exercises() if e.bundled]


def test_nothing_finished_starts_with_the_beginner_exercise_guided(
        entries: list[ExerciseEntry]) -> None:
    found = suggest(entries, [])
    assert found is not None and found.first_run
    assert found.id == "lost-update-basics"
    assert found.why.startswith("Start here: The lost update (20 min, beginner)")


def test_after_the_beginner_exercise_the_next_level_in_catalogue_order(
        entries: list[ExerciseEntry]) -> None:
    found = suggest(entries, ["lost-update-basics"])
    assert found is not None and not found.first_run
    assert found.id == "dynamodb-dns-race"


def test_after_a_night_its_next_act_comes_before_the_easier_ones_left(
        entries: list[ExerciseEntry]) -> None:
    found = suggest(entries, ["dynamodb-dns-race"])
    assert found is not None and found.id == "recovery-under-load"
    assert "next act of The DNS race" in found.why


def test_a_next_act_already_finished_is_not_offered_again(
        entries: list[ExerciseEntry]) -> None:
    found = suggest(entries, ["recovery-under-load", "lost-update-basics",
                              "dynamodb-dns-race"])
    assert found is not None and found.id == "isolation-lab"


def test_everything_finished_suggests_nothing(entries: list[ExerciseEntry]) -> None:
    assert suggest(entries, [e.id for e in entries]) is None


def test_an_exercise_that_does_not_load_is_never_suggested(
        entries: list[ExerciseEntry]) -> None:
    from dataclasses import replace

    broken = [replace(e, problems=("x.yaml:1: broken",)) if e.level == "beginner" else e
              for e in entries]
    found = suggest(broken, [])
    assert found is not None and found.id != "lost-update-basics"
