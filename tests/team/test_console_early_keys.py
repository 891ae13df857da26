"""A key pressed on the facilitator's console before it has taken in the session's history
is answered from that history once it is in, not from an empty one ("nobody has declared a
finding yet"): `r` the moment the console opens lists the declarations."""

from __future__ import annotations

import os
import threading

import pytest
from team_fixtures import joined, send, until
from textual.widgets import OptionList

from raceday.team.host import Host
from raceday.tui.screens.dialogs import ChoiceDialog
from raceday.tui.team.console import ConsoleScreen
from raceday.tui.team.console_app import ConsoleApp
from raceday.tui.team.console_runner import ConsoleRunner

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
pytestmark = pytest.mark.tui


async def test_rule_pressed_before_the_history_is_in_lists_the_declarations(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    rita = joined(host, "responder", "Rita")
    send(host, rita, "declare", finding="ddos-attack")
    held = threading.Event()
    follow = ConsoleRunner._follow

    def held_back(runner: ConsoleRunner) -> None:  # the follower's first look comes late
        held.wait(10)
        follow(runner)

    monkeypatch.setattr(ConsoleRunner, "_follow", held_back)
    console = ConsoleApp(host, run_host=False)
    async with console.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(console.screen, ConsoleScreen))
        await pilot.press("r", "r")  # pressed twice while it catches up: asked once
        await pilot.pause(0.2)
        assert isinstance(console.screen, ConsoleScreen)  # nothing to list from yet
        assert not any("Nobody has declared" in str(n.message) for n in console._notifications)
        held.set()
        await until(pilot, lambda: isinstance(console.screen, ChoiceDialog))
        await pilot.pause(0.2)
        assert sum(isinstance(s, ChoiceDialog) for s in console.screen_stack) == 1
        assert "responder: A DDoS attack" in str(
            console.screen.query_one(OptionList).get_option_at_index(0).prompt)
