"""The exercise's charts (its `chart` panel items) as events, written once at the end of a
session: the debrief draws them from the transcript, with no world at hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from raceday.transcript import events as ev

if TYPE_CHECKING:
    from raceday.engine.snapshot import WorldSource


def chart_events(session: WorldSource) -> list[ev.Chart]:
    """One event per chart item, read from the world as it is now (empty when it has none)."""
    items = tuple(i for i in session.exercise.panel if i.show == "chart")
    if not items:
        return []
    # the panel's snapshot (~5 ms of dataclasses): only an exercise with charts reads it
    from raceday.engine.snapshot import WorldPlan, read_world

    world = read_world(session, WorldPlan(items=items))
    return [ev.Chart(label=c.label, series=c.series, minutes=c.minutes, values=c.values,
                     clock=c.clock, mark_minutes=tuple(m for m, _ in c.marks),
                     mark_titles=tuple(t for _, t in c.marks))
            for c in world.charts]
