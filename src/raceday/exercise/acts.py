"""Exercises that continue one another: the next act of the same night.

An exercise follows another when its clock starts inside the other's night (after that one
starts, no later than it ends) and ends after it, in the same zone: the DNS race ends at
02:45 and the recovery under load starts at 02:25, so the launcher and the end screen offer
the second as the next act of the first. Nothing here names an exercise: the clocks say it.
"""

from __future__ import annotations

from collections.abc import Iterable

from raceday.exercise.model import Exercise


def follows(later: Exercise, earlier: Exercise) -> bool:
    """Does `later` start inside `earlier`'s night and carry it on past its end?"""
    a, b = earlier.clock, later.clock
    return (later.id != earlier.id and a.zone == b.zone
            and a.start < b.start <= a.end < b.end)


def next_act(exercise: Exercise, others: Iterable[Exercise]) -> Exercise | None:
    """The exercise that continues this one's night (the earliest to start), if any."""
    after = [o for o in others if follows(o, exercise)]
    return min(after, key=lambda o: (o.clock.start, o.id)) if after else None


def previous_act(exercise: Exercise, others: Iterable[Exercise]) -> Exercise | None:
    """The exercise whose night this one continues (the latest to start), if any."""
    before = [o for o in others if follows(exercise, o)]
    return max(before, key=lambda o: (o.clock.start, o.id)) if before else None
