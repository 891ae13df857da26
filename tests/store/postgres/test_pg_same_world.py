"""A team that changed neither the schema nor a statement has practice nights that are their
baselines, move for move: on PostgreSQL, as on SQLite, the final replay does not play them
again (each is a forked world and a night on the server), and the verdicts are the same as
when it did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from race_nights import counted_race_nights

from raceday.engine import replay_cache, replay_postgres
from raceday.engine.actions import RunSql
from raceday.engine.headless import open_session, run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.replay_postgres import schema_digest
from raceday.engine.script import load_script
from raceday.exercise.postgres import for_postgres
from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

FLAGSHIP = "dynamodb-dns-race"
NOTHING = Path(__file__).resolve().parents[3] / "exercises" / FLAGSHIP / "scripts" / "nothing.yaml"


def test_worlds_built_from_one_sql_have_one_schema_digest_until_the_team_adds_a_guard(
        pg_dsn: str, tmp_path: Path) -> None:
    exercise = for_postgres(load_named_exercise(FLAGSHIP))
    first = PostgresStore.create(pg_dsn, exercise.world_sql, exercise.roles)
    try:
        own = schema_digest(first.fork_source())
    finally:
        first.drop()
    session = open_session(load_named_exercise(FLAGSHIP), ("responder",), tmp_path, db=pg_dsn,
                           ahead=False)
    try:
        store = session.store
        assert isinstance(store, PostgresStore)
        session.perform(RunSql(role="responder", sql="SELECT name FROM endpoint"))
        session.advance_to(session.minute + 30)  # the automation's rows: not the schema
        assert schema_digest(store.fork_source()) == own  # another session, another prefix
        session.perform(RunSql(role="responder",
                               sql="CREATE INDEX endpoint_by_plan ON endpoint (active_plan_id)"))
        assert schema_digest(store.fork_source()) != own
    finally:
        session.end("aborted")
        session.close()


def _practice(tmp_path: Path, pg_dsn: str) -> tuple[Path, tuple[object, ...]]:
    exercise = load_named_exercise(FLAGSHIP)
    session, _ = run_script(exercise, load_script(NOTHING, exercise), tmp_path, db=pg_dsn)
    assert session.final_replay is not None
    practice = tuple(h for h in session.final_replay.harms if h.practice)
    assert practice, "the flagship's final replay judges its practice nights"
    return session.folder, practice


def test_a_team_that_changed_nothing_plays_no_practice_night_of_its_own(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replay_cache, "worlds_known", {})  # the own world's digest made afresh
    folder, practice = _practice(tmp_path / "kept", pg_dsn)
    assert not list((folder / "replay").glob("*/practice-*/race"))  # none forked, none played

    # the same session with every practice night played: the same verdicts
    monkeypatch.setattr(replay_postgres, "_same_as_own", lambda *args: False)
    folder, played = _practice(tmp_path / "played", pg_dsn)
    assert list((folder / "replay").glob("*/practice-*/race"))
    assert practice == played


def test_a_team_that_changed_nothing_has_the_exercises_own_race_night_kept(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As on SQLite (tests/engine/test_replay_own_race.py): the first such session plays its
    # race night on the server and keeps it; the next reads it back, and reads the same.
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    raced = counted_race_nights(monkeypatch, replay_postgres, "_played_pg")
    exercise = load_named_exercise(FLAGSHIP)
    replays = []
    for name in ("first", "second"):
        session, _ = run_script(exercise, load_script(NOTHING, exercise), tmp_path / name,
                                db=pg_dsn)
        assert session.final_replay is not None
        replays.append((session.folder, session.final_replay))
    assert len(raced) == 1  # the second read it back
    (one_folder, one), (two_folder, two) = replays
    assert one.steps == two.steps and one.steps and one.fault_at == two.fault_at
    assert [h for h in one.harms if not h.practice] == [h for h in two.harms if not h.practice]
    kept = two_folder / two.folder / "race" / "events.jsonl"
    assert kept.read_bytes() == (one_folder / one.folder / "race" / "events.jsonl").read_bytes()


def test_a_team_that_changed_nothing_has_the_exercises_normal_nights_kept_and_forks_nothing(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As on SQLite (tests/engine/test_replay_own_normal.py): the first such session plays its
    # normal night on the server and keeps what the replay reads of it; the next reads it
    # back, and, its race night known too, forks no world at all in its final replay.
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    normal: list[Path] = []
    forks: list[Path] = []
    play, fork = replay_postgres._played_pg, replay_postgres._fork

    def counted(kind: Any, exercise: Any, world: Any, folder: Path, *args: Any,
                **kwargs: Any) -> Any:
        if folder.name == "normal-team":
            normal.append(folder)
        return play(kind, exercise, world, folder, *args, **kwargs)

    def forked(*args: Any, **kwargs: Any) -> Any:
        forks.append(Path())
        return fork(*args, **kwargs)

    monkeypatch.setattr(replay_postgres, "_played_pg", counted)
    monkeypatch.setattr(replay_postgres, "_fork", forked)
    exercise = load_named_exercise(FLAGSHIP)
    replays = []
    for name in ("first", "second"):
        forks.clear()
        session, result = run_script(exercise, load_script(NOTHING, exercise), tmp_path / name,
                                     db=pg_dsn)
        assert session.final_replay is not None
        replays.append((session.final_replay, result))
    assert len(normal) == 1  # the second read it back
    assert forks == []  # and forked neither the race's world nor the normal night's
    (one, one_result), (two, two_result) = replays
    assert (one.blocked_good_writes, one.monitor_checks, one.normal_harms) == (
        two.blocked_good_writes, two.monitor_checks, two.normal_harms)
    assert one_result["total"] == two_result["total"]
