"""The exercise's charts (its `chart` panel items) as events, written once at the end of a
session: the debrief draws them from the transcript, with no world at hand."""

from __future__ import annotations

from raceday.engine.snapshot import WorldPlan, WorldSource, read_world
from raceday.transcript import events as ev


def chart_events(session: WorldSource) -> list[ev.Chart]:
    """One event per chart item, read from the world as it is now (empty when it has none)."""
    items = tuple(i for i in session.exercise.panel if i.show == "chart")
    if not items:
        return []
    world = read_world(session, WorldPlan(items=items))
    return [ev.Chart(label=c.label, series=c.series, minutes=c.minutes, values=c.values,
                     clock=c.clock, mark_minutes=tuple(m for m, _ in c.marks),
                     mark_titles=tuple(t for _, t in c.marks))
            for c in world.charts]
