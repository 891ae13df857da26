"""A seat's session is open before its screen hears so: the keys a player pressed while it
opened are done on `SessionOpened`, and each asks the runner whether the session is open."""

from __future__ import annotations

from typing import Any

import pytest
from team_fixtures import TOKENS
from textual.message import Message

import raceday.tui.team.seat_runner as seat_runner
from raceday.team.client import Client
from raceday.team.host import Host
from raceday.tui.messages import SessionOpened
from raceday.tui.team.seat_runner import SeatRunner


class _Screen:
    """Stands for the seat's screen: notes, for each message, whether the session was open."""

    def __init__(self) -> None:
        self.runner: SeatRunner | None = None
        self.heard: list[tuple[str, bool]] = []

    def post_message(self, message: Message) -> bool:
        assert self.runner is not None
        self.heard.append((type(message).__name__, self.runner.session is not None))
        if isinstance(message, SessionOpened):
            self.runner._stop.set()  # enough: the follow loop ends here
        return True


class _Worker:
    is_cancelled = False


def test_the_session_is_open_when_the_screen_hears_it_opened(
        running: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seat_runner, "get_current_worker", lambda: _Worker())
    screen = _Screen()
    client = Client(running.folder, TOKENS["responder"], "Rita")
    runner = SeatRunner(app=Any, target=screen, client=client,  # type: ignore[arg-type]
                        exercise=running.exercise)
    screen.runner = runner
    try:
        runner._follow()
    finally:
        runner.leave()
    assert ("SessionOpened", True) in screen.heard
