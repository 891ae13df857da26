"""A session opened headless starts the replay's original nights in forked children at once
(`prepare_ahead`): its first replay takes their answers instead of playing them again."""

from __future__ import annotations

import json
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import pytest

from raceday.engine import aside, replay, replay_cache
from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.replay_outcomes import RunKey

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"

needs_fork = pytest.mark.skipif(not aside.can_fork(), reason="no second core to fork onto")


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Nothing known of the original nights, in this process or on disk."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    monkeypatch.setattr(replay_cache, "good_known", {})
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    monkeypatch.setattr(aside, "_enabled", [True])  # a team host before, in this process, set it off
    replay.discard_ahead()
    return cache


def _good_writes_kept(folder: Path) -> list[Path]:
    """The normal nights' good writes in the cache folder (beside baselines and worlds)."""
    return [p for p in folder.glob("*.json") if "good" in json.loads(p.read_text("utf-8"))]


def _baselines_kept(folder: Path) -> list[Path]:
    return [p for p in folder.glob("*.json") if "harms" in json.loads(p.read_text("utf-8"))]


def _not_here(*args: object, **kwargs: object) -> list[RunKey]:
    raise AssertionError("an original night was played in this process")


@needs_fork
def test_the_replay_takes_the_nights_started_when_the_session_opened(
        fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = load_exercise(FLAGSHIP)
    session = open_session(exercise, ("responder",), tmp_path / "ahead")
    assert len(replay._ahead_folders) == 1  # tonight's: the variant's waits for a change
    session.execute("responder", "CREATE TRIGGER keep_plans BEFORE DELETE ON plan "
                                 "BEGIN SELECT RAISE(ABORT, 'plan kept'); END")
    scratch = list(replay._ahead_folders)
    assert len(scratch) == 2  # the variant's, forked the moment the team added a guard
    monkeypatch.setattr(replay, "_good_writes", _not_here)  # the children were forked before
    nights = fresh / "normal-nights"
    waited = time.monotonic()
    while time.monotonic() - waited < 60 and len(_good_writes_kept(nights)) < 2:
        time.sleep(0.02)  # the children finish first (as on a slow machine): still taken
    ahead = session.replay().result
    assert ahead is not None
    assert len(_good_writes_kept(nights)) == 2  # tonight's, the shifted race's
    assert not replay._ahead  # both taken, their children collected
    assert not replay._ahead_folders
    assert not any(folder.exists() for folder in scratch)  # each child removed its own
    monkeypatch.undo()

    # the same replay with every night played in this process says the same
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "other-cache"))
    monkeypatch.setattr(replay_cache, "good_known", {})
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    monkeypatch.setattr(replay, "_played", OrderedDict())
    aside.set_enabled(False)
    try:
        here = open_session(exercise, ("responder",), tmp_path / "here")
        assert not replay._ahead  # no child, nothing started
        here.execute("responder", "CREATE TRIGGER keep_plans BEFORE DELETE ON plan "
                                  "BEGIN SELECT RAISE(ABORT, 'plan kept'); END")
        played = here.replay().result
    finally:
        aside.set_enabled(True)
    assert played is not None
    assert [(s.id, s.status, s.outcome) for s in played.steps] == \
        [(s.id, s.status, s.outcome) for s in ahead.steps]
    assert played.blocked_good_writes == ahead.blocked_good_writes
    assert any(s.status == "prevented" for s in ahead.steps)  # the guard did something


@needs_fork
def test_nights_nobody_asked_for_are_stopped_and_leave_nothing(
        fresh: Path, tmp_path: Path) -> None:
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path)
    session.execute("responder", "CREATE INDEX plan_by_time ON plan (created_at)")
    assert len(replay._ahead) == 2
    started = list(replay._ahead_folders)  # each child's scratch folder, made by the child
    assert len(started) == 2
    assert all(f.parent == Path(tempfile.gettempdir()) for f in started)
    replay.discard_ahead()
    assert not replay._ahead
    assert not any(folder.exists() for folder in started)
    result = session.replay().result  # played here, as without the children
    assert result is not None and result.steps


@needs_fork
def test_a_large_world_is_played_ahead_in_a_child_only(fresh: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A large world's original nights are played ahead only in the child, which holds up
    nobody's statements: the TUI's runner (`prepare`) plays none of them itself."""
    monkeypatch.setattr(replay, "_PREPARE_BYTES", 1000)
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path)
    assert len(replay._ahead) == 1 and len(replay._baselines_pending) == 1 + 3
    replay.discard_ahead()
    monkeypatch.setattr(replay, "_good_writes", _not_here)
    monkeypatch.setattr(replay, "_baseline", _not_here)
    replay.prepare(session)  # on the runner: nothing played, nothing fails


@needs_fork
def test_the_final_replay_takes_every_baseline_from_the_child_started_at_open(
        fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The practice nights' baselines (on the variant's clock and names, drawn for this
    session: never cached before it) are played ahead in the child too."""
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path / "ahead")
    assert len(replay._baselines_pending) == 1 + 3  # tonight's, 3 practice
    waited = time.monotonic()  # the child done (else the replay plays what it has not begun)
    while time.monotonic() - waited < 60 and len(_baselines_kept(fresh / "normal-nights")) < 4:
        time.sleep(0.02)
    played_here: list[str] = []
    monkeypatch.setattr(replay_cache, "keep_baseline", lambda key, known: played_here.append(key))
    result = session.replay(final=True).result
    assert result is not None
    assert played_here == []
    practice = [h for h in result.harms if h.practice]
    assert len({h.practice for h in practice}) == 3 and any(h.baseline for h in practice)


@needs_fork
def test_the_variants_nights_start_only_once_the_team_changes_its_race(
        fresh: Path, tmp_path: Path) -> None:
    """They judge a step prevented or a harm kept away, which a race the team did not change
    (the exercise's own schema and statements) cannot have: a team that reads, writes rows
    and waits never plays them; a guard starts them, once."""
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path)
    assert len(replay._ahead_started) == 1 and len(replay._baselines_pending) == 1 + 3
    session.execute("responder", "SELECT count(*) FROM endpoint")
    session.execute("responder", "UPDATE endpoint SET updated_by = 'responder'")
    session.advance_to(session.minute + 30)  # the automation's writes: its own race's too
    assert len(replay._ahead_started) == 1 and len(replay._baselines_pending) == 1 + 3
    session.execute("responder", "CREATE INDEX plan_by_time ON plan (created_at)")
    session.execute("responder", "DROP INDEX plan_by_time")
    assert len(replay._ahead_started) == 2 and len(replay._baselines_pending) == 1 + 3 + 1
    assert len(replay._ahead) == 2  # tonight's normal night, the variant's


def test_a_session_opened_without_ahead_starts_nothing(fresh: Path, tmp_path: Path) -> None:
    """The TUI opens with `ahead=False` and starts the nights once its screen is drawn."""
    open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path, ahead=False)
    assert not replay._ahead and not replay._baselines_pending and not replay._ahead_started
