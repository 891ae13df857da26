"""What a screen asks of the app it is shown in: the next screen, the settings, the real
clock, and the end of the app when the exercise does not load.

The app (`tui/app.py`) imports its screens; a screen reaches the app only through this
protocol, never by importing it, so the two are not a circle (`pyproject.toml`'s
acyclic_siblings contract holds `raceday.tui`). Everything else a screen asks of Textual's
`App` (push a dialog, pop itself, exit) it asks of `self.app` as any Textual screen does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

    from textual.app import App

    from raceday.exercise.model import Exercise
    from raceday.tui.settings import Settings


@runtime_checkable
class Navigator(Protocol):
    """The raceday app as its screens see it (`RacedayApp`, and a team seat's `SeatApp`)."""

    settings: Settings
    """How the next session is played (the launcher changes them)."""
    exercise: Exercise | None
    """The exercise the briefing shows, once it is loaded (the briefing sets it)."""
    wall: Callable[[], float]
    """The real clock the live pace reads (a fake one in tests)."""
    live_ticks: bool
    """Whether the live pace ticks by itself (tests tick it by hand)."""

    def open_briefing(self, exercise: Exercise) -> None:
        """The launcher's choice: its briefing, over the launcher."""

    def open_cast(self, exercise: Exercise) -> None:
        """Team mode's next step after the briefing: who plays which role."""

    def start_play(self, exercise: Exercise, cast: dict[str, str]) -> None:
        """Play `exercise` with `cast` (role -> name), leaving the briefing behind."""

    def resume_play(self, exercise: Exercise, folder: Path) -> None:
        """Go on with the session in `folder`, which a crash cut short."""

    def load_failed(self, error: Exception) -> None:
        """The exercise the briefing was loading does not load: the app ends (and the
        command that started it says why)."""


def navigator(app: App[Any]) -> Navigator:
    """`app` as a screen's navigator (a screen is only ever shown in raceday's app)."""
    assert isinstance(app, Navigator), f"{type(app).__name__} is not raceday's app"
    return app
