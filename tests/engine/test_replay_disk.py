"""Replays leave no world copies behind: only the newest replay's race world stays (the
replay walk reads it) until the next replay or the end of the session."""

from __future__ import annotations

from pathlib import Path

from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise

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
