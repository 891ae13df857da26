"""Replays leave no world copies behind: only the newest replay's race world stays (the
replay walk reads it) until the next replay or the end of the session."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import pytest

from raceday.engine import replay, replay_cache
from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.night import replay_until

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"


def _worlds(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in (folder / "replay").rglob("*.db*"))


def test_two_replays_keep_one_world_and_the_end_keeps_none(tmp_path: Path) -> None:
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path)
    session.execute("responder", "CREATE TABLE ballast (b BLOB)")
    session.execute("responder", "INSERT INTO ballast SELECT randomblob(100000) FROM "
                                 "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                 "FROM n WHERE i < 20) SELECT i FROM n)")
    first = session.replay()
    assert _worlds(session.folder) == ["replay/1/race.db"]
    second = session.replay()
    assert _worlds(session.folder) == ["replay/2/race.db"]
    assert first.result is not None and second.result is not None
    assert first.result.steps == second.result.steps  # what the replay says is unchanged
    assert (session.folder / "replay" / "1" / "race" / "events.jsonl").exists()
    session.end()
    assert _worlds(session.folder) == []


def test_prepare_keeps_the_normal_night_and_changes_no_replay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the TUI does once a session is open: the original world's normal nights are in
    the cache folder before any replay, the replay says the same, and the session's folder holds
    nothing of it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    monkeypatch.setattr(replay_cache, "good_known", {})  # nights known in this process: none
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    exercise = load_exercise(FLAGSHIP)
    unprepared = open_session(exercise, ("responder",), tmp_path / "a").replay()
    monkeypatch.setattr(replay_cache, "good_known", {})
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    for night in list((cache / "normal-nights").iterdir()):
        night.unlink()
    session = open_session(exercise, ("responder",), tmp_path / "b")
    replay.discard_ahead()  # as where no child can be forked: prepare plays them
    replay.prepare(session)
    kept = [json.loads(p.read_text("utf-8")) for p in (cache / "normal-nights").iterdir()]
    assert len([k for k in kept if "good" in k]) == 2  # tonight's, the shifted race's
    assert not (session.folder / "replay").exists()
    prepared = session.replay()
    assert prepared.result is not None and unprepared.result is not None
    assert prepared.result == unprepared.result


def test_prepare_does_nothing_ahead_for_a_large_world(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    monkeypatch.setattr(replay_cache, "good_known", {})
    monkeypatch.setattr(replay, "_PREPARE_BYTES", 1000)
    replay.prepare(open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path))
    assert not (cache / "normal-nights").exists()


def test_the_unguarded_race_is_kept_in_the_cache_folder_and_read_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race on the exercise's own world (what the guards are set against) is the same for
    the same exercise, seed and code: played once, kept in the cache folder, and a later
    process reads it instead of playing it again."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    exercise = load_exercise(FLAGSHIP)
    session = open_session(exercise, ("responder",), tmp_path / "t")
    replay.discard_ahead()  # played here, not by a child started when the session opened
    result = session.replay()
    assert result.result is not None
    tonight = {h.harm: h for h in result.result.harms if h.night == "tonight's race"}
    assert tonight["empty-answer"].baseline == 87  # 23:48 to 01:15 with no guard
    key = replay_cache.baseline_key(type(session), exercise, replay_until(session), "",
                                    "sqlite")
    kept = replay_cache.cache_file(key)
    assert kept is not None and kept.exists()
    monkeypatch.setattr(replay_cache, "baselines_known", {})  # a new process: only the disk knows
    played: list[str] = []
    monkeypatch.setattr(replay, "play_on", lambda *a, **k: played.append("night"))
    assert replay._baseline(type(session), exercise, replay_until(session), "")[
        "empty-answer"][0] == 87
    assert played == []
