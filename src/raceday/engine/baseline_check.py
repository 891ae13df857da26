"""`raceday check`: an exercise that says its practice baselines are the same on every variant
(`replay: practice_baselines: once`) is held to it.

A session plays those baselines once, on the unshifted night, and keeps them for every
session after (`practice_baseline`). If the claim is wrong, each session's debrief would set
the team's practice night beside a baseline from another night: so the check plays each
practice night's baseline unshifted and on variants covering every name a swap can trade
in, at both ends of the clock's range, and names the first night and harm that differs.
Its answer is kept per exercise and code, as the reference-play check's is.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

from raceday.cache import cache_folder, code_digest, write_atomically
from raceday.engine.refcheck import read_problems, shown
from raceday.engine.replay_exercises import practiced
from raceday.engine.replay_outcomes import Harms
from raceday.exercise.model import Exercise, PracticeNight, ShiftSpec
from raceday.exercise.times import format_time
from raceday.judge.variant import seed_numbers

MOST_VARIANTS = 12
"""Beyond this many swap combinations, the first ones are played (each name still traded
in at least once when the groups are small enough)."""


def variants_checked(shift: ShiftSpec) -> list[ShiftSpec]:
    """The variants a practice night's baseline is played on: each combination of the
    swaps' trades (every name traded in at least once), with the clock, the count of its
    minutes and the seed's renumbering at the ends of their ranges in turn (what reaches a
    practice night: `practiced`, and its world's seed)."""
    clocks = sorted(set(shift.clock_range)) if shift.clock_range is not None \
        else [shift.clock]
    counts = sorted(set(shift.count_from_range)) if shift.count_from_range is not None \
        else [shift.count_from]
    offsets = sorted(set(shift.renumber)) if shift.renumber is not None else [0]
    combos = list(itertools.islice(itertools.product(
        *[[(group[0], other) for other in group[1:]] for group in shift.swap]), MOST_VARIANTS))
    count = max(len(clocks), len(counts), len(offsets), len(combos))
    return [ShiftSpec(clock=clocks[i % len(clocks)], swapped=tuple(combos[i % len(combos)]),
                      count_from=counts[i % len(counts)],
                      seed=seed_numbers(shift.seed, offsets[i % len(offsets)],
                                        counts[i % len(counts)]))
            for i in range(count)]


def baseline_problems(exercise: Exercise) -> list[str]:
    """`file:line: ...` for the first practice night whose baseline differs on a variant,
    when the exercise declares them the same on every one; else nothing."""
    rules = exercise.replay
    if (rules is None or rules.practice_baselines != "once" or rules.shifted is None
            or not rules.practice):
        return []
    cached = _cache_file(exercise)
    if cached is not None and (known := read_problems(cached)) is not None:
        return known
    problems = _played(exercise, rules.shifted, rules.practice,
                       rules.until if rules.until is not None else exercise.clock.length_minutes)
    if cached is not None:
        write_atomically(cached, json.dumps({"problems": problems}))
    return problems


def _played(exercise: Exercise, shifted: ShiftSpec, nights: tuple[PracticeNight, ...],
            until: int) -> list[str]:
    from raceday.engine.replay import play_baseline
    from raceday.engine.session import Session

    variants = variants_checked(shifted)
    for night in nights:
        unshifted = play_baseline(Session, practiced(exercise, night), until, "")
        for shift in variants:
            other = play_baseline(Session, practiced(exercise, night, shift), until,
                                  shift.seed)
            if other != unshifted:
                return [f"{_where(exercise, night)}: practice night \"{night.id}\": its "
                        f"baseline differs on the variant {_variant(exercise, shift)} "
                        f"({_difference(unshifted, other)}), but replay: practice_baselines "
                        "is \"once\"; remove that line so each session plays its own"]
    return []


def _where(exercise: Exercise, night: PracticeNight) -> str:
    if exercise.path is None:
        return f"exercise {exercise.id}"
    return f"{shown(exercise.path)}:{night.line}" if night.line else shown(exercise.path)


def _variant(exercise: Exercise, shift: ShiftSpec) -> str:
    said = f"starting {format_time(shift.clock, exercise.clock.start)}"
    for first, other in shift.swapped:
        said += f", '{first}' traded with '{other}'"
    if shift.count_from:
        said += f", its minutes counted from {shift.count_from}"
    return said


def _difference(unshifted: Harms, other: Harms) -> str:
    for harm in sorted(set(unshifted) | set(other)):
        mine, theirs = unshifted.get(harm), other.get(harm)
        if mine != theirs:
            return f"{harm}: {_harm(mine)} unshifted, {_harm(theirs)} there"
    return "the harms differ"


def _harm(harm: tuple[int, int | None] | None) -> str:
    if harm is None:
        return "not judged"
    minutes, first = harm
    return f"{minutes} min" + (f" from minute {first}" if first is not None else "")


def _cache_file(exercise: Exercise) -> Path | None:
    """Keyed on the exercise as loaded, raceday's code and the working directory the
    message is relative to: a second `check` of an unchanged exercise plays nothing."""
    folder = cache_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(repr(exercise).encode("utf-8"))
    for part in ("practice-baselines", code_digest(), str(Path.cwd())):
        digest.update(part.encode("utf-8", "surrogateescape"))
    return folder / "check" / f"{digest.hexdigest()}.json"
