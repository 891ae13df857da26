"""An unexpected error in a worker opens the crash panel (traceback, log path); play goes on."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Static
from tui_fixtures import MakeApp, settle, start_play, wait_until

from raceday.exercise.model import Exercise
from raceday.logfile import LOG_FILE
from raceday.tui.screens.crash import CrashScreen
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui


def text_of(widget: Static) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(widget.render())
    return console.export_text()


def broken(session: Any) -> None:
    raise ZeroDivisionError("a bug in a session call")


async def test_a_bug_in_a_session_call_shows_the_crash_panel_and_play_goes_on(
    make_app: MakeApp, mini: Exercise
) -> None:
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen) and play.runner is not None
        runner = play.runner
        session = runner.session
        assert session is not None
        runner.act("boom", broken)
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, CrashScreen))
        crash = app.screen
        assert isinstance(crash, CrashScreen)
        log = (session.folder / LOG_FILE).resolve()
        assert crash.log_file == log
        assert "a bug in a session call" in text_of(crash.query_one("#crash-error", Static))
        assert str(log) in " ".join(text_of(crash.query_one("#crash-log", Static)).split())
        assert "ZeroDivisionError" in crash.trace and "in broken" in crash.trace
        written = log.read_text(encoding="utf-8")
        assert "boom failed unexpectedly" in written and "ZeroDivisionError" in written

        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is play
        before = len(session.events)
        runner.execute(mini.default_roles[0], "SELECT 1;")
        await settle(pilot)
        assert len(session.events) > before  # the session still plays
        assert not isinstance(app.screen, CrashScreen)


async def test_a_refusal_stays_a_one_line_toast(make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen) and play.runner is not None
        runner = play.runner
        runner.act("monitor", lambda s: s.save_monitor("nobody", "m", "SELECT 1"))
        await settle(pilot)
        assert isinstance(app.screen, PlayScreen)
        assert any("nobody" in str(n.message) for n in app._notifications)


async def test_a_failing_worker_is_caught_by_the_backstop(make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)

        def fail() -> None:
            raise RuntimeError("a worker outside the runner broke")

        app.run_worker(fail, name="stray", thread=True, exit_on_error=False)
        await wait_until(pilot, lambda: isinstance(app.screen, CrashScreen))
        crash = app.screen
        assert isinstance(crash, CrashScreen)
        assert crash.what == "stray" and "RuntimeError" in crash.trace
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PlayScreen)


async def test_a_bug_in_a_screens_worker_shows_the_crash_panel(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """A screen's worker's state does not bubble to the app: the launcher's list of exercises
    failing with a bug left an empty table and said nothing."""
    from raceday.engine import load

    def broken_find(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("a bug while finding exercises")

    monkeypatch.setattr(load, "find_exercises", broken_find)
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, CrashScreen))
        await pilot.pause()  # not settle(): waiting on the failed worker would raise its error
        crash = app.screen
        assert isinstance(crash, CrashScreen)
        assert "a bug while finding exercises" in text_of(crash.query_one("#crash-error", Static))
        assert "ZeroDivisionError" in crash.trace
