"""Exercises are found in the bundled folder, ./exercises and extra folders, by id or path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from exercise_fixtures import MINIMAL

from raceday.engine.load import find_exercises
from raceday.errors import ExerciseError
from raceday.exercise import catalog
from raceday.exercise.catalog import resolve_exercise


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A bundled folder holding `minimal`, and a working directory with ./exercises."""
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    shutil.copytree(MINIMAL, bundled / "minimal")
    work = tmp_path / "work"
    (work / "exercises").mkdir(parents=True)
    monkeypatch.setattr(catalog, "BUNDLED_DIR", bundled)
    monkeypatch.chdir(work)
    return bundled, work


def test_bundled_exercise_is_listed(places: tuple[Path, Path]) -> None:
    bundled, _ = places
    (entry,) = find_exercises()
    assert entry.id == "minimal" and entry.ok and entry.error is None
    assert entry.bundled and entry.note == ""
    assert entry.path == bundled / "minimal"
    assert (entry.title, entry.length, entry.level) == ("Two writers, one row", 25, "beginner")
    assert entry.summary.startswith("The smallest exercise")
    assert entry.roles == ("operator", "writer-a", "writer-b")
    assert entry.exercise is not None and entry.exercise.id == "minimal"


def test_broken_exercise_is_listed_with_its_problem(places: tuple[Path, Path]) -> None:
    _, work = places
    draft = work / "exercises" / "draft"
    shutil.copytree(MINIMAL, draft)
    (entry_draft, entry_minimal) = find_exercises()
    assert entry_minimal.ok
    assert entry_draft.id == "draft" and not entry_draft.ok and not entry_draft.bundled
    assert entry_draft.error == (
        'exercises/draft/exercise.yaml:2: id "minimal" must equal the folder name "draft"'
    )
    assert entry_draft.title == "Two writers, one row"  # what could still be read
    assert entry_draft.roles == ("operator", "writer-a", "writer-b")
    assert entry_draft.exercise is None


def test_own_folder_overrides_a_bundled_id_and_says_so(places: tuple[Path, Path]) -> None:
    _, work = places
    shutil.copytree(MINIMAL, work / "exercises" / "minimal")
    (entry,) = find_exercises()
    assert not entry.bundled
    assert entry.path == Path("exercises/minimal")
    assert entry.note == "overrides the bundled exercise of the same id"
    assert resolve_exercise("minimal") == Path("exercises/minimal")


def test_same_folder_twice_is_listed_once(places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    bundled, work = places
    shutil.rmtree(work / "exercises")
    (work / "exercises").symlink_to(bundled)  # the source tree: ./exercises is the bundle
    (entry,) = find_exercises()
    assert entry.bundled and entry.note == ""


def test_extra_dirs_and_folders_that_are_not_exercises(places: tuple[Path, Path]) -> None:
    _, work = places
    extra = work / "more"
    (extra / "notes").mkdir(parents=True)  # no exercise.yaml: not an exercise
    (extra / ".hidden").mkdir()
    shutil.copytree(MINIMAL, extra / ".hidden" / "minimal")
    other = extra / "other"
    shutil.copytree(MINIMAL, other)
    entries = find_exercises([extra], check_sql=False)
    assert [e.id for e in entries] == ["minimal", "other"]
    assert entries[1].error is not None and "folder name" in entries[1].error


def test_resolve_by_path(places: tuple[Path, Path]) -> None:
    bundled, _ = places
    folder = bundled / "minimal"
    assert resolve_exercise(str(folder)) == folder
    assert resolve_exercise(folder / "exercise.yaml") == folder / "exercise.yaml"


def test_resolve_by_id(places: tuple[Path, Path]) -> None:
    bundled, _ = places
    assert resolve_exercise("minimal") == bundled / "minimal"


def test_resolve_unknown_lists_known_ids(places: tuple[Path, Path]) -> None:
    with pytest.raises(ExerciseError) as info:
        resolve_exercise("maximal")
    assert info.value.problems == [
        '"maximal" is neither an exercise folder nor a known exercise id (known ids: minimal)'
    ]


def test_resolve_folder_without_exercise_yaml(places: tuple[Path, Path]) -> None:
    _, work = places
    (work / "empty").mkdir()
    with pytest.raises(ExerciseError) as info:
        resolve_exercise("empty")
    assert info.value.problems == ["empty has no exercise.yaml (known ids: minimal)"]


def test_bundled_dir_is_the_package_folder() -> None:
    assert catalog.BUNDLED_DIR.name == "bundled"
    assert catalog.BUNDLED_DIR.parent.name == "raceday"
