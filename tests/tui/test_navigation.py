"""The app is what its screens ask of it (`tui/navigation.py`), which mypy checks here."""

from __future__ import annotations

import pytest

from raceday.tui.app import RacedayApp
from raceday.tui.navigation import Navigator, navigator
from raceday.tui.settings import Settings

pytestmark = pytest.mark.tui


def test_the_app_is_its_screens_navigator() -> None:
    app = RacedayApp(settings=Settings(mode="team"))
    seen: Navigator = navigator(app)  # mypy: RacedayApp has every member of the protocol
    assert seen is app and seen.settings.mode == "team" and seen.exercise is None
