"""What the play screen asks of whoever runs its session: the hot seat's own `SessionRunner`
(the session in this process), or a team seat's `SeatRunner` (the session on the host).

Both post the same messages (`tui/messages.py`) to the screen, so the screen cannot tell
them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from raceday.engine.actions import Action
    from raceday.engine.clock import Pace
    from raceday.engine.session import Session
    from raceday.engine.unknown_night import DrawnNight
    from raceday.exercise.model import Exercise
    from raceday.transcript import events as ev


class PlayRunner(Protocol):
    @property
    def session(self) -> Any:
        """Not None once the session is open (the hot seat's runner: the `Session`)."""

    @property
    def statement_running(self) -> bool: ...

    def open(self, exercise: Exercise, players: Sequence[str], transcripts: Path,
             pace: Pace, night: DrawnNight | None = None) -> None: ...

    def execute(self, role: str, sql: str) -> None: ...

    def perform(self, action: str, act: Action) -> None:
        """A player's action (`engine/actions.py`): done by the session, or sent to the
        host as the action's record; answered by `ActionDone(action, event)`."""

    def act(self, action: str, call: Callable[[Session], ev.Event | None],
            *, tables: bool = False) -> None:
        """Any other session call (the hot seat's facilitator: the cast, the clock's hand,
        injects, notes); a seat leaves it to its host."""

    def replay(self) -> None: ...

    def tick(self, minute: int) -> None: ...

    def interrupt(self) -> None: ...

    def end(self, reason: str = "ended") -> None: ...
