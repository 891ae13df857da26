"""A team that changed nothing the replay reads (its schema and statements are the
exercise's) has the exercise's own race night in its final replay, move for move: the first
such session plays it and keeps it per exercise; later ones read it back and score the same.
A team that changed something, and a replay the team will walk, play theirs."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest
from race_nights import counted_race_nights

from raceday.engine import aside, replay, replay_cache
from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.session import Session
from raceday.transcript.log import read_events

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"


@pytest.fixture
def races(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each race night played on a team's replay world (not a practice or variant night),
    by its folder; a cache folder of this test's own, nothing remembered in this process."""
    monkeypatch.setattr(aside, "_enabled", [False])
    monkeypatch.setattr(replay, "_played", OrderedDict())
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    return counted_race_nights(monkeypatch, replay, "play_night")


def _ended(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch,
           *sql: str) -> Session:
    monkeypatch.setenv("RACEDAY_SEED", str(len(name)))  # another variant each session
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path / name)
    for statement in sql:
        [result] = session.execute("responder", statement)
        assert result.ok, result.error
    session.end()
    return session


def _race_events(session: Session) -> list[tuple[str, str, str]]:
    assert session.final_replay is not None
    race = session.folder / session.final_replay.folder / "race"
    return [(e.kind, e.sim_time, getattr(e, "sql", "")) for e in read_events(race).events]


def test_an_unchanged_teams_race_night_is_played_once_per_exercise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, races: list[Path]) -> None:
    recovered = "UPDATE endpoint SET updated_by = 'me'"  # rows: not what the replay reads
    first = _ended(tmp_path, "first", monkeypatch, recovered)
    assert len(races) == 1
    second = _ended(tmp_path, "second-one", monkeypatch)
    assert len(races) == 1  # read back: not played
    one, two = first.final_replay, second.final_replay
    assert one is not None and two is not None
    assert one.steps == two.steps and one.fault_at == two.fault_at and one.steps
    assert [h for h in one.harms if not h.practice] == [h for h in two.harms if not h.practice]
    assert first.score is not None and second.score is not None
    guards, again = first.score.guards, second.score.guards
    assert guards is not None and again is not None and guards.points == again.points
    assert [(h.id, h.points, h.minutes) for h in guards.harms] == [
        (h.id, h.points, h.minutes) for h in again.harms]
    assert _race_events(first) == _race_events(second)  # its transcript, for a later walk
    assert len(_race_events(second)) > 100


def test_a_changed_schema_or_a_walked_replay_plays_its_own_race(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, races: list[Path]) -> None:
    _ended(tmp_path, "first", monkeypatch)
    assert len(races) == 1
    guarded = _ended(tmp_path, "guarded", monkeypatch,
                     "CREATE TRIGGER never_empty BEFORE DELETE ON plan "
                     "WHEN OLD.id IN (SELECT active_plan_id FROM endpoint) "
                     "BEGIN SELECT RAISE(ABORT, 'plan in use'); END")
    assert len(races) == 2  # a trigger: the team's own night
    assert guarded.final_replay is not None
    assert any(h.minutes < h.baseline for h in guarded.final_replay.harms)  # and its harms

    monkeypatch.setenv("RACEDAY_SEED", "5")
    walked = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path / "walked")
    try:
        result = walked.replay()  # ctrl+r: walked afterwards, its world kept
        assert result.result is not None
        assert len(races) == 3
        assert (walked.folder / result.result.folder / "race.db").exists()
    finally:
        walked.close()
