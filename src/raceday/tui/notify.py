"""The base of every raceday app: data is shown inert, never read as markup or obeyed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.notifications import Notify, SeverityLevel

from raceday.inert import inert
from raceday.tui.edge import clean_update

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.screen import Screen


TOASTS_AT_ONCE = 2
"""Toasts shown at once: a newer one takes the oldest's place, so a burst of them never
piles up the screen over the editor (each is in the feed or the screen it is about too)."""


class InertNotifications(App[int]):
    """An app whose toasts show errors and names as they are (an error message can carry
    a player's text, and `[/]` or an escape code in it must neither crash nor be obeyed),
    and whose every drawn line passes the draw edge (`raceday.tui.edge`)."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        super().notify(inert(message), title=inert(title, one_line=True), severity=severity,
                       timeout=timeout, markup=False)

    def _on_notify(self, event: Notify) -> None:
        for old in list(self._notifications)[:max(0, len(self._notifications) + 1
                                                     - TOASTS_AT_ONCE)]:
            self._unnotify(old, refresh=False)
        super()._on_notify(event)

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        super()._display(screen, clean_update(renderable))  # type: ignore[arg-type]
