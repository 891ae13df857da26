"""The key footer, built again only when the keys it shows change."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


def shown_keys(screen: Screen[Any]) -> tuple[Any, ...]:
    """What a footer on `screen` shows: each shown binding's key, words and state (a focus
    move that only changes hidden bindings, an editor's, shows the same keys)."""
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (key, binding.action, binding.description, enabled, tooltip, binding.group,
         binding.key_display)
        for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette)


class SteadyFooter(Footer):
    """Textual's Footer, recomposed only when what it shows has changed.

    Footer rebuilds every key (a widget each, each restyled) whenever the screen says its
    bindings may have changed: twice on each switch to a screen and again on focus moves,
    ~20 ms a time here. That time is taken from the thread a worker (the replay's) waits on
    for the GIL, and a screen's keys seldom change."""

    _composed: tuple[Any, ...] | None = None
    _pending = False  # a rebuild is asked for and not done yet: it will read the keys then

    def compose(self) -> ComposeResult:
        self._pending = False
        if self._bindings_ready:
            self._composed = shown_keys(self.screen)
        yield from super().compose()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """As Footer's, but no rebuild for the keys already shown, nor a second one while
        one is waiting (a screen switch says its bindings changed twice in a row)."""
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._pending or shown_keys(screen) == self._composed:
            return
        self._pending = True
        self.call_after_refresh(self.recompose)
