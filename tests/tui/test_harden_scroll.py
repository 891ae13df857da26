"""Reaching every statement and the end of each (issue 59): PageDown / PageUp page the list
with the cursor, ctrl+End / ctrl+Home reach the end / start of a long statement, and the
statement being edited stays on the screen."""

from __future__ import annotations

import pytest
from textual.containers import VerticalScroll
from tui_fixtures import MakeApp, settle, start_play, type_text

from raceday.exercise.model import Exercise
from raceday.tui.screens.harden import HardenScreen, StatementCard
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui


def statement_list(harden: HardenScreen) -> VerticalScroll:
    return harden.query_one("#harden-list", VerticalScroll)


def wholly_shown(harden: HardenScreen, card: StatementCard) -> bool:
    view = statement_list(harden).scrollable_content_region
    return view.contains_region(card.editor.region)


async def test_ctrl_end_reaches_the_end_of_a_long_statement(make_app: MakeApp,
                                                            flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        await pilot.press("f4")
        await pilot.pause()
        harden = app.screen
        assert isinstance(harden, HardenScreen)
        last = harden.cards[-1]  # at the foot of the list, below the screen
        assert not wholly_shown(harden, last)
        long_sql = last.statement.sql.replace(
            "WHERE", "WHERE " + "\n".join(f"{n} = {n} AND" for n in range(30)) + "\n", 1)
        last.editor.text = long_sql
        last.editor.focus()
        await pilot.pause()
        assert last.editor.max_scroll_y > 0  # longer than its editor shows

        await pilot.press("ctrl+end")
        await pilot.pause()
        editor = last.editor
        assert editor.cursor_location == editor.document.end
        assert editor.scroll_y == editor.max_scroll_y
        assert wholly_shown(harden, last)
        await type_text(pilot, " AND 1 = 1")
        await pilot.press("ctrl+s")
        await settle(pilot)
        session = play.runner.session if play.runner else None
        assert session is not None
        assert session.statement_sql[last.statement.id] == long_sql + " AND 1 = 1"

        await pilot.press("ctrl+home")
        await pilot.pause()
        assert editor.cursor_location == (0, 0) and editor.scroll_y == 0
        await pilot.press("ctrl+shift+end")
        await pilot.pause()
        assert editor.selected_text == editor.text


async def test_page_down_and_up_page_the_list_with_the_cursor(make_app: MakeApp,
                                                              flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await pilot.press("f4")
        await pilot.pause()
        harden = app.screen
        assert isinstance(harden, HardenScreen)
        listed = statement_list(harden)
        assert listed.max_scroll_y > 0 and harden.focused is harden.cards[0].editor
        seen = []
        for _ in range(len(harden.cards)):
            await pilot.press("pagedown")
            await pilot.pause()
            card = harden.focused_card()
            assert card is not None and wholly_shown(harden, card)
            seen.append((listed.scroll_y, card.index))
            if card is harden.cards[-1]:
                break
        assert harden.focused is harden.cards[-1].editor
        assert listed.scroll_y == listed.max_scroll_y
        assert seen == sorted(seen) and seen[0][0] > 0  # down, page by page, never back
        for _ in range(len(harden.cards)):
            await pilot.press("pageup")
            await pilot.pause()
            card = harden.focused_card()
            assert card is not None and wholly_shown(harden, card)
            if card is harden.cards[0]:
                break
        assert harden.focused is harden.cards[0].editor and listed.scroll_y == 0
