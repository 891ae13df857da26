"""An exercise loads as an earlier run loaded it while nothing it is made of has changed:
read back, not parsed and compiled again; any file of its folder edited (even to the same
size), a file written just now, a kept copy others could have written or that is damaged,
and it is loaded afresh. An exercise that does not load is never kept."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from raceday.engine import load_cache
from raceday.engine.load import load_exercise
from raceday.errors import ExerciseError
from raceday.exercise import loader

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"


def _counted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, owner: object,
             name: str) -> list[Path]:
    """The paths `owner.name(path, ...)` is called with from now; a cache folder of this
    test's own."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    made: list[Path] = []
    real = getattr(owner, name)

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return made


@pytest.fixture
def loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each time the exercise is really loaded (parsed and checked), by its path."""
    return _counted(monkeypatch, tmp_path, loader, "load_exercise")


def _settled(folder: Path, seconds_ago: float = 60) -> None:
    """Every file of `folder` last written `seconds_ago` (not just now)."""
    when = time.time() - seconds_ago
    for file in folder.rglob("*"):
        os.utime(file, (when, when))


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / FLAGSHIP.name
    shutil.copytree(FLAGSHIP, folder)
    _settled(folder)
    return folder


def test_an_unchanged_exercise_is_read_back_and_an_edited_one_loaded_again(
        tmp_path: Path, loads: list[Path]) -> None:
    folder = _copy(tmp_path)
    first = load_exercise(folder)
    again = load_exercise(folder)
    assert len(loads) == 1 and again == first

    briefing = folder / "briefing.md"
    text = briefing.read_text(encoding="utf-8")
    edited = text.replace("DynamoDB", "DYNAMODB", 1)
    assert edited != text and len(edited) == len(text)
    briefing.write_text(edited, encoding="utf-8")  # the same size: only its time tells
    _settled(folder, seconds_ago=30)
    changed = load_exercise(folder)
    assert len(loads) == 2
    assert "DYNAMODB" in changed.briefing and "DYNAMODB" not in first.briefing
    assert load_exercise(folder) == changed and len(loads) == 2
    assert len(list((tmp_path / "cache" / "exercises").iterdir())) == 1  # replaced, not added


def test_a_file_written_just_now_keeps_nothing(tmp_path: Path, loads: list[Path]) -> None:
    folder = _copy(tmp_path)
    (folder / "scripts" / "mine.yaml").write_text("steps: []\n", encoding="utf-8")
    load_exercise(folder)
    load_exercise(folder)
    assert len(loads) == 2
    assert not (tmp_path / "cache" / "exercises").exists()


def test_a_kept_copy_others_may_write_or_that_is_damaged_is_not_read(
        tmp_path: Path, loads: list[Path]) -> None:
    folder = _copy(tmp_path)
    first = load_exercise(folder)
    [kept] = (tmp_path / "cache" / "exercises").glob("*.pickle")
    assert kept.parent.stat().st_mode & 0o777 == 0o700
    kept.chmod(0o666)
    assert load_exercise(folder) == first and len(loads) == 2  # loaded, and kept again
    assert kept.stat().st_mode & 0o022 == 0
    kept.write_bytes(kept.read_bytes()[:100])
    assert load_exercise(folder) == first and len(loads) == 3
    assert load_exercise(folder) == first and len(loads) == 3


def test_an_exercise_that_does_not_load_is_never_kept(
        tmp_path: Path, loads: list[Path]) -> None:
    folder = _copy(tmp_path)
    world = folder / "world.sql"
    world.write_text(world.read_text(encoding="utf-8") + "\nCREATE TABLE;\n", encoding="utf-8")
    _settled(folder)
    for _ in range(2):
        with pytest.raises(ExerciseError, match="world"):
            load_exercise(folder)
    assert len(loads) == 2
    assert load_cache._kept(folder, True) is not None  # keyed, but never written
    assert not list((tmp_path / "cache").rglob("*.pickle"))


def test_a_shared_debrief_file_beside_the_folder_is_part_of_what_it_is_made_of(
        tmp_path: Path, loads: list[Path]) -> None:
    folder = _copy(tmp_path)
    first = load_exercise(folder)
    shared = tmp_path / "shared"
    shutil.copytree(FLAGSHIP.parent / "shared", shared)  # a copy of raceday's own, changed
    [source] = [f for f in shared.glob("*.yaml") if "aws-summary" in f.read_text("utf-8")]
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("read word for word", "read word by word"), encoding="utf-8")
    _settled(shared)
    beside = load_exercise(folder)
    assert len(loads) == 2
    assert beside.debrief.source("aws-summary") != first.debrief.source("aws-summary")
    assert load_exercise(folder) == beside and len(loads) == 2


@pytest.fixture
def reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each time a play script is really read (YAML parsed and checked), by its path."""
    from raceday.engine import script as script_module

    return _counted(monkeypatch, tmp_path, script_module, "_read_script")


def test_a_play_script_is_read_back_until_its_bytes_or_its_exercise_change(
        tmp_path: Path, reads: list[Path]) -> None:
    """A headless night reads its script as the last run did (PyYAML and the parse were ~25
    ms of it); an edit, even one keeping the size and the time, is read afresh, as is the
    same script for an exercise that changed."""
    import dataclasses

    from raceday.engine.script import load_script

    exercise = load_exercise(FLAGSHIP)
    script = tmp_path / "night.yaml"
    shutil.copy(FLAGSHIP / "scripts" / "as-it-happened.yaml", script)
    first = load_script(script, exercise)
    again = load_script(script, exercise)
    assert len(reads) == 1 and again == first and again.path == script

    stat = script.stat()
    text = script.read_text(encoding="utf-8")
    assert 'at: "00:05"' in text
    script.write_text(text.replace('at: "00:05"', 'at: "00:06"', 1), encoding="utf-8")
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time
    edited = load_script(script, exercise)
    assert len(reads) == 2 and edited != first

    other = dataclasses.replace(exercise, title=exercise.title + " (edited)")
    assert load_script(script, other) == edited and len(reads) == 3


def test_a_script_that_does_not_read_is_never_kept(tmp_path: Path, reads: list[Path]) -> None:
    from raceday.engine.script import load_script
    from raceday.errors import ScriptError

    exercise = load_exercise(FLAGSHIP)
    script = tmp_path / "broken.yaml"
    script.write_text("steps:\n  - at: '23:50'\n    sql: [\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ScriptError, match="broken.yaml:"):
            load_script(script, exercise)
    assert len(reads) == 2
