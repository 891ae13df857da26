"""The end-of-night replay on PostgreSQL: its worlds are schemas forked on the session's
server and dropped once played, cheats earn there what they earn on SQLite, and a finished
session leaves nothing on the server unless it is asked to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pg_fixtures import on_server
from reference_plays import ReferencePlays

from raceday.engine.headless import open_session, run_script
from raceday.engine.replaywalk import load_walk
from raceday.engine.script import load_script
from raceday.exercise.catalog import BUNDLED_DIR
from raceday.store import KEEP_VARIABLE
from raceday.store.postgres.world import drop_world

pytestmark = pytest.mark.postgres

PLAYS = Path(__file__).resolve().parent / "plays"
HONEST = Path(__file__).resolve().parents[2] / "scenarios" / "honest"


def _score(name: str, script: Path, tmp_path: Path, db: str | None) -> tuple[Path, dict[str, Any]]:
    from raceday.engine.load import load_named_exercise

    exercise = load_named_exercise(name)
    session, score = run_script(exercise, load_script(script, exercise), tmp_path, db=db)
    return session.folder, score


# (exercise, the play: plays/ on PostgreSQL, tests/scenarios/honest/ on SQLite; words the
# reasons must hold)
CHEATS = [
    ("dynamodb-dns-race", "drop-endpoint", "table endpoint is gone"),
    ("dynamodb-dns-race", "never-plan-140", "in the variant night"),
    ("dynamodb-dns-race", "ban-enactor-a", "so they stop the service doing its job"),
    ("lost-update-basics", "lub-noop-save", "b-save-on-time"),
]


@pytest.mark.parametrize(("name", "play", "words"), CHEATS, ids=[c[1] for c in CHEATS])
def test_a_cheat_earns_on_postgresql_what_it_earns_on_sqlite(
    pg_dsn: str, tmp_path: Path, name: str, play: str, words: str, reference_play: ReferencePlays
) -> None:
    on_sqlite = reference_play(name, HONEST / f"{play}.yaml").result  # the golden transcript's
    folder, on_pg = _score(name, PLAYS / f"{play}.yaml", tmp_path / "pg", pg_dsn)
    on_pg = json.loads(json.dumps(on_pg))  # as `raceday run --json` printed the SQLite one
    assert on_pg["guards"]["points"] == on_sqlite["guards"]["points"] == 0
    assert on_pg["total"] == on_sqlite["total"] <= 10
    assert any(words in r for r in on_pg["reasons"]), on_pg["reasons"]
    # each race step's fate alike (the detail quotes each database's own error)
    assert [{**s, "detail": None} for s in on_pg["guards"]["steps"]] == [
        {**s, "detail": None} for s in on_sqlite["guards"]["steps"]]


def test_replay_worlds_are_dropped_and_the_walk_reads_the_newest(pg_dsn: str, tmp_path: Path) -> None:
    from raceday.engine.load import load_named_exercise

    exercise = load_named_exercise("lost-update-basics")
    session = open_session(exercise, ("operator",), tmp_path, db=pg_dsn)
    world = session.folder.joinpath("world.postgres").read_text().split()[0]
    try:
        first = session.replay()
        second = session.replay()
        assert first.result is not None and second.result is not None
        assert first.result.steps == second.result.steps
        one, two = (session.folder / "replay" / str(n) / "race.postgres" for n in (1, 2))
        assert not one.exists()  # the first replay's world went when the second was played
        kept = two.read_text().strip()
        assert on_server(pg_dsn, one.parent.name) == []
        assert on_server(pg_dsn, kept) != []
        walk = load_walk(session.exercise, second, session.folder)
        assert walk.error is None and walk.final_world is not None  # read from the kept schema
        session.end()
        # the final replay keeps no world; the session's own goes at its end
        assert on_server(pg_dsn, kept) == []
        assert on_server(pg_dsn, world) == []
        assert "dropped" in (session.folder / "world.postgres").read_text()
    finally:
        drop_world(pg_dsn, world)


def test_a_session_asked_to_keep_its_world_keeps_it(pg_dsn: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEEP_VARIABLE, "1")
    script = BUNDLED_DIR / "lost-update-basics" / "scripts" / "postgres" / "no-guards.yaml"
    folder, _ = _score("lost-update-basics", script, tmp_path, pg_dsn)
    world = (folder / "world.postgres").read_text().split()[0]
    try:
        left = on_server(pg_dsn, world)
        assert f"rd_{world}_world" in left and "kept" in (folder / "world.postgres").read_text()
    finally:
        drop_world(pg_dsn, world)
    assert on_server(pg_dsn, world) == []


def test_the_normal_night_is_cached_per_database(pg_dsn: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The same exercise plays each database's own dialect: each has its own cached night."""
    from raceday.engine import replay, replay_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    for memo in ("_played", "_nights_known"):  # known in this process: none
        monkeypatch.setattr(replay, memo, type(getattr(replay, memo))())
    monkeypatch.setattr(replay_cache, "good_known", {})
    script = BUNDLED_DIR / "lost-update-basics" / "scripts" / "no-guards.yaml"
    _score("lost-update-basics", script, tmp_path / "sqlite", None)
    nights = good_writes(cache)
    assert len(nights) == 1
    _score("lost-update-basics", script.parent / "postgres" / script.name, tmp_path / "pg", pg_dsn)
    assert len(good_writes(cache) - nights) == 1


