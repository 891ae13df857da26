"""The exercises a replay plays, derived from the session's: the team's edited statements,
the normal night (no delayed worker), the variant night, a practice night. The same
derivation gives the same object back, so its digest (the key of what is kept) is worked out
once."""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import replace
from datetime import timedelta

from raceday.exercise.model import Exercise, PracticeChange, PracticeNight, ShiftSpec
from raceday.judge.variant import minutes_counted_from, swap_names

_DERIVED_KEPT = 32
_OFFSET = re.compile(r"(?<![:\w]):offset\b")
_derivations: OrderedDict[tuple[str, int, Hashable], tuple[Exercise, Exercise]] = OrderedDict()


def _derived(how: str, exercise: Exercise, change: Hashable,
             make: Callable[[], Exercise]) -> Exercise:
    """The same derived exercise (the same object) for the same exercise and change, replay
    after replay: its digest (`exercise_digest`, kept by identity) is then worked out once,
    not from its whole repr each time."""
    key = (how, id(exercise), change)
    seen = _derivations.get(key)
    if seen is not None and seen[0] is exercise:  # the ref keeps the id the same exercise's
        _derivations.move_to_end(key)
        return seen[1]
    made = make()
    _derivations[key] = (exercise, made)
    while len(_derivations) > _DERIVED_KEPT:
        _derivations.popitem(last=False)
    return made


def with_statements(exercise: Exercise, sql: dict[str, str]) -> Exercise:
    def make() -> Exercise:
        statements = tuple(
            replace(s, sql=sql.get(s.id, s.sql))
            for s in exercise.statements
        )
        return replace(exercise, statements=statements)

    return _derived("statements", exercise, tuple(sorted(sql.items())), make)


def without_delayed(exercise: Exercise) -> Exercise:
    """The normal night: no delayed worker's tasks, and the normal night's own tasks run."""
    if exercise.replay is None:
        return exercise
    replay = exercise.replay
    delayed = set(replay.delayed)
    return _derived("normal", exercise, None, lambda: replace(
        exercise, tasks=tuple(t for t in exercise.tasks if t.id not in delayed),
        replay=replace(replay, normal=())))


def variant_of(exercise: Exercise, shift: ShiftSpec) -> Exercise:
    return _derived("shift", exercise, shift, lambda: _shifted(exercise, shift))


def _shifted(exercise: Exercise, shift: ShiftSpec) -> Exercise:
    """The same night on another clock, with the named tasks falling due later, its minutes
    counted from another number and the drawn names traded."""
    later = dict(shift.later)
    tasks = tuple(
        replace(t, at=t.at + later[t.id],
                until=t.until + later[t.id] if t.until is not None else None)
        if t.id in later else t
        for t in exercise.tasks)
    moved = replace(_clock_moved(exercise, shift.clock), tasks=tasks)
    if shift.count_from:
        moved = _sql_mapped(moved, lambda sql: minutes_counted_from(sql, shift.count_from))
    return _names_swapped(moved, shift.swapped)


def _clock_moved(exercise: Exercise, minutes: int) -> Exercise:
    """The same night with its clock starting (and ending) `minutes` later."""
    moved = timedelta(minutes=minutes)
    return replace(exercise, clock=replace(exercise.clock, start=exercise.clock.start + moved,
                                           end=exercise.clock.end + moved))


def _names_swapped(exercise: Exercise, swapped: tuple[tuple[str, str], ...]) -> Exercise:
    """The night with the drawn names traded in every statement (the team's edits included),
    in the tasks' conditions and in the race steps' checks (the story told of the night)."""
    if not swapped:
        return exercise
    return _sql_mapped(exercise, lambda sql: swap_names(sql, swapped))


def _sql_mapped(exercise: Exercise, mapped: Callable[[str], str]) -> Exercise:
    """The night with `mapped` applied to the SQL a night runs with parameters: every
    statement (the team's edits included), the tasks' conditions, the race steps' checks and
    the good path's writes (the invariants and milestones take none)."""

    def sql(text: str | None) -> str | None:
        return mapped(text) if text is not None else None

    statements = tuple(replace(s, sql=mapped(s.sql)) for s in exercise.statements)
    tasks = tuple(replace(t, when=sql(t.when), done_when=sql(t.done_when))
                  for t in exercise.tasks)
    guards = exercise.scoring.guards
    if guards is not None:
        guards = replace(
            guards,
            steps=tuple(replace(s, happened=mapped(s.happened)) for s in guards.steps),
            good_path=tuple(replace(g, sql=tuple(mapped(q) for q in g.sql))
                            for g in guards.good_path))
    return replace(exercise, statements=statements, tasks=tasks,
                   scoring=replace(exercise.scoring, guards=guards))


