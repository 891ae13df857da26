"""Harden saves what was typed (issue 59): ctrl+s saves the statement in the editor the keys
went to, after the screen was left and opened again, with keys typed at once after F4, and
never records a save of a statement nobody changed."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.keys import _character_to_key
from tui_fixtures import MakeApp, session_of, settle, start_play, top

from raceday.engine.session import Session
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.harden import HardenScreen
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui

TYPED = ("INSERT INTO plan (id, created_at) SELECT max(id) + 1, :now_hhmm FROM plan "
         "WHERE 1 = 1")


def burst(pilot: Any, *keys: str) -> None:
    """Keys as a terminal hands them over when they are typed (or pasted) fast: all at once,
    none waiting for the one before to be done (Pilot's press waits after each)."""
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        event = events.Key(name, key if len(key) == 1 else None)
        event.set_sender(pilot.app)
        pilot.app.post_message(event)


def edited(session: Session) -> list[str | None]:
    return [e.statement for e in session.events if isinstance(e, ev.Edit)]


async def test_harden_opened_again_saves_the_first_editor_as_typed(make_app: MakeApp,
                                                                   flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        await pilot.press("f4")
        await pilot.pause()
        harden = top(app)
        assert isinstance(harden, HardenScreen)
        await pilot.press("tab", "tab")  # the cursor left in a third statement
        await pilot.pause()
        assert harden.focused is harden.cards[2].editor
        await pilot.press("escape")
        await pilot.pause()
        assert top(app) is play and play.hardening is None

        burst(pilot, "f4", "ctrl+a", *TYPED, "ctrl+s")  # typed at once after F4
        await settle(pilot)
        harden = top(app)
        assert isinstance(harden, HardenScreen)
        first = harden.cards[0]
        assert harden.focused is first.editor
        assert first.editor.text == TYPED
        session = session_of(play)
        assert session.statement_sql[first.statement.id] == TYPED
        assert edited(session) == [first.statement.id]
        assert not first.unsaved


async def test_ctrl_s_where_nothing_changed_saves_nothing_and_names_the_unsaved(
        make_app: MakeApp, flagship: Exercise) -> None:
    """Typed in one statement, then tab after a space (nothing to complete: the cursor goes to
    the next statement) and ctrl+s: a save of SQL nobody changed is not recorded, and the
    screen says which statement still holds the edit."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        await pilot.press("f4")
        await pilot.pause()
        harden = top(app)
        assert isinstance(harden, HardenScreen)
        first, second = harden.cards[0], harden.cards[1]
        await pilot.press("end", *" LIMIT 1 ", "tab")
        await pilot.pause()
        assert harden.focused is second.editor and first.unsaved
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert edited(session_of(play)) == []
        said = str(second.query_one(".harden-status").render())
        assert "Nothing to save" in said and first.statement.id in said


async def test_the_palette_puts_back_the_statement_it_names(make_app: MakeApp,
                                                            flagship: Exercise) -> None:
    """"Put back the original X" acts on X, not on the statement that had focus (a focus
    asked for moves only after the command has run)."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        await pilot.press("f4")
        await pilot.pause()
        harden = top(app)
        assert isinstance(harden, HardenScreen)
        apply = harden.card_for("enactor-a-apply")
        assert apply is not None
        apply.editor.focus()
        await pilot.pause()
        guarded = apply.statement.sql + " AND 1 = 1"
        apply.editor.text = guarded
        await pilot.press("ctrl+s")
        await settle(pilot)
        session = session_of(play)
        assert session.statement_sql["enactor-a-apply"] == guarded
        harden.cards[0].editor.focus()
        await pilot.pause()
        [revert] = [cb for name, _, cb in harden.palette_commands()
                    if name == "Put back the original enactor-a-apply"]
        revert()
        await settle(pilot)
        assert session.statement_sql["enactor-a-apply"] == apply.statement.sql
        assert edited(session) == ["enactor-a-apply", "enactor-a-apply"]
        assert harden.focused is apply.editor
