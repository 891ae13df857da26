"""What happened in a session that the score depends on, gathered as play goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from raceday.exercise.model import Exercise, RaceStep


@dataclass
class RaceStepState:
    """One race step: was its task reached, did it run, did the damage happen."""

    step: RaceStep
    due: bool = False
    ran: bool = False
    happened_at: int | None = None

    @property
    def prevented(self) -> bool:
        return self.due and self.happened_at is None


@dataclass
class Facts:
    fault_started: int | None = None
    fault_invariant: str | None = None
    detected_at: int | None = None
    detected_by: str | None = None
    restored_at: int | None = None
    restores: list[int] = field(default_factory=list)
    relapses: list[int] = field(default_factory=list)
    healthy_at_end: bool = True
    milestones: dict[str, int] = field(default_factory=dict)
    declarations: list[tuple[int, str, bool]] = field(default_factory=list)
    hints: list[tuple[int, str]] = field(default_factory=list)
    tasks_done: dict[str, int] = field(default_factory=dict)
    edits: list[tuple[int, str]] = field(default_factory=list)
    player_writes: list[tuple[int, str, tuple[str, ...]]] = field(default_factory=list)
    good_path: list[tuple[str, str, bool, str]] = field(default_factory=list)
    replay: dict[str, Any] | None = None
    reached_end: bool = False
    ended_at: int = 0

    def race_reached(self, exercise: Exercise) -> bool:
        """Did play get far enough for "no fault" to mean something?"""
        steps = self.race_steps(exercise)
        return self.reached_end or any(s.due for s in steps) or (
            self.replay is not None and bool(steps))
    _steps: list[RaceStepState] | None = None

    def race_steps(self, exercise: Exercise) -> list[RaceStepState]:
        if self._steps is None:
            guards = exercise.scoring.guards
            self._steps = [RaceStepState(s) for s in (guards.steps if guards else ())]
        return self._steps
