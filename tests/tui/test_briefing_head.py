"""The briefing's first frame (title, summary, the clock's start and zone) is kept by the run
that loaded the exercise and found again by the next: the loader's head for the same bytes of
exercise.yaml, never an old one, and a cache that cannot be read or written is only a miss."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tui_fixtures import DATA

from raceday.engine.load import load_exercise
from raceday.exercise.model import Exercise
from raceday.tui.briefing_head import BriefingHead, load_keeping_head, read_head

EXERCISES = sorted(p.parent for p in (Path(__file__).parents[2] / "exercises").glob(
    "*/exercise.yaml")) + [DATA / "mini-dns", DATA / "mini-race"]


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A cache folder of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    """A copy of mini-dns this test may edit."""
    folder = tmp_path / "mini-dns"
    shutil.copytree(DATA / "mini-dns", folder)
    return folder


def _kept(cache: Path) -> list[Path]:
    """What the cache folder keeps, but the loaded exercises (tests/engine/test_load_cache.py)."""
    return sorted(p for p in cache.rglob("*") if p.is_file() and p.parent.name != "exercises")


@pytest.mark.parametrize("folder", EXERCISES, ids=lambda p: p.name)
def test_a_miss_the_first_time_then_the_loaded_head(cache: Path, folder: Path) -> None:
    assert read_head(folder) is None
    exercise = load_keeping_head(folder)
    assert read_head(folder) == BriefingHead.of(exercise)
    assert read_head(folder / "exercise.yaml") == BriefingHead.of(exercise)  # its file too


def test_the_same_bytes_elsewhere_are_a_hit(cache: Path, mini: Path) -> None:
    exercise = load_keeping_head(DATA / "mini-dns")
    assert read_head(mini) == BriefingHead.of(exercise)


@pytest.mark.parametrize("edit", [
    lambda text: text + "# a comment added\n",  # the head the same: still not trusted
    lambda text: text.replace("title: ", "title: Edited ", 1),
    lambda text: text.replace("zone: ", "zone:  ", 1),  # one space, the same YAML
], ids=["a-comment", "the-title", "a-space"])
def test_an_edited_exercise_is_a_miss_and_the_load_keeps_its_new_head(
        cache: Path, mini: Path, edit: Callable[[str], str]) -> None:
    load_keeping_head(mini)
    assert read_head(mini) is not None
    yaml_file = mini / "exercise.yaml"
    yaml_file.write_text(edit(yaml_file.read_text()))
    assert read_head(mini) is None
    edited = load_keeping_head(mini)
    assert read_head(mini) == BriefingHead.of(edited)
    if "Edited" in yaml_file.read_text():
        assert edited.title.startswith("Edited ")


@pytest.mark.parametrize("damage", [b"", b"{", b"not json", b"[1, 2]", b'{"title": "t"}',
                                    b'{"title": 1, "summary": "s", "start": "s", "zone": "z"}',
                                    b"\xff\xfe"])
def test_a_damaged_kept_head_is_a_miss_and_is_kept_again(
        cache: Path, mini: Path, damage: bytes) -> None:
    exercise = load_keeping_head(mini)
    (kept,) = _kept(cache)
    kept.write_bytes(damage)
    assert read_head(mini) is None
    load_keeping_head(mini)
    assert read_head(mini) == BriefingHead.of(exercise)


def test_a_cache_that_cannot_be_written_is_no_failure(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mini: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(blocked / "cache"))
    exercise = load_keeping_head(mini)
    assert exercise.id == "mini-dns"
    assert read_head(mini) is None
    assert blocked.read_text() == "not a folder"


def test_an_empty_raceday_cache_dir_keeps_nothing_on_disk(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mini: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    xdg.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("RACEDAY_CACHE_DIR", "")
    load_keeping_head(mini)
    assert read_head(mini) is None
    assert not any(home.iterdir()) and not any(xdg.iterdir())


@pytest.mark.parametrize("xdg", [True, False])
def test_without_raceday_cache_dir_heads_are_kept_in_the_users_cache(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mini: Path, xdg: bool) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("RACEDAY_CACHE_DIR")
    monkeypatch.setenv("HOME", str(home))
    if xdg:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    else:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    exercise = load_keeping_head(mini)
    assert read_head(mini) == BriefingHead.of(exercise)
    folder = tmp_path / "xdg" / "raceday" if xdg else home / ".cache" / "raceday"
    assert [p.parent for p in _kept(folder)] == [folder / "briefing-heads"]


def test_a_file_edited_while_it_loads_keeps_no_head(
        cache: Path, mini: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from raceday.engine import load

    yaml_file = mini / "exercise.yaml"

    def edited_meanwhile(path: Path, **kwargs: bool) -> Exercise:
        exercise = load_exercise(path, **kwargs)
        yaml_file.write_text(yaml_file.read_text().replace("title: ", "title: Edited ", 1))
        return exercise

    monkeypatch.setattr(load, "load_exercise", edited_meanwhile)
    load_keeping_head(mini)
    assert _kept(cache) == [] and read_head(mini) is None
