"""Both bundled exercises play on PostgreSQL: each reference play has the same night there.

A play whose guards are SQLite's own (a trigger, a rebuilt table) has a PostgreSQL twin in
the exercise's scripts/postgres/; the others play as they are, with the exercise's
postgres.yaml variant applied to its world and SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from raceday.engine.headless import run_script
from raceday.engine.script import load_script
from raceday.engine.session import Session
from raceday.exercise.catalog import BUNDLED_DIR
from raceday.store.postgres.store import drop_world
from raceday.transcript import events as ev

pytestmark = pytest.mark.postgres

# Every play of the onboarding exercise; of the flagship's (three simulated hours each), the
# ones that cover its story: the night as it happened, a person's care, the guards (twins).
FLAGSHIP = ("as-it-happened", "enactor-a-refuses", "guarded", "textbook")
PLAYS = [("lost-update-basics", p) for p in
         sorted((BUNDLED_DIR / "lost-update-basics" / "scripts").glob("*.yaml"))]
PLAYS += [("dynamodb-dns-race", BUNDLED_DIR / "dynamodb-dns-race" / "scripts" / f"{p}.yaml")
          for p in FLAGSHIP]
# What only the end of the session says: the replay, the score.
AFTER_THE_NIGHT = (ev.Replay, ev.ScoreEvent)


def _twin(path: Path) -> Path:
    twin = path.parent / "postgres" / path.name
    return twin if twin.exists() else path


def _night(session: Session) -> list[tuple[Any, ...]]:
    """What happened, as both databases must agree: each event's kind, time, who, outcome.

    A player's own statements are left out: a twin says in one ALTER TABLE what SQLite says
    in four statements. What the automation did, and what it met, is compared whole.
    """
    return [
        (type(e).__name__, e.minute, getattr(e, "role", None), getattr(e, "ok", None),
         getattr(e, "rowcount", None), getattr(e, "rows", None), getattr(e, "error_kind", None),
         getattr(e, "invariant", None), getattr(e, "id", None), getattr(e, "task", None))
        for e in session.events if not isinstance(e, AFTER_THE_NIGHT)
        and not (isinstance(e, ev.Statement) and not e.automated)
    ]


def _play(pg_dsn: str, tmp_path: Path, name: str, path: Path) -> tuple[Session, Session, dict[str, Any],
                                                                          dict[str, Any]]:
    from raceday.commands import load_named_exercise

    exercise = load_named_exercise(name)
    on_sqlite, sqlite_score = run_script(exercise, load_script(path, exercise), tmp_path / "sqlite")
    on_postgres, pg_score = run_script(exercise, load_script(_twin(path), exercise), tmp_path / "pg",
                                       db=pg_dsn)
    drop_world(pg_dsn, (on_postgres.folder / "world.postgres").read_text().strip())
    return on_sqlite, on_postgres, sqlite_score, pg_score


@pytest.mark.parametrize("name, path", PLAYS, ids=[f"{n}/{p.stem}" for n, p in PLAYS])
def test_a_reference_play_has_the_same_night_on_postgresql(
    pg_dsn: str, tmp_path: Path, name: str, path: Path
) -> None:
    on_sqlite, on_postgres, sqlite_score, pg_score = _play(pg_dsn, tmp_path, name, path)
    assert not [e for e in on_postgres.events if isinstance(e, ev.CheckFailed)]
    assert _night(on_postgres) == _night(on_sqlite)
    # and the score is the same, the guards judged by the replay on each database's own
    # replay worlds (PostgreSQL schemas forked from the session's on the same server)
    assert _same(pg_score) == _same(sqlite_score)


WORDS = {"session", "reasons", "detail", "why"}
"""What may differ: the session's folder, and sentences that quote the database's own error
(SQLite's `CHECK constraint failed: ...`, PostgreSQL's `new row for relation ... violates`)."""


def _same(score: Any) -> Any:
    """A score as both databases must give it: every figure, status, time and id."""
    if isinstance(score, dict):
        return {k: [{**_same(b), "outcome": None} for b in v] if k == "blocked_good_writes"
                else _same(v) for k, v in score.items() if k not in WORDS}
    if isinstance(score, list):
        return [_same(v) for v in score]
    return score


def test_the_flagship_textbook_play_scores_the_same_on_postgresql(pg_dsn: str, tmp_path: Path) -> None:
    path = BUNDLED_DIR / "dynamodb-dns-race" / "scripts" / "textbook.yaml"
    _, _, sqlite_score, pg_score = _play(pg_dsn, tmp_path, "dynamodb-dns-race", path)
    assert pg_score["total"] == sqlite_score["total"]
    assert pg_score["guards"]["prevented"] == sqlite_score["guards"]["prevented"] != []
