"""Onboarding: the first steps of a session, one at a time, each done by doing it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.events import Event


@dataclass(frozen=True)
class GuideStep:
    text: str
    done: Callable[[Event], bool]


def _kind(*kinds: type[Event]) -> Callable[[Event], bool]:
    return lambda event: isinstance(event, kinds)


def _player_statement(event: Event) -> bool:
    return isinstance(event, ev.Statement) and not event.automated


def guide_steps(exercise: Exercise, role: str) -> list[GuideStep]:
    name = exercise.role(role).name if role in exercise.role_ids else role
    steps = [
        GuideStep(
            f"Step 1 of 5. You are the {name}. The editor holds your role's first query, "
            "selected: press F5 (or ctrl+enter) to run it (typing replaces it). Its rows "
            "appear below it.",
            _player_statement,
        ),
        GuideStep(
            "Step 2 of 5. Good. The world panel shows what the world looks like now, and the "
            "feed what happens. Press ctrl+n to let the clock run to the next event.",
            _kind(ev.Wait, ev.Inject),
        ),
        GuideStep(
            "Step 3 of 5. Alarms are red. Write a query that returns only what is wrong, "
            "then press F7 to save it as a monitor: it alerts whenever it returns rows.",
            _kind(ev.MonitorSaved),
        ),
        GuideStep(
            "Step 4 of 5. When you know what is wrong, press F8 to declare it (a wrong "
            "finding costs points). Stuck? F9 reveals a hint; each costs points too.",
            _kind(ev.Declaration),
        ),
        GuideStep(
            "Step 5 of 5. Now stop what is doing harm, then repair the world by hand; add "
            "guards (triggers, constraints) so it cannot happen again. ctrl+q ends and scores.",
            _kind(ev.Restored, ev.ScoreEvent),
        ),
    ]
    return steps


class Guide:
    """Which step the newcomer is on; `observe` every event, show `current`."""

    def __init__(self, steps: list[GuideStep]) -> None:
        self.steps = steps
        self.index = 0

    @property
    def current(self) -> str | None:
        return self.steps[self.index].text if self.index < len(self.steps) else None

    def observe(self, event: Event) -> bool:
        """True when the step changed."""
        if self.index < len(self.steps) and self.steps[self.index].done(event):
            self.index += 1
            return True
        return False
