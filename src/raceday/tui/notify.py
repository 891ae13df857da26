"""Notifications whose text is data: shown inert, never read as markup."""

from __future__ import annotations

from textual.app import App
from textual.notifications import SeverityLevel

from raceday.inert import inert


class InertNotifications(App[int]):
    """An app whose toasts show errors and names as they are: an error message can carry
    a player's text, and `[/]` or an escape code in it must neither crash nor be obeyed."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        super().notify(inert(message), title=inert(title, one_line=True), severity=severity,
                       timeout=timeout, markup=False)
