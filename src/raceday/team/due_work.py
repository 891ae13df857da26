"""Each seat's due and overdue work, as the facilitator's console lists it: a task of the
seat's role that fell due and is not done, late by how many simulated minutes."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from raceday.engine.snapshot import Snapshot
from raceday.exercise.model import Exercise
from raceday.exercise.times import format_time

OVERDUE_MINUTES = 5
"""A one-off task still open after this many simulated minutes is overdue (a repeating task
is overdue once its next run would have fallen due)."""


@dataclass(frozen=True)
class DueWork:
    role: str
    task: str
    title: str
    due: str
    late: int
    overdue: bool
    since: str = ""
    """When it first fell due without being done since (a repeating task's first miss)."""

    def words(self) -> str:
        if self.overdue:
            return f"OVERDUE since {self.since or self.due} ({self.late} min): {self.title}"
        return f"due {self.due}: {self.title}"


def due_work(snapshot: Snapshot, exercise: Exercise, roles: Mapping[str, str],
             handled: Collection[str] = ()) -> dict[str, list[DueWork]]:
    """seat -> its open tasks, the most overdue first (`roles`: seat -> role); `handled`:
    tasks the seat's own panel has ticked (left out, as the player sees them)."""
    every = {t.id: t.every for t in exercise.tasks}
    by_role: dict[str, list[DueWork]] = {}
    for pending in snapshot.pending:
        if pending.task in handled:
            continue
        late = max(0, snapshot.minute - pending.minute) if pending.minute >= 0 else 0
        limit = every.get(pending.task) or OVERDUE_MINUTES
        since = format_time(pending.minute, exercise.clock.start) if pending.minute >= 0 else ""
        by_role.setdefault(pending.role, []).append(DueWork(
            pending.role, pending.task, pending.title, pending.due, late, late >= limit,
            since))
    return {seat: sorted(by_role.get(role, []), key=lambda w: -w.late)
            for seat, role in roles.items()}
