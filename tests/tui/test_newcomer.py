"""A new on-call engineer's first hour, scripted: from the first launcher (no history) to
the score, doing only what the screens say (the launcher's start line, the guide's steps,
the tasks panel, a hint), typing at a person's pace and in bursts."""

from __future__ import annotations

from typing import Any

import pytest
from test_keys_in_order import burst, typed
from textual.widgets import DataTable
from textual.widgets._footer import FooterKey
from tui_fixtures import MakeApp, settle, start_play, type_text, wait_until

from raceday.transcript import events as ev
from raceday.tui.screens.briefing import BriefingScreen
from raceday.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, MonitorDialog
from raceday.tui.screens.end import EndScreen
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.footer import SteadyFooter, shown_keys

pytestmark = pytest.mark.tui


def guide(screen: PlayScreen) -> str:
    return str(screen.query_one("#guide").render())


def footer_keys(screen: Any) -> list[str]:
    return [words for (_key, _action, words, enabled, *_rest) in shown_keys(screen) if enabled]


async def test_a_newcomer_plays_the_onboarding_from_the_first_launcher_to_the_score(
        make_app: MakeApp) -> None:
    app = make_app(None)  # `raceday` with nothing played here yet
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        assert str(launcher.query_one("#launcher-start").render()).startswith("▶ Start here")
        table = launcher.query_one("#exercises", DataTable)
        assert launcher.entries[table.cursor_row].id == "lost-update-basics"
        await pilot.press("enter")  # as the start line says
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        assert app.settings.mode == "onboarding"
        assert "Step 1 of 5" in guide(screen)
        assert footer_keys(screen)[:2] == ["Help", "Quit"]

        await pilot.press("f5")  # step 1: run the example waiting in the editor
        await settle(pilot)
        assert "Step 2 of 5" in guide(screen)
        await pilot.press("ctrl+n")  # step 2: let the clock run
        await settle(pilot)
        await wait_until(pilot, lambda: "Step 3 of 5" in guide(screen))

        # step 3: a query of what is wrong, typed fast (a burst), saved as a monitor
        burst(app, "ctrl+a", "SELECT key, value FROM config WHERE value <> 'db-2'")
        await pilot.press("f7")
        await wait_until(pilot, lambda: isinstance(app.screen, MonitorDialog))
        await type_text(pilot, "wrong-primary")
        await pilot.press("enter", "ctrl+s")
        await settle(pilot)
        assert "Step 4 of 5" in guide(screen)

        await pilot.press("f8")  # step 4: declare it
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        lost = next(i for i, (key, _) in enumerate(dialog.options) if key == "lost-update")
        await pilot.press(*["down"] * lost, "enter", "enter")  # named, then declared
        await settle(pilot)
        assert "Step 5 of 5" in guide(screen)

        await pilot.press("f9")  # stuck on the repair: the pointer first, the SQL after it
        await pilot.pause()
        hints = app.screen
        assert isinstance(hints, ChoiceDialog) and hints.selected == "repair-pointer"
        assert "repair-sql" in hints.closed
        assert "(take the one above first)" in dict(hints.options)["repair-sql"]
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("f9")  # still stuck: the SQL, then ctrl+y and F5
        await pilot.pause()
        hints = app.screen
        assert isinstance(hints, ChoiceDialog) and hints.selected == "repair-sql"
        assert "(2 of 2)" in dict(hints.options)["repair-sql"]
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+y", "f5")
        await settle(pilot)
        assert typed(screen)[-1].startswith("UPDATE config SET value = 'db-2'")
        assert "repair" in screen.done_tasks

        await pilot.press("ctrl+q")  # ends and scores, asking first
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, EndScreen), timeout=60)
        await settle(pilot)
        end = app.screen
        assert isinstance(end, EndScreen)
        assert end.score.detection is not None and end.score.detection.points > 0
        # no exercise plays the rest of this morning: n leads to the exercise to play next,
        # as the debrief's last line says and the launcher will
        bar = end.query_one("#end-bar")
        await wait_until(pilot, lambda: "n: play next, " in str(bar.render()))
        assert end.next_act is not None and end.next_act.id != "lost-update-basics"
        assert "Next" in footer_keys(end)
        session_events = end.events
        assert any(isinstance(e, ev.Hint) for e in session_events)
        await pilot.press("ctrl+q")  # the score screen: one press
        await pilot.pause()
        assert app.return_code == 0


@pytest.mark.parametrize("exercise_id", ["lost-update-basics", "dynamodb-dns-race"])
def test_the_briefing_says_how_it_is_scored_once(exercise_id: str) -> None:
    from raceday.engine.load import load_named_exercise
    from raceday.tui.screens.briefing import situation_markdown
    from raceday.tui.settings import Settings

    text = situation_markdown(load_named_exercise(exercise_id), Settings())
    headings = [line for line in text.splitlines()
                if line.startswith("#") and "scored" in line.lower()]
    assert len(headings) == 1, headings


def test_the_flagship_briefing_does_not_name_the_slow_enactor() -> None:
    from raceday.engine.load import load_named_exercise

    exercise = load_named_exercise("dynamodb-dns-race")
    read_before_play = exercise.briefing + " ".join(r.briefing for r in exercise.roles)
    assert "Enactor A" not in read_before_play and "losing the lock" not in read_before_play


async def test_at_80_columns_the_footer_keeps_help_quit_and_replay(make_app: MakeApp) -> None:
    """The side panel's key goes last (F1 lists it): the keys a player needs stay on screen."""
    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await pilot.pause()
        footer = screen.query_one(SteadyFooter)
        shown = [key.description for key in footer.query(FooterKey)
                 if key.region.width and key.region.right <= 80]
        for words in ("Help", "Quit", "Run", "Next", "Replay"):
            assert words in shown, shown
