"""A seat as the host issued it: its role, its player and its token.

Its own module so that the host and the facilitator's actions (mixed into the host) both
name it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Seat:
    """A seat as the host knows it, token included (the host alone holds tokens)."""

    name: str
    role: str
    token: str
    player: str | None = None
    joined_at: float | None = None
    last_nonce: int = 0
    beat_every: float | None = None
    """Seconds between the seat's heartbeats, as its join said; None: nobody watches it."""
    last_heard: float = 0.0
    lost: bool = False
    ready: bool = False
    acted: bool = False
    """The seat has sent an action (a statement, a monitor, a declaration...): a person is
    there, and a step they leave undone is their choice (a refusal), never the grace's."""
    """The player said, in the lobby, they are ready to start (the console's ready check)."""
