"""The key footer is built once per set of keys: a screen switch does not rebuild it, and
a key that becomes enabled or disabled shows at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from raceday.tui.widgets.footer import SteadyFooter

pytestmark = pytest.mark.tui


class Keys(Screen[None]):
    BINDINGS = [Binding("n", "next", "Next"), Binding("d", "declare", "Declare"),
                Binding("o", "other", "Other screen")]

    def __init__(self) -> None:
        super().__init__()
        self.declared = False

    def compose(self) -> ComposeResult:
        yield Static("keys")
        yield SteadyFooter(show_command_palette=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "declare":
            return None if self.declared else True  # None: shown, greyed out
        return True

    def action_declare(self) -> None:
        self.declared = True
        self.refresh_bindings()

    def action_other(self) -> None:
        self.app.push_screen(Other())


class Other(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Static("other")
        yield SteadyFooter(show_command_palette=False)


class KeysApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Keys())


def footer_keys(app: App[None]) -> dict[str, FooterKey]:
    return {key.key: key for key in app.screen.query(FooterKey)}


async def settled(pilot: Any, done: Callable[[], bool]) -> None:
    """Pause until `done` holds (a loaded machine takes more than one refresh), at most 5 s."""
    for _ in range(100):
        await pilot.pause()
        if done():
            return
        await pilot.pause(0.05)


async def test_a_screen_switch_keeps_the_footer_and_a_disabled_key_shows() -> None:
    app = KeysApp()
    async with app.run_test(size=(80, 10)) as pilot:
        await settled(pilot, lambda: set(footer_keys(app)) == {"n", "d", "o"})
        before = footer_keys(app)
        assert set(before) == {"n", "d", "o"}
        assert not before["d"].has_class("-disabled")

        await pilot.press("o")
        await settled(pilot, lambda: set(footer_keys(app)) == {"escape"})
        assert set(footer_keys(app)) == {"escape"}
        await pilot.press("escape")
        await settled(pilot, lambda: set(footer_keys(app)) == {"n", "d", "o"})
        after = footer_keys(app)
        assert set(after) == {"n", "d", "o"}
        assert all(after[k] is before[k] for k in after), "the footer was built again"

        await pilot.press("d")  # Declare is spent: the key greys out
        await settled(pilot, lambda: footer_keys(app)["d"].has_class("-disabled"))
        now = footer_keys(app)
        assert now["d"].has_class("-disabled")
        assert not now["n"].has_class("-disabled")
