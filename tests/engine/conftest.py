"""Engine fixtures: sessions on the tiny exercise, closed after each test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from engine_fixtures import tiny_exercise

from raceday.engine.headless import open_session
from raceday.engine.session import Session
from raceday.exercise.model import Exercise


@pytest.fixture
def make_session(tmp_path: Path) -> Iterator[Callable[..., Session]]:
    made: list[Session] = []

    def make(exercise: Exercise | None = None, players: tuple[str, ...] = ("operator",)) -> Session:
        session = open_session(exercise or tiny_exercise(), players, tmp_path / "transcripts")
        made.append(session)
        return session

    yield make
    for session in made:
        if not session.ended:
            session.end()
