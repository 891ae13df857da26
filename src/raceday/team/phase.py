"""The phase of a team's night in a few words, as the room's screens show it beside the
clock: from the clock the host publishes and what the customers see (the snapshot's harms)."""

from __future__ import annotations

from raceday.engine.snapshot import Snapshot
from raceday.team.client import Clock


def night_phase(clock: Clock, snapshot: Snapshot | None, *, hurt_since: str | None = None) -> str:
    """'lobby', 'paused', 'customers hurt since 23:48', 'service normal', 'night over'..."""
    if clock.ended or (snapshot is not None and snapshot.ended):
        return "scored"
    if snapshot is not None and snapshot.timeline_over:
        return "the night is over"
    if clock.lobby:
        return "lobby: waiting for the facilitator to start"
    state = "service normal"
    if snapshot is not None and not snapshot.healthy:
        state = "CUSTOMERS HURT" + (f" since {hurt_since}" if hurt_since else "")
    return f"paused · {state}" if clock.paused and clock.pace == "live" else state
