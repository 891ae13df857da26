"""Leaving Harden with edits not saved asks first (issue 59): save, discard or stay, and each
does what it says; with nothing unsaved Esc goes back at once."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Label, OptionList
from tui_fixtures import MakeApp, session_of, settle, start_play, top, type_text

from raceday.engine.session import Session
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.dialogs import ChoiceDialog
from raceday.tui.screens.harden import HardenScreen
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui


async def open_harden(pilot: Any) -> HardenScreen:
    await pilot.press("f4")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, HardenScreen), type(screen).__name__
    return screen


async def leave(pilot: Any, key: str = "escape") -> ChoiceDialog:
    """Esc (or F4) with an edit not saved: the question, not the play screen."""
    await pilot.press(key)
    await pilot.pause()
    dialog = pilot.app.screen
    assert isinstance(dialog, ChoiceDialog), type(dialog).__name__
    return dialog


async def answer(pilot: Any, dialog: ChoiceDialog, choice: str) -> None:
    options = dialog.query_one(OptionList)
    options.highlighted = [key for key, _ in dialog.options].index(choice)
    await pilot.press("enter")
    await settle(pilot)


def edits(session: Session) -> list[ev.Edit]:
    return [e for e in session.events if isinstance(e, ev.Edit)]


async def test_unsaved_edits_ask_and_discard_and_save_do_what_they_say(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        session = session_of(play)
        harden = await open_harden(pilot)
        first = harden.cards[0]
        original = first.statement.sql
        await pilot.press("end")
        await type_text(pilot, " WHERE 1 = 1")

        dialog = await leave(pilot)  # stay: nothing lost, still editing
        assert first.statement.id in str(dialog.query_one(Label).render())
        await answer(pilot, dialog, "stay")
        assert top(app) is harden and first.editor.text == original + " WHERE 1 = 1"
        assert harden.focused is first.editor

        dialog = await leave(pilot, "f4")  # discard: back, the automation as it was
        await answer(pilot, dialog, "discard")
        assert top(app) is play and play.hardening is None
        assert session.statement_sql[first.statement.id] == original
        assert edits(session) == []

        harden = await open_harden(pilot)  # the discarded edit is gone
        first = harden.cards[0]
        assert first.editor.text == original and not first.unsaved
        await pilot.press("end")
        await type_text(pilot, " WHERE 2 = 2")
        dialog = await leave(pilot)  # save: saved, then back
        await answer(pilot, dialog, "save")
        assert top(app) is play and play.hardening is None
        assert session.statement_sql[first.statement.id] == original + " WHERE 2 = 2"
        assert [(e.statement, e.sql) for e in edits(session)] == [
            (first.statement.id, original + " WHERE 2 = 2")]

        harden = await open_harden(pilot)  # nothing unsaved: Esc goes at once
        await pilot.press("escape")
        await pilot.pause()
        assert top(app) is play


async def test_a_save_refused_on_leaving_stays(make_app: MakeApp, flagship: Exercise) -> None:
    """"Save and go back" whose save the session refuses stays on the statement, with the
    refusal said, rather than leaving with the edit lost."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        harden = await open_harden(pilot)
        first = harden.cards[0]
        await pilot.press("end")
        await type_text(pilot, " WHERE :version = 1")
        dialog = await leave(pilot)
        await answer(pilot, dialog, "save")
        assert top(app) is harden and not harden.leaving
        status = str(first.query_one(".harden-status").render())
        assert "Refused" in status and ":version" in status
        assert first.unsaved and edits(session_of(play)) == []
