"""Fixtures for team play: a host in the test's own thread, seats with known tokens."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from team_fixtures import TOKENS, make_host

import raceday.engine.headless as headless
from raceday.engine.load import load_named_exercise
from raceday.exercise.model import Exercise
from raceday.team.host import Host
from raceday.transcript.log import session_folder

FIXED_NOW = datetime(2025, 10, 20, 6, 48, 0)


@pytest.fixture(autouse=True)
def fixed_session_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)

    def fixed(root: Path, exercise_id: str, now: datetime | None = None) -> Path:
        return session_folder(root, exercise_id, now or FIXED_NOW)

    monkeypatch.setattr(headless, "session_folder", fixed)


@pytest.fixture(scope="session")
def flagship() -> Exercise:
    return load_named_exercise(str(Path(__file__).parents[2] / "exercises" / "dynamodb-dns-race"))


@pytest.fixture
def host(flagship: Exercise, tmp_path: Path) -> Iterator[Host]:
    made = make_host(flagship, tmp_path / "transcripts")
    yield made
    made.close()


@pytest.fixture
def running(host: Host) -> Iterator[Host]:
    """The host pumping in a thread of its own, as `raceday host` runs it."""
    stop = threading.Event()
    thread = threading.Thread(target=host.run, args=(stop,), daemon=True)
    thread.start()
    yield host
    stop.set()
    thread.join(timeout=5)


__all__ = ["TOKENS"]