def describe_shift(exercise: Exercise, shift: ShiftSpec, *, reveal: bool = True) -> str:
    """The variant night in words: its numbers only once they can no longer be played to
    (the final replay); before that, what kind of night it is."""
    own = exercise.replay.shifted if exercise.replay is not None else None
    drawn = own is not None and own.drawn
    if drawn and not reveal:
        return "a variant night drawn for this session (its numbers are shown at the end)"
    start = (exercise.clock.start + timedelta(minutes=shift.clock)).strftime("%H:%M")
    parts = [f"the clock from {start}"]
    if shift.count_from:
        parts.append(f"its minutes counted from {shift.count_from}")
    if _OFFSET.search(own.seed if own is not None else shift.seed):
        parts.append("the world's ids renumbered")
    parts += [f"{task} {minutes} min later" for task, minutes in shift.later]
    parts += [f"'{first}' and '{other}' trading places" for first, other in shift.swapped]
    name = "the variant night" if drawn else "the shifted race"
    return f"{name} ({', '.join(parts)})"


def practiced(exercise: Exercise, night: PracticeNight,
              shift: ShiftSpec | None = None) -> Exercise:
    """A practice night: the normal night (no delayed worker) with the night's changes in
    the runs they name; the statements stay the team's. It plays on the variant's clock,
    names and minutes (`shift`; its world built with the variant's seed, `practice_seed`),
    so a guard keyed on the times, names or numbers tonight gives passes nothing."""
    clock, swapped, count_from = (shift.clock, shift.swapped, shift.count_from) \
        if shift is not None else (0, (), 0)

    def make() -> Exercise:
        night_of = _names_swapped(_clock_moved(exercise, clock), swapped)
        if count_from:
            night_of = _sql_mapped(night_of,
                                   lambda sql: minutes_counted_from(sql, count_from))
        normal = without_delayed(night_of)
        changes: dict[str, list[PracticeChange]] = {}
        for change in night.changes:
            changes.setdefault(change.task, []).append(change)
        kept = {t.id for t in normal.tasks}
        tasks = []
        for t in night_of.tasks:  # the night's order: a delayed run keeps its place
            if t.id in kept and t.id in changes:
                tasks.append(replace(t, changes=tuple(changes[t.id])))
            elif t.id in kept:
                tasks.append(t)
            elif t.id in changes:  # the delayed worker, once, in the run the night names
                tasks += [replace(t, at=c.at, every=None, until=None, changes=(c,))
                          for c in changes[t.id]]
        return replace(normal, tasks=tuple(tasks))

    return _derived("practice", exercise, (night, clock, swapped, count_from), make)


def practice_seed(shift: ShiftSpec | None) -> str:
    """The trusted SQL a team's practice night's world is built with: the variant's seed
    (its minutes moved, its hosts renumbered), as the variant's race is; none without one."""
    return shift.seed if shift is not None else ""


def practice_baseline_seed(exercise: Exercise, shift: ShiftSpec | None) -> str:
    """The seed of the world a practice night's baseline (`practice_baseline`) is built
    with: the variant's, or none when the exercise plays its baselines once."""
    once = exercise.replay is not None and exercise.replay.practice_baselines == "once"
    return "" if once else practice_seed(shift)


def practice_baseline(exercise: Exercise, night: PracticeNight,
                      shift: ShiftSpec | None) -> Exercise:
    """The exercise's own practice night the team's is set beside (its baseline): on the
    session's variant, or on the unshifted night when the author declares the baselines the
    same on every variant (`replay: practice_baselines: once`, held to it by `raceday
    check`), so one played baseline serves every session, kept in the cache folder. The
    team's practice night always plays on the variant (`practiced`)."""
    once = exercise.replay is not None and exercise.replay.practice_baselines == "once"
    return practiced(exercise, night, None if once else shift)


_exercise_digests: dict[int, tuple[Exercise, str]] = {}


def exercise_digest(exercise: Exercise) -> str:
    """A fingerprint of everything the exercise says (its repr: frozen values all the way)."""
    known = _exercise_digests.get(id(exercise))
    if known is not None and known[0] is exercise:
        return known[1]
    digest = hashlib.sha256(repr(exercise).encode("utf-8")).hexdigest()
    if len(_exercise_digests) > 64:
        _exercise_digests.clear()
    _exercise_digests[id(exercise)] = (exercise, digest)  # the ref keeps the id unique
    return digest
