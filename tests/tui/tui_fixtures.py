"""Helpers for the TUI tests: a wall clock tests move by hand, waiting on workers, typing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from raceday.engine.session import Session
from raceday.tui.app import RacedayApp
from raceday.tui.screens.end import EndScreen
from raceday.tui.screens.play import PlayScreen

DATA = Path(__file__).parent / "data"

MakeApp = Callable[..., RacedayApp]


class FakeWall:
    """The wall clock the app sees, in seconds; tests move it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def calls_to(owner: object, method: str) -> list[Any]:
    """Record the first argument of every call of `owner.method` from now on; the method
    still runs as it did (a widget's `show_text`, the feed's `add`)."""
    seen: list[Any] = []
    original = getattr(owner, method)

    def recorded(value: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(value)
        return original(value, *args, **kwargs)

    setattr(owner, method, recorded)
    return seen


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until every worker is done and every message they posted is handled."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def start_play(pilot: Pilot[Any]) -> None:
    """From the briefing, press Enter and wait for the world to open."""
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)


async def end_play(pilot: Pilot[Any]) -> EndScreen:
    """From the play screen, ctrl+q and "End and score": the end screen, once it is up."""
    await pilot.press("ctrl+q")
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)
    end = pilot.app.screen
    assert isinstance(end, EndScreen)
    return end


async def type_text(pilot: Pilot[Any], text: str) -> None:
    keys = {" ": "space", "\n": "enter"}
    await pilot.press(*(keys.get(ch, ch) for ch in text))


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool],
                     timeout: float = 5.0) -> None:
    """Poll a condition a worker will make true (never a fixed sleep)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def drawn(widget: Widget) -> str:
    """What `widget` draws on the terminal, line by line (trailing blanks dropped): the
    text a player reads, after any markup was (or was not) obeyed."""
    lines = widget.render_lines(Region(0, 0, *widget.outer_size))
    return "\n".join(line.text.rstrip() for line in lines).rstrip()


def session_of(play: PlayScreen) -> Session:
    """The play screen's session, once its runner has one."""
    session = play.runner.session if play.runner else None
    assert isinstance(session, Session), type(session).__name__
    return session


def top(app: App[Any]) -> object:
    """The screen on top now, read afresh (mypy would keep `app.screen` narrowed across the
    keys pressed since it was last looked at)."""
    return app.screen
