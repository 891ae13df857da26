"""An unknown night in the terminal: the briefing says only that something may go wrong,
the play goes on the drawn night, and the end tells which it was."""

from __future__ import annotations

import pytest
from tui_fixtures import MakeApp, end_play, settle, start_play

from raceday.engine.load import load_named_exercise
from raceday.transcript import events as ev
from raceday.tui.runner import SessionRunner
from raceday.tui.screens.briefing import situation_markdown
from raceday.tui.screens.end import EndScreen, end_markdown
from raceday.tui.screens.play import PlayScreen
from raceday.tui.settings import Settings


def test_the_unknown_briefing_tells_no_story() -> None:
    flagship = load_named_exercise("dynamodb-dns-race")
    told = situation_markdown(flagship, Settings())
    unknown = situation_markdown(flagship, Settings(unknown=True))
    assert "Something is about to go wrong" in told
    assert "Something is about to go wrong" not in unknown
    assert "Before midnight, something in this system went wrong" not in unknown
    assert "An unknown night" in unknown and "This is an **unknown night**" in unknown
    assert "## Roles" in unknown  # the roles, tools and scoring stay as they are


@pytest.mark.asyncio
async def test_an_unknown_night_is_played_and_told_at_the_end(make_app: MakeApp) -> None:
    flagship = load_named_exercise("dynamodb-dns-race")
    app = make_app(flagship)
    app.settings.unknown, app.settings.night = True, "quiet"
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        runner = screen.runner
        assert isinstance(runner, SessionRunner)  # solo: the session is in this process
        session = runner.session
        assert session is not None and session.night is not None
        assert session.night.night == "quiet"
        end = await end_play(pilot)
        assert isinstance(end, EndScreen)
        await settle(pilot)
        told = [e for e in session.events if isinstance(e, ev.NightRevealed)]
        assert [e.night for e in told] == ["quiet"]
        assert session.score is not None
        shown = end_markdown(session.exercise, session.score, session.folder, session.events)
        assert "Tonight was an unknown night, and a quiet one" in shown
