"""The replay's normal nights, played in a forked child while the race plays here, say what
they say when played here: with the child, without it, and when the child dies half-way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from raceday.engine import aside, night, replay, replay_cache
from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript.events import Replay

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
HERE = os.getpid()
FORKS = hasattr(os, "fork") and aside._cores() >= 2


@pytest.fixture(autouse=True)
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """On, whatever an earlier test in this process did (a team host switches it off)."""
    monkeypatch.setattr(aside, "_enabled", [True])


def _guarded_replay(folder: Path) -> Replay:
    """replay-guarded.yaml up to its replay: guards that block a step and a good write, so
    both races and all four normal nights play."""
    from raceday.engine.headless import play_step
    exercise = load_exercise(FLAGSHIP)
    script = load_script(FLAGSHIP / "scripts" / "replay-guarded.yaml", exercise)
    session = open_session(exercise, script.roles, folder)
    for step in script.steps:
        if step.action == "replay":
            break
        play_step(session, step, "test")
    # and one guard too many: it blocks the normal night's good writes too
    [result] = session.execute("responder", "CREATE TRIGGER frozen BEFORE DELETE ON plan "
                                            "BEGIN SELECT RAISE(ABORT, 'frozen'); END")
    assert result.ok, result.error
    event = session.replay()
    assert event.result is not None
    return event


def _forget(monkeypatch: pytest.MonkeyPatch) -> None:
    """No night played, nor good writes nor nights known, in this process (until the test ends)."""
    for memo in ("_played", "_nights_known", "_practice_known"):
        monkeypatch.setattr(replay, memo, type(getattr(replay, memo))())
    monkeypatch.setattr(replay_cache, "good_known", {})


@pytest.fixture
def nothing_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """No night already played in this process, none cached on disk."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", "")
    _forget(monkeypatch)


@pytest.mark.skipif(not FORKS, reason="needs os.fork and two cores")
def test_a_child_or_none_the_replay_says_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nothing_known: None) -> None:
    played_here: list[str] = []
    real = replay.play_night

    def counted(kind, exercise, world, folder, *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.getpid() == HERE:
            played_here.append(folder.name)
        return real(kind, exercise, world, folder, *args, **kwargs)

    monkeypatch.setattr(replay, "play_night", counted)
    forked = _guarded_replay(tmp_path / "forked")
    # tonight's race and the variant's here; the four normal nights and the three practice
    # nights were played in children
    assert played_here == ["race"] * 2
    assert forked.result is not None and forked.result.blocked_good_writes  # and said something
    assert any(s.status == "prevented" for s in forked.result.steps)  # the shifted race too
    monkeypatch.setattr(aside, "_enabled", [False])
    _forget(monkeypatch)
    played_here.clear()
    here = _guarded_replay(tmp_path / "here")
    assert sorted(played_here) == ["normal-original"] * 2 + ["normal-team"] * 2 + ["race"] * 5
    assert here.result == forked.result
    assert not list(tmp_path.rglob("normal-nights")) + list(tmp_path.rglob("original-night*"))
    # a world too large for a copy per night on disk at once: played here, one after another
    monkeypatch.setattr(aside, "_enabled", [True])
    monkeypatch.setattr(replay, "_FORK_BYTES", 1000)
    _forget(monkeypatch)
    played_here.clear()
    large = _guarded_replay(tmp_path / "large")
    # (the original world's normal nights may be the child's, started when the session opened)
    assert sorted(n for n in played_here if n != "normal-original") == \
        ["normal-team"] * 2 + ["race"] * 5
    assert large.result == forked.result


@pytest.mark.skipif(not FORKS, reason="needs os.fork and two cores")
def test_a_child_that_dies_mid_night_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nothing_known: None) -> None:
    monkeypatch.setattr(aside, "_enabled", [False])
    expected = _guarded_replay(tmp_path / "here")
    monkeypatch.setattr(aside, "_enabled", [True])
    _forget(monkeypatch)
    real = night.play_on

    def dying(*args, **kwargs):  # type: ignore[no-untyped-def]
        session = real(*args, **kwargs)
        if os.getpid() != HERE:
            os._exit(9)  # the child dies after playing a night, its world half-used
        return session

    monkeypatch.setattr(replay, "play_on", dying)
    got = _guarded_replay(tmp_path / "died")
    assert got.result == expected.result
    assert not list(tmp_path.rglob("normal-nights")) + list(tmp_path.rglob("original-night*"))


def test_the_same_nights_asked_again_are_not_played_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nothing_known: None) -> None:
    """ctrl+r twice on an unchanged world: the second answer is the first, at once."""
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path)
    first = session.replay()
    calls: list[int] = []
    monkeypatch.setattr(replay, "_team_night",
                        lambda *a, **k: calls.append(1) or ({}, ()))  # type: ignore[func-returns-value]
    second = session.replay()
    assert calls == []
    assert first.result is not None and second.result is not None
    assert first.result.blocked_good_writes == second.result.blocked_good_writes
    assert first.result.monitor_checks == second.result.monitor_checks
