"""Fixtures for driving the TUI with Pilot: fixed clocks, no blinking, no animation.

Time never comes from the wall: `FakeWall` is the only clock the app reads, and tests move
it by hand, then call the play screen's `tick()` themselves (no live intervals run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from textual.widgets import Input, TextArea  # noqa: E402
from tui_fixtures import DATA, FakeWall, MakeApp  # noqa: E402

import raceday.engine.headless as headless  # noqa: E402
from raceday.engine.clock import Pace  # noqa: E402
from raceday.engine.load import (
    load_exercise,  # noqa: E402
    load_named_exercise,  # noqa: E402
)
from raceday.exercise.model import Exercise  # noqa: E402
from raceday.transcript.log import session_folder  # noqa: E402
from raceday.tui.app import RacedayApp  # noqa: E402
from raceday.tui.settings import Settings  # noqa: E402

FIXED_NOW = datetime(2025, 10, 20, 6, 48, 0)


@pytest.fixture(autouse=True)
def still_cursors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TextArea, "cursor_blink", False)
    monkeypatch.setattr(Input, "cursor_blink", False)


@pytest.fixture(autouse=True)
def fixed_session_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Sessions land in ./transcripts of a fresh folder, named as at a fixed moment."""
    monkeypatch.chdir(tmp_path)

    def fixed(root: Path, exercise_id: str, now: datetime | None = None) -> Path:
        return session_folder(root, exercise_id, now or FIXED_NOW)

    monkeypatch.setattr(headless, "session_folder", fixed)


@pytest.fixture(scope="session")
def flagship() -> Exercise:
    return load_named_exercise(str(Path(__file__).parents[2] / "exercises" / "dynamodb-dns-race"))


@pytest.fixture(scope="session")
def mini() -> Exercise:
    return load_exercise(DATA / "mini-dns")


@pytest.fixture
def make_app() -> Iterator[MakeApp]:
    def make(exercise: Exercise | None = None, *, mode: str = "solo",
             pace: Pace = Pace.TURNS, speed: float = 60.0,
             wall: FakeWall | None = None) -> RacedayApp:
        app = RacedayApp(exercise, settings=Settings(mode, pace, speed, Path("transcripts")),
                         wall=wall or FakeWall(), live_ticks=False)
        app.animation_level = "none"
        return app

    yield make
