"""The isolation lab's plays: headless, on SQLite always and on PostgreSQL when a server is
given in RACEDAY_TEST_PG_DSN (tests that need it skip with the reason otherwise)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab import EXERCISE, SCRIPTS, Play
from postgres_server import server_or_skip

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.engine.session import Session


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    return server_or_skip()


@pytest.fixture
def play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Play]:
    """Play a script (a name in the exercise's scripts/, or a path) on SQLite, or on the
    PostgreSQL server `db`; the world schema it made there is kept for the test to read
    (a session drops it at its end otherwise) and dropped afterwards."""
    made: list[tuple[str, Session]] = []
    monkeypatch.setenv("RACEDAY_KEEP_WORLD", "1")

    def run(script: str | Path, db: str | None = None) -> tuple[Session, dict[str, Any]]:
        exercise = load_exercise(EXERCISE)
        path = script if isinstance(script, Path) else SCRIPTS / f"{script}.yaml"
        session, result = run_script(exercise, load_script(path, exercise),
                                     tmp_path / f"t{len(made)}", db=db)
        if db is not None:
            made.append((db, session))
        return session, result

    yield run
    if not made:
        return
    from raceday.store.postgres.world import drop_world

    for db, session in made:
        drop_world(db, (session.folder / "world.postgres").read_text().split()[0])
