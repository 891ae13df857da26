"""Which exercise to play next: where a newcomer starts, and what follows what they finished.

The launcher asks this once it has read the history. Nothing here names an exercise: the
levels (beginner first) and the acts of one night (exercise/acts.py) decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from raceday.exercise.acts import next_act
from raceday.exercise.catalog import ExerciseEntry

LEVEL_ORDER = ("beginner", "intermediate", "advanced")
"""The order a person climbs in; an exercise with another (or no) level comes last."""


@dataclass(frozen=True)
class Suggestion:
    """The exercise to offer first, and why (one line for the launcher)."""

    id: str
    why: str
    first_run: bool = False
    """Nothing was finished yet: the launcher opens it in the guided (onboarding) mode."""


def suggest(entries: Sequence[ExerciseEntry], finished: Sequence[str]) -> Suggestion | None:
    """The next exercise for someone who finished `finished` (exercise ids, oldest first).

    Nothing finished: the easiest exercise that loads. Otherwise the next act of the last
    one finished, if not finished yet; else the easiest not finished yet; else None."""
    playable = [e for e in entries if e.ok and e.exercise is not None]
    if not playable:
        return None
    done = set(finished)
    by_level = sorted(playable, key=_climb)
    if not done:
        first = by_level[0]
        return Suggestion(first.id, f"Start here: {_named(first)}, guided.", first_run=True)
    last = next((e for e in playable if e.id == finished[-1]), None)
    if last is not None and last.exercise is not None:
        after = next_act(last.exercise, [e.exercise for e in playable if e.exercise])
        if after is not None and after.id not in done:
            entry = next(e for e in playable if e.id == after.id)
            return Suggestion(entry.id, f"Next: {_named(entry)}, the next act of "
                                        f"{last.title or last.id}.")
    left = [e for e in by_level if e.id not in done]
    if not left:
        return None
    return Suggestion(left[0].id, f"Next: {_named(left[0])}.")


def _climb(entry: ExerciseEntry) -> int:
    """Beginner first; the catalogue's order (a stable sort) within a level."""
    return LEVEL_ORDER.index(entry.level) if entry.level in LEVEL_ORDER else len(LEVEL_ORDER)


def _named(entry: ExerciseEntry) -> str:
    about = ", ".join(filter(None, [f"{entry.length} min" if entry.length else "",
                                    entry.level]))
    return f"{entry.title or entry.id} ({about})" if about else (entry.title or entry.id)
