"""The TUI's side of crash and resume: the launcher offers an unfinished session and resumes
it; a world deleted mid-session stops the session with a dialog that has a way out."""

from __future__ import annotations

from pathlib import Path

from tui_fixtures import MakeApp, settle, start_play, type_text

from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.tui.screens.dialogs import ConfirmDialog
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen


async def _run_sql(pilot: object, sql: str) -> None:
    await pilot.press("ctrl+a")  # type: ignore[attr-defined]
    await type_text(pilot, sql)  # type: ignore[arg-type]
    await pilot.press("f5")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]


async def test_a_deleted_world_stops_the_session_with_a_way_out(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen) and screen.runner is not None
        folder = screen.runner.session.folder
        for part in folder.glob("world.db*"):
            part.unlink()
        await _run_sql(pilot, "SELECT 1")
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert "world's file is gone" in dialog.question and "raceday resume" in dialog.question
        await pilot.press("escape")  # stay and look: ctrl+q then quits at once
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_value == 1  # raceday exits with status 1
    events = read_events(folder).events
    assert not any(isinstance(e, ev.ScoreEvent) for e in events)  # resumable, not scored


async def test_the_launcher_resumes_an_unfinished_session(make_app: MakeApp,
                                                         flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen) and screen.runner is not None
        await _run_sql(pilot, "UPDATE automation SET enabled = 0")
        session = screen.runner.session
        folder, minute = session.folder, session.minute
        session.close()  # as a kill leaves it: no score
    launcher_app = make_app(None)
    async with launcher_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = launcher_app.screen
        assert isinstance(launcher, LauncherScreen)
        assert [u.folder.resolve() for u in launcher.unfinished] == [Path(folder).resolve()]
        await pilot.press("r")
        await settle(pilot)
        play = launcher_app.screen
        assert isinstance(play, PlayScreen) and play.runner is not None
        again = play.runner.session
        assert again is not None and again.minute == minute
        rows = again.store.app_query("SELECT DISTINCT enabled FROM automation")[1]
        assert rows == [(0,)]
        assert any(isinstance(e, ev.SessionResumed) for e in again.events)
