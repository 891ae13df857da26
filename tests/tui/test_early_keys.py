"""Keys pressed in the moment the play screen shows but its session is still opening (its
world being built) are done once it is open, not lost to a warning."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from tui_fixtures import MakeApp, settle, wait_until

import raceday.engine.headless as headless
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui


@pytest.fixture
def slow_open(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The session opens only once the test lets it."""
    gate = threading.Event()
    opened = headless.open_session

    def held(*args: Any, **kwargs: Any) -> Any:
        assert gate.wait(10), "the test never let the session open"
        return opened(*args, **kwargs)

    monkeypatch.setattr(headless, "open_session", held)
    return gate


def _warnings(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_f5_and_ctrl_n_pressed_while_the_session_opens_are_done_once_open(
        make_app: MakeApp, flagship: Exercise, slow_open: threading.Event) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen))
        screen = app.screen
        assert isinstance(screen, PlayScreen) and screen.runner is not None
        assert screen.runner.session is None  # still opening
        await pilot.press("f5")  # the role's example query, waiting in the editor
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert not any("not open yet" in w for w in _warnings(app))
        slow_open.set()
        await wait_until(pilot, lambda: screen.runner is not None
                         and screen.runner.session is not None, timeout=20)
        await settle(pilot)
        session = screen.runner.session
        assert session is not None
        played = [e for e in session.events if isinstance(e, ev.Statement) and not e.automated]
        assert [s.sql.strip() for s in played] == [screen.editor.text.strip()]
        assert session.minute > 1  # ctrl+n ran the clock on, after the statement
        assert "rows" in str(screen.results.status.render())
        assert not any("not open yet" in w for w in _warnings(app))


async def test_keys_kept_for_an_open_that_fails_are_dropped_and_later_keys_say_so(
        make_app: MakeApp, flagship: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()

    def failing(*args: Any, **kwargs: Any) -> Any:
        assert gate.wait(10), "the test never let the open go on"
        raise RacedayError("the world could not be built here")

    monkeypatch.setattr(headless, "open_session", failing)
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen))
        await pilot.press("f5")  # kept while it opens
        gate.set()
        await wait_until(pilot, lambda: any("could not be built" in w for w in _warnings(app)))
        assert not any("not open yet" in w for w in _warnings(app))  # F5's key was dropped
        await pilot.press("f5")  # after the failure: told, not kept
        await pilot.pause()
        assert any("not open yet" in w for w in _warnings(app))
