"""The draw edge: whatever a widget was given, no line reaches the terminal with a control
in its text, in every raceday app (a new screen cannot forget it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static, TabbedContent, TabPane

import raceday
from raceday.tui.edge import clean_update
from raceday.tui.notify import InertNotifications

pytestmark = pytest.mark.tui
OSC52 = "\x1b]52;c;SGVsbG8=\x07"
RAW_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Careless(InertNotifications):
    """A screen that forgot `inert` everywhere it could."""

    def compose(self) -> ComposeResult:
        yield Static(f"monitor {OSC52} \x9b2J", markup=False)
        with TabbedContent():
            with TabPane(f"tab {OSC52}"):
                table: DataTable[str] = DataTable()
                yield table

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("cell")
        table.add_row("value \x1b]0;T\x07")


def _texts(update: object) -> list[str]:
    console = Console(force_terminal=True, color_system="truecolor", width=120)
    rendered = update.render_segments(console)  # type: ignore[attr-defined]
    return [rendered]


async def test_a_careless_screen_draws_no_control() -> None:
    app = Careless()
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        app.notify(f"toast {OSC52}", markup=True)
        await pilot.pause()
        before = app.screen._compositor.render_update(full=True)
        segments = [seg.text for line in before.strips  # type: ignore[union-attr]
                    for strip in line for seg in strip if seg.control is None]
        assert any(RAW_IN_TEXT.search(t) for t in segments)  # it did reach the lines
        after = clean_update(app.screen._compositor.render_update(full=True))
        out = "".join(_texts(after))
        assert "\x1b]52" not in out and "\x1b]0;" not in out and "\x9b" not in out
        assert "]52;c;SGVsbG8=" in out  # shown, not sent


def _app_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(raceday.__path__, "raceday."):
        if not info.name.startswith(("raceday.tui", "raceday.web")):
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, App) and obj.__module__ == info.name:
                found.append(obj)
    return found


def test_every_raceday_app_draws_through_the_edge() -> None:
    classes = _app_classes()
    assert len(classes) >= 5
    assert [c for c in classes if not issubclass(c, InertNotifications)] == []
