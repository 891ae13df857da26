"""The screens of a finding in the player's own words: a seat's F8 offers "In my own words",
the seat is told at once how it counts, and the console's `r` lists the words to rule on."""

from __future__ import annotations

import os

import pytest
from team_fixtures import TOKENS, until
from textual.widgets import Input, OptionList

from raceday.exercise.model import OWN_WORDS
from raceday.judge.facts import own_words_key
from raceday.team.client import Client
from raceday.team.host import Host
from raceday.transcript import events as ev
from raceday.tui.screens.dialogs import ChoiceDialog, OwnWordsDialog
from raceday.tui.team.console import ConsoleScreen
from raceday.tui.team.console_app import ConsoleApp
from raceday.tui.team.console_dialogs import NoteDialog
from raceday.tui.team.seat_screen import SeatScreen
from raceday.tui.team.start_team import SeatApp, seat_settings

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
pytestmark = pytest.mark.tui
WORDS = "Enactor A applied a stale plan"


def _ready(app: ConsoleApp) -> bool:
    """The dialog on top has mounted and its list holds the focus with an option lit: Enter
    chooses it."""
    focused = app.focused
    return (focused is not None and focused.screen is app.screen
            and getattr(focused, "highlighted", 0) is not None)


def _declared(host: Host) -> list[ev.Declaration]:
    return [e for e in host.need().events if isinstance(e, ev.Declaration)]


async def test_a_seat_declares_in_its_own_words_and_the_console_rules_on_them(
        running: Host) -> None:
    client = Client(running.folder, TOKENS["responder"], "Rita")
    seat = SeatApp(client, seat_settings(client), live_ticks=False)
    async with seat.run_test(size=(130, 42)) as pilot:
        await until(pilot, lambda: isinstance(seat.screen, SeatScreen))
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(seat.screen, ChoiceDialog))
        options = seat.screen.query_one(OptionList)
        last = options.get_option_at_index(options.option_count - 1)
        assert (last.id, str(last.prompt)) == (OWN_WORDS, "In my own words…")
        await pilot.press("end", "enter")
        await until(pilot, lambda: isinstance(seat.screen, OwnWordsDialog))
        await pilot.press("enter")  # nothing written: it says so and stays
        assert isinstance(seat.screen, OwnWordsDialog)
        # typed in one go: a key at a time waits on the host thread's polling for ~0.6 s each
        seat.screen.query_one(Input).insert_text_at_cursor(WORDS)
        await pilot.press("enter")
        await until(pilot, lambda: bool(_declared(running)))
        await until(pilot, lambda: any("Declared in your own words" in str(n.title)
                                       for n in seat._notifications))
    [declared] = _declared(running)
    assert (declared.finding, declared.text, declared.verdict) == (OWN_WORDS, WORDS, "to_rule")
    console = ConsoleApp(running, run_host=False)
    async with console.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(console.screen, ConsoleScreen))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(console.screen, ChoiceDialog))
        first = console.screen.query_one(OptionList).get_option_at_index(0)
        assert str(first.prompt) == f"{declared.sim_time} responder in own words: {WORDS}"
        rulings = console.screen
        await pilot.press("enter")  # the declaration
        await until(pilot, lambda: isinstance(console.screen, ChoiceDialog)
                    and console.screen is not rulings and _ready(console))
        await pilot.press("enter")  # right
        await until(pilot, lambda: isinstance(console.screen, NoteDialog) and _ready(console))
        for ch in "stale":
            await pilot.press(ch)
        await pilot.press("enter")
        await until(pilot, lambda: bool(running.need().facts.rulings))
    assert running.need().facts.rulings == [
        (declared.minute, own_words_key(WORDS), "right", "stale")]
