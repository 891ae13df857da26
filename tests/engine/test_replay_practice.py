"""The replay's practice nights: a team that changed nothing the nights read (no schema
object, no statement) has its practice nights scored from the exercise's own (its
baselines) without playing them; a team that changed something has them played. Either way
the harms the replay reports are the ones playing them gives."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

import pytest

from raceday.engine import aside, replay, replay_cache
from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.replay_exercises import exercise_digest, practiced
from raceday.engine.session import Session
from raceday.exercise.model import Exercise, ShiftSpec
from raceday.judge.variant import draw
from raceday.transcript.verdicts import HarmNight

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each practice night of the team played (in this process or a child: children are
    switched off), by its exercise's first changed task; nothing remembered from earlier."""
    monkeypatch.setattr(aside, "_enabled", [False])
    monkeypatch.setattr(replay, "_practice_known", OrderedDict())
    monkeypatch.setattr(replay, "_played", OrderedDict())
    monkeypatch.setattr(replay, "_nights_known", OrderedDict())
    played: list[str] = []
    real = replay.play_night

    def play_night(kind, exercise: Exercise, world, folder: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if folder.name == "race" and folder.parent.name.startswith("practice-"):
            played.append(folder.parent.name.removeprefix("practice-"))
        return real(kind, exercise, world, folder, *args, **kwargs)

    monkeypatch.setattr(replay, "play_night", play_night)
    return played


def _session(tmp_path: Path, name: str) -> Session:
    return open_session(load_exercise(FLAGSHIP), ("responder",), tmp_path / name)


def _practice(harms: tuple[HarmNight, ...]) -> list[HarmNight]:
    return [h for h in harms if h.practice]


def _played_anyway(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the exercise's own world were another: every practice night is played."""
    monkeypatch.setattr(replay, "_own_world", lambda exercise: "not the team's world")


@pytest.mark.parametrize("data_only", [False, True])
def test_a_team_that_changed_nothing_the_nights_read_plays_no_practice_night(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[str],
        data_only: bool) -> None:
    session = _session(tmp_path, "unchanged")
    if data_only:  # rows written are not the replay's: it starts from the seed rows
        [result] = session.execute("responder", "UPDATE endpoint SET updated_by = 'me'")
        assert result.ok and result.rowcount
    skipped = replay.replay_race(session, reveal=True)  # the times shown, as at the end
    assert counted == []
    assert len(_practice(skipped.harms)) >= 3  # every practice night's harms still reported

    _played_anyway(monkeypatch)
    played = replay.replay_race(session, reveal=True)
    assert sorted(counted) == sorted(n.id for n in session.exercise.replay.practice)  # type: ignore[union-attr]
    assert played.harms == skipped.harms  # minutes, baselines, first times: all the same
    assert any(h.minutes and h.first_at for h in _practice(played.harms))  # and say something


@pytest.mark.parametrize("change", [
    "CREATE INDEX endpoint_by_plan ON endpoint (active_plan_id)",  # any schema object
    "CREATE TABLE notes (note TEXT)",
])
def test_a_schema_change_has_every_practice_night_played(
        tmp_path: Path, counted: list[str], change: str) -> None:
    session = _session(tmp_path, "schema")
    [result] = session.execute("responder", change)
    assert result.ok, result.error
    assert session.replay().result is not None
    assert sorted(counted) == sorted(n.id for n in session.exercise.replay.practice)  # type: ignore[union-attr]


def test_an_edited_statement_has_every_practice_night_played(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[str]) -> None:
    session = _session(tmp_path, "edited")
    apply = session.statement_sql["enactor-a-apply"]
    edit = session.edit_statement("responder", "enactor-a-apply", apply + " ")  # a space more
    assert edit.kind == "edit", edit
    edited = session.replay().result
    assert edited is not None
    assert sorted(counted) == sorted(n.id for n in session.exercise.replay.practice)  # type: ignore[union-attr]


def test_the_flagships_practice_baselines_are_the_same_on_every_variant(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The debrief sets each practice night beside its baseline (the exercise's own night with
    # the practice change, on the session's variant: another clock, other names). Its figures
    # are the same whichever variant a session drew, so the same play reads the same from one
    # session to the next; and a baseline kept once per exercise would be the one every
    # session plays now (stop 45's note: the largest share of a headless night left).
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    monkeypatch.setenv("RACEDAY_CACHE_DIR", "")  # every baseline played, none read back
    exercise = load_exercise(FLAGSHIP)
    rules = exercise.replay
    assert rules is not None and rules.shifted is not None
    shifted = rules.shifted
    until = rules.until if rules.until is not None else exercise.clock.length_minutes

    def baselines(shift: ShiftSpec | None) -> dict[str, object]:
        return {night.id: replay._baseline(Session, practiced(exercise, night, shift), until, "")
                for night in rules.practice}

    drawn = [draw(shifted, seed) for seed in range(1, 9)]
    assert len({(d.clock, d.swapped) for d in drawn}) == 8  # eight other nights
    unshifted = baselines(None)
    assert unshifted["lost-write"]["empty-answer"][0] > 0  # type: ignore[index]
    for shift in drawn:
        assert baselines(shift) == unshifted, shift


def test_baselines_said_to_be_the_same_on_every_variant_are_played_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The flagship says `practice_baselines: once` (and `raceday check` holds it to that):
    # the first session plays each practice night's baseline on the unshifted night and keeps
    # it; a session that draws another variant reads it back and plays none, and its debrief
    # reads the same figures. An exercise that does not say it plays its own every session.
    monkeypatch.setattr(aside, "_enabled", [False])
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    played: list[Exercise] = []
    real = replay.play_baseline

    def play_baseline(kind, exercise: Exercise, *args):  # type: ignore[no-untyped-def]
        if any(task.changes for task in exercise.tasks):  # a practice night's copy
            played.append(exercise)
        return real(kind, exercise, *args)

    monkeypatch.setattr(replay, "play_baseline", play_baseline)

    def session_with(exercise: Exercise, seed: str) -> tuple[int, list[HarmNight]]:
        monkeypatch.setenv("RACEDAY_SEED", seed)
        played.clear()
        session = open_session(exercise, ("responder",), tmp_path / seed)
        try:
            assert session.variant is not None
            harms = _practice(replay.replay_race(session, reveal=True).harms)
        finally:
            session.close()
        return len(played), harms

    exercise = load_exercise(FLAGSHIP)
    assert exercise.replay is not None and exercise.replay.practice_baselines == "once"
    nights = len(exercise.replay.practice)
    first, harms = session_with(exercise, "1")
    assert first == nights
    assert {exercise_digest(e) for e in played} == {  # on the unshifted night
        exercise_digest(practiced(exercise, night)) for night in exercise.replay.practice}
    again, other = session_with(exercise, "2")
    assert again == 0
    assert [(h.harm, h.minutes, h.baseline) for h in other] == [
        (h.harm, h.minutes, h.baseline) for h in harms]

    each = replace(exercise, replay=replace(exercise.replay, practice_baselines="per-variant"))
    assert session_with(each, "3")[0] == nights
    assert session_with(each, "4")[0] == nights  # another variant: played again