def good_writes(cache: Path) -> set[Path]:
    """The normal nights' good writes kept on disk, each {"good": ...} (the race baselines and
    world fingerprints kept beside them are left out)."""
    return {p for p in (cache / "normal-nights").iterdir()
            if "good" in json.loads(p.read_text(encoding="utf-8"))}


def test_the_briefings_cheat_sheet_comes_from_the_server_play_uses(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`raceday play --db` leaves its server in RACEDAY_DB: the briefing's tables are the ones
    the exercise's PostgreSQL world has there, with PostgreSQL's own types."""
    from raceday.engine.load import load_named_exercise
    from raceday.engine.world_tables import describe_exercise_world
    from raceday.store import DB_VARIABLE

    exercise = load_named_exercise("dynamodb-dns-race")
    on_sqlite = describe_exercise_world(exercise)
    monkeypatch.setenv(DB_VARIABLE, pg_dsn)
    on_pg = describe_exercise_world(exercise)
    assert [(t.name, t.kind, [c.name for c in t.columns]) for t in on_pg] == [
        (t.name, t.kind, [c.name for c in t.columns]) for t in on_sqlite]
    endpoint = next(t for t in on_pg if t.name == "endpoint")
    assert {c.type for c in endpoint.columns} <= {"text", "integer"}
    assert next(t for t in on_sqlite if t.name == "endpoint").columns[0].type == "TEXT"


def test_a_team_script_plays_through_a_host_on_postgresql(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`raceday run --team --db`: the host's world on the server, scored as on SQLite."""
    import json

    from raceday.cli import main
    from raceday.store import DB_VARIABLE

    # main sets the server for the host in the environment: set here (empty: none) so that
    # it is undone after the test (delenv of an absent variable records nothing to undo)
    monkeypatch.setenv(DB_VARIABLE, "")
    monkeypatch.setenv(KEEP_VARIABLE, "")
    scripts = BUNDLED_DIR / "lost-update-basics" / "scripts"
    scores = []
    for script, db in ((scripts / "replay-all-guards.yaml", []),
                       (scripts / "postgres" / "replay-all-guards.yaml", ["--db", pg_dsn])):
        assert main(["run", "lost-update-basics", "--script", str(script), "--team", "--json",
                     "--transcripts", str(tmp_path), *db]) == 0
        scores.append(json.loads(capsys.readouterr().out))
    on_sqlite, on_pg = scores
    assert (Path(on_pg["session"]) / "world.postgres").exists()
    assert not (Path(on_sqlite["session"]) / "world.postgres").exists()
    assert on_pg["total"] == on_sqlite["total"] and on_pg["guards"]["points"] > 0
    world = (Path(on_pg["session"]) / "world.postgres").read_text().split()[0]
    assert on_server(pg_dsn, world) == []


def test_the_practice_nights_baselines_are_played_while_the_team_plays(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each practice night's baseline the cache does not hold (the first session's: the
    flagship's are then kept, the same on every variant) is played from the moment the
    session opens, and the final replay takes it rather than play it again at the end, where
    the team waits for its score."""
    import threading
    import time

    from raceday.engine import replay_cache, replay_postgres
    from raceday.engine.load import load_named_exercise
    from raceday.engine.night import replay_until
    from raceday.engine.replay_exercises import practice_baseline

    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replay_cache, "baselines_known", {})  # none known in this process:
    monkeypatch.setattr(replay_cache, "good_known", {})  # a test before may have the seed's
    played_in: list[str] = []
    play = replay_postgres._play_baseline_pg

    def counted(*args: Any) -> Any:
        played_in.append(threading.current_thread().name)
        return play(*args)

    monkeypatch.setattr(replay_postgres, "_play_baseline_pg", counted)
    session = open_session(load_named_exercise("dynamodb-dns-race"), ("responder",), tmp_path,
                           db=pg_dsn)
    exercise = session.exercise  # in PostgreSQL's dialect
    assert exercise.replay is not None and session.variant is not None
    keys = [replay_cache.baseline_key(type(session),
                                      practice_baseline(exercise, night, session.variant),
                                      replay_until(session), "", "postgresql")
            for night in exercise.replay.practice]
    waited = time.monotonic() + 120
    while any(replay_cache.baseline_cached(k) is None for k in keys):  # the team plays meanwhile
        assert time.monotonic() < waited, "the practice baselines were not played ahead"
        time.sleep(0.2)
    session.end()
    assert session.final_replay is not None and session.final_replay.harms
    assert {h.practice for h in session.final_replay.harms} >= {
        n.id for n in exercise.replay.practice}
    assert played_in and set(played_in) == {"replay-ahead"}  # none played at the end


def test_a_night_stopped_at_exit_leaves_no_baseline_behind(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that ends while a baseline is being played ahead (a run that quits within
    seconds of opening): exit closes that night's worlds, and what the rest of the night did
    not do is no answer. It was kept as one, in the process and in the cache folder, and
    every later session on the machine was told its guards kept away a harm that "never
    happened without them" (0 minutes of an empty answer, against the night's 87)."""
    import threading

    from raceday.engine import replay_cache, replay_postgres
    from raceday.engine.ahead_thread import AHEAD
    from raceday.engine.load import load_named_exercise
    from raceday.engine.night import play_on as play

    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replay_cache, "baselines_known", {})
    monkeypatch.setattr(replay_cache, "good_known", {})
    begun, closed = threading.Event(), []

    def stopped_first(kind: Any, exercise: Any, world: Any, *args: Any, **kwargs: Any) -> Any:
        begun.set()  # the night has its world: the test stops the thread now
        for _ in range(500):  # and it plays on once exit has closed that world
            if world.closed:
                break
            threading.Event().wait(0.01)
        closed.append(world.closed)
        return play(kind, exercise, world, *args, **kwargs)

    monkeypatch.setattr(replay_postgres, "play_on", stopped_first)
    session = open_session(load_named_exercise("dynamodb-dns-race"), ("responder",), tmp_path,
                           db=pg_dsn)
    try:
        assert begun.wait(60), "no night was played ahead"
        AHEAD.stop()  # what exit does (atexit), with the night begun
    finally:
        session.end("aborted")
        session.close()
    assert closed == [True]  # the night did play on, on a closed world
    assert replay_cache.baselines_known == {}
    assert replay_cache.good_known == {}
    kept = [p.name for p in (tmp_path / "cache").rglob("*.json") if "harms" in p.read_text()]
    assert kept == []


def test_the_variants_nights_start_only_once_the_team_changes_its_race(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The variant's baseline and normal night judge a step prevented or a harm kept away,
    which a team that changed neither its schema nor a statement cannot have: they are not
    played beside its night (on PostgreSQL they took a quarter of a headless night's time),
    and start the moment a player adds a guard."""
    from raceday.engine import replay_cache
    from raceday.engine.actions import RunSql
    from raceday.engine.ahead_thread import AHEAD
    from raceday.engine.load import load_named_exercise
    from raceday.engine.night import replay_until
    from raceday.engine.replay_exercises import variant_of

    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replay_cache, "baselines_known", {})  # none known in this process
    monkeypatch.setattr(replay_cache, "good_known", {})
    started: list[str] = []
    monkeypatch.setattr(AHEAD, "start", lambda key, job: started.append(key))
    session = open_session(load_named_exercise("dynamodb-dns-race"), ("responder",), tmp_path,
                           db=pg_dsn)
    try:
        assert session.variant is not None
        variant = replay_cache.baseline_key(
            type(session), variant_of(session.exercise, session.variant),
            replay_until(session), session.variant.seed, "postgresql")
        assert started and variant not in started  # tonight's and the practice nights' only
        session.perform(RunSql(role="responder", sql="SELECT count(*) FROM endpoint"))
        session.advance_to(session.minute + 20)  # the automation writes: not the team's race
        assert variant not in started
        session.perform(RunSql(role="responder",
                               sql="CREATE INDEX endpoint_by_plan ON endpoint (active_plan_id)"))
        assert started.count(variant) == 1
        session.perform(RunSql(role="responder", sql="DROP INDEX endpoint_by_plan"))
        assert started.count(variant) == 1
    finally:
        session.end("aborted")
        session.close()
