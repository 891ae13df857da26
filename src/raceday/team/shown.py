"""What the seats and the projector are shown of the session's events: the transcript keeps
every event whole; the players' screens get them without what would spoil the night."""

from __future__ import annotations

from dataclasses import replace

from raceday.team.facilitator import FALLS_DUE
from raceday.transcript import events as ev

BACKSTAGE = ("hold", "release", "plan", "schedule-live", "move", "cancel", "expect")
"""The facilitator's actions the players' screens do not show (the transcript and the console
keep them): which task is the fault's, the injects still to come, what an inject expected of
the team and its marks would spoil the night."""


def shown_to_players(event: ev.Event) -> ev.Event:
    """The event as the seats and the projector get it: an inject without what it expects of
    the team, a ruling without the facilitator's note (it may name what the team has not
    found yet), a skip without the title of the task it stops at (a player's next task is a
    spoiler on a projector). The transcript keeps them whole."""
    if isinstance(event, ev.Inject):
        return replace(event, expect=(), objective="") if event.expect else event
    if not isinstance(event, ev.Facilitation):
        return event
    if event.action == "ruling" and event.text:
        return replace(event, text="")
    if event.action == "skip" and FALLS_DUE in event.detail:
        return replace(event, detail=event.detail.split(FALLS_DUE)[0] + FALLS_DUE.rstrip(": "))
    return event
