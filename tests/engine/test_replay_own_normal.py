"""A team that changed nothing the replay reads (its schema and statements are the
exercise's) has the exercise's normal nights in its final replay: the first such session
plays its normal night and keeps what the replay reads of it (the good writes refused, its
alerts run again, the harms of a night with no race) per exercise and alerts; later ones read
it back and are judged the same. A team that changed its schema, or alerts that are not the
same, play their own night."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest

from raceday.engine import aside, own_normal, replay, replay_cache
from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.session import Session
from raceday.transcript import events as ev

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
EMPTY_ANSWER = "SELECT e.name FROM endpoint AS e WHERE NOT EXISTS " \
               "(SELECT 1 FROM dns_answer AS a WHERE a.endpoint = e.name)"
TRIGGER = ("CREATE TRIGGER never_empty BEFORE DELETE ON plan "
           "WHEN OLD.id IN (SELECT active_plan_id FROM endpoint) "
           "BEGIN SELECT RAISE(ABORT, 'plan in use'); END")


@pytest.fixture
def normal_nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each team normal night played, by its folder; a cache folder of this test's own,
    nothing remembered in this process, every night played here (no child)."""
    monkeypatch.setattr(aside, "_enabled", [False])
    monkeypatch.setattr(replay, "_played", OrderedDict())
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    played: list[Path] = []
    real = replay.play_night

    def counted(kind, exercise, world, folder, *args, **kwargs):  # type: ignore[no-untyped-def]
        if folder.name == "normal-team" and "shifted" not in folder.parts:  # not a variant's
            played.append(folder)
        return real(kind, exercise, world, folder, *args, **kwargs)

    monkeypatch.setattr(replay, "play_night", counted)
    return played


def _ended(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, *,
           monitor: str = "dns-empty", sql: tuple[str, ...] = ()) -> Session:
    monkeypatch.setenv("RACEDAY_SEED", str(len(name)))  # another variant each session
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())  # as if another process
    session = open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path / name)
    saved = session.save_monitor("responder", monitor, EMPTY_ANSWER)
    assert not isinstance(saved, ev.Refused), saved
    for statement in sql:
        [result] = session.execute("responder", statement)
        assert result.ok, result.error
    session.advance_to(session.end_minute)  # the alert goes off in play
    session.end()
    return session


def _normal(session: Session) -> tuple[object, ...]:
    replayed = session.final_replay
    assert replayed is not None
    return replayed.blocked_good_writes, replayed.monitor_checks, replayed.normal_harms


def test_an_unchanged_teams_normal_night_is_played_once_per_exercise_and_alerts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normal_nights: list[Path]) -> None:
    first = _ended(tmp_path, "first", monkeypatch)
    assert len(normal_nights) == 1
    checks = first.final_replay.monitor_checks if first.final_replay else ()
    assert [c.name for c in checks] == ["dns-empty"]  # the alert, run again on that night
    assert checks[0].caused_by_fault  # no empty answer there: the fault's alert

    second = _ended(tmp_path, "second-one", monkeypatch)
    assert len(normal_nights) == 1  # read back: not played
    assert _normal(second) == _normal(first)
    assert first.score is not None and second.score is not None
    assert first.score.detection == second.score.detection

    other = _ended(tmp_path, "other-alert", monkeypatch, monitor="no-dns")
    assert len(normal_nights) == 2  # another alert: its own night
    assert [c.name for c in _normal(other)[1]] == ["no-dns"]  # type: ignore[attr-defined]


def test_a_changed_schema_plays_its_own_normal_night(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normal_nights: list[Path]) -> None:
    _ended(tmp_path, "first", monkeypatch)
    assert len(normal_nights) == 1
    _ended(tmp_path, "guarded", monkeypatch, sql=(TRIGGER,))
    assert len(normal_nights) == 2  # a trigger: the team's own night


def test_a_kept_answer_that_cannot_be_read_is_played_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normal_nights: list[Path]) -> None:
    first = _ended(tmp_path, "first", monkeypatch)
    [kept] = (tmp_path / "cache" / "own-normal-nights").glob("*.json")
    kept.write_text('{"blocked": [{"task": 1}]', encoding="utf-8")  # cut short
    again = _ended(tmp_path, "again", monkeypatch)
    assert len(normal_nights) == 2
    assert _normal(again) == _normal(first)
    assert own_normal.read_own_normal(kept.stem) == _normal(first)  # kept whole again
