"""What the played nights say: each race step's fate, each harm's minutes beside the
exercise's own night, the good writes a normal night made and the team's world refused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from raceday.engine.clock import clock_time
from raceday.engine.night import Night
from raceday.engine.statement_text import deleted_table
from raceday.exercise.model import Exercise
from raceday.judge.facts import step_statuses
from raceday.transcript import events as ev
from raceday.transcript.events import BlockedWrite, StepReplay
from raceday.transcript.verdicts import HarmNight
from raceday.transcript.wording import describe_run

Run = tuple[list[ev.Statement], ev.Automation]


def task_runs(session: Night, task_id: str) -> list[Run]:
    """Each run of a task: its statement events and the closing automation event."""
    runs: list[Run] = []
    current: list[ev.Statement] = []
    for event in session.events:
        if isinstance(event, ev.Statement) and event.task == task_id:
            current.append(event)
        elif isinstance(event, ev.Automation) and event.task == task_id:
            runs.append((current, event))
            current = []
    return runs


def faults_at(session: Night, minute: int) -> tuple[str, ...]:
    """Faults present right after `minute` (from the fault and clear events)."""
    present: dict[str, str] = {}
    for event in session.events:
        if event.minute > minute:
            break
        if isinstance(event, ev.Fault):
            present[event.invariant] = event.fault
        elif isinstance(event, ev.InvariantClear):
            present.pop(event.invariant, None)
    return tuple(present.values())


def step_replays(exercise: Exercise, race: Night) -> tuple[StepReplay, ...]:
    steps: list[StepReplay] = []
    states = race.facts.race_steps(exercise)
    statuses = step_statuses(states)
    by_id = {s.step.id: s for s in states}
    for state in states:
        step = state.step
        status = statuses[step.id]
        runs = [r for r in task_runs(race, step.task) if r[1].outcome != "skipped"]
        chosen = None
        if status == "happened":
            chosen = next((r for r in runs if r[1].minute == state.happened_at), None)
        elif status == "prevented":
            upstream = by_id.get(step.after) if step.after else None
            if upstream is not None and statuses[upstream.step.id] == "prevented":
                steps.append(StepReplay(id=step.id, title=step.title, status=status,
                                        outcome=f"the race stopped at {upstream.step.id}"))
                continue
            since = upstream.happened_at if upstream and upstream.happened_at is not None else -1
            candidates = [r for r in runs if r[1].minute >= since]
            # show the run where the guard spoke: refused or changed nothing, else the first
            chosen = next((r for r in candidates if r[1].outcome != "applied"),
                          candidates[0] if candidates else None)
        if chosen is None:
            steps.append(StepReplay(id=step.id, title=step.title, status=status,
                                    outcome="never ran"))
            continue
        statements, closing = chosen
        steps.append(StepReplay(id=step.id, title=step.title, status=status,
                                at=closing.sim_time, outcome=describe_run(statements),
                                next=closing.next, faults_after=faults_at(race, closing.minute)))
    return tuple(steps)


Harms = dict[str, tuple[int, int | None]]


def harms_of(exercise: Exercise, race: Night, until: int) -> dict[str, tuple[int, int | None]]:
    """Each harm's minutes in a played race night, and when it first began."""
    return {i.id: (race.harm_clock.minutes(i.id, until), race.harm_clock.first(i.id))
            for i in exercise.invariants}


def harm_nights(exercise: Exercise, race: Night, baseline: dict[str, tuple[int, int | None]],
                 until: int, night: str, practice: str = "") -> tuple[HarmNight, ...]:
    """Each harm of one race night beside the same night on the exercise's own world."""
    return harm_nights_of(harm_times(exercise, race, until), baseline, night, practice)


HarmTimes = dict[str, tuple[int, str | None]]
"""Each harm's minutes in a played night, and the time it first began (its clock's)."""


def harm_times(exercise: Exercise, race: Night, until: int) -> HarmTimes:
    """`harms_of`, the beginnings as the night's clock shows them: what `harm_nights` reads
    of a night (small enough to be sent back by a night played in a child)."""
    return {harm: (minutes, race.time_of(first) if first is not None else None)
            for harm, (minutes, first) in harms_of(exercise, race, until).items()}


def baseline_times(exercise: Exercise, baseline: Harms) -> HarmTimes:
    """The harm times of the night `baseline` was played from (`exercise`, on its own world):
    what playing that night again would give."""
    start = exercise.clock.start
    return {harm: (minutes, clock_time(start, first) if first is not None else None)
            for harm, (minutes, first) in baseline.items()}


def harm_nights_of(mine: HarmTimes, baseline: Harms, night: str,
                   practice: str = "") -> tuple[HarmNight, ...]:
    return tuple(
        HarmNight(harm=harm, night=night, minutes=minutes,
                  baseline=baseline.get(harm, (0, None))[0], first_at=first_at,
                  practice=practice)
        for harm, (minutes, first_at) in mine.items())


def kept_some_away(nights: tuple[HarmNight, ...]) -> bool:
    return any(n.minutes < n.baseline for n in nights)


RunKey = tuple[str, int, int]  # task, minute, attempt


def runs_by_key(session: Night) -> dict[RunKey, Run]:
    """Every task's runs (as `task_runs` gives them), in one pass over the night."""
    tasks = {t.id for t in session.exercise.tasks}
    current: dict[str, list[ev.Statement]] = {}
    found: dict[RunKey, Run] = {}
    for event in session.events:
        if isinstance(event, ev.Statement):
            if event.task in tasks:
                current.setdefault(event.task, []).append(event)
        elif isinstance(event, ev.Automation) and event.task in tasks:
            found[(event.task, event.minute, event.attempt)] = (
                current.pop(event.task, []), event)
    return found


GoodRun = tuple[str, int, int, tuple[str, ...], tuple[tuple[str, str, int], ...]]
"""A run that changed rows on the original world (task, minute, attempt), with the statements
of it that changed rows, and those that deleted rows (`deletions`)."""

Deletions = tuple[tuple[str, str, int], ...]
"""(statement, table, rows) for each statement of a run that deleted rows."""

def deletions(statements: list[ev.Statement]) -> Deletions:
    """The run's statements that deleted rows, with the table their DELETE names and how
    many: what a delete that waits must still delete later."""
    return tuple((e.statement, table, e.rowcount) for e in statements
                 if e.ok and e.rowcount and e.statement
                 and (table := deleted_table(e.sql)) is not None)


def _changed_statements(statements: list[ev.Statement]) -> tuple[str, ...]:
    """The run's statements that changed rows (an edit that became several statements counts
    as one: its parts carry the same id)."""
    return tuple(dict.fromkeys(
        e.statement for e in statements if e.ok and e.writes and e.rowcount and e.statement))


def good_runs(original: Night) -> list[GoodRun]:
    """The runs that changed rows on the original world, in the order of the night."""
    before = runs_by_key(original)
    return [(*key, _changed_statements(before[key][0]), deletions(before[key][0]))
            for key in sorted(before, key=lambda k: (k[1], k[0], k[2]))
            if before[key][1].outcome != "failed" and before[key][1].changed]


Outcomes = dict[RunKey, tuple[str | None, tuple[str, ...], bool, Deletions]]
"""Each run of a normal night on the team's world: None when it changed rows, else what it
did instead (why a good write would not have taken); the statements that changed rows;
whether it failed (an error, a refusal) rather than ran; and the rows it deleted."""

DEFERRED_AT_MOST = 180
"""Minutes a delete of the normal night may wait and still count as done, not refused (a
soft delete whose purge comes two hours later)."""


def run_outcomes(team: Night) -> Outcomes:
    return {key: (None if now.outcome != "failed" and now.changed else describe_run(statements),
                  _changed_statements(statements), now.outcome == "failed",
                  deletions(statements))
            for key, (statements, now) in runs_by_key(team).items()}


def _deleted_by(runs: list[tuple[int, Deletions]]) -> dict[str, list[tuple[int, int]]]:
    """table -> (minute, rows deleted from it by then), in the night's order."""
    total: dict[str, int] = {}
    by: dict[str, list[tuple[int, int]]] = {}
    for minute, deleted in sorted(runs, key=lambda run: run[0]):
        for _statement, table, rows in deleted:
            total[table] = total.get(table, 0) + rows
            by.setdefault(table, []).append((minute, total[table]))
    return by


def _rows_by(deleted: list[tuple[int, int]], minute: int) -> int:
    """Rows deleted from a table by `minute` (inclusive), from `_deleted_by`'s list."""
    return max((rows for at, rows in deleted if at <= minute), default=0)


def _deferred(minute: int, lost: list[str], deleted: Deletions,
              original: dict[str, list[tuple[int, int]]],
              team: dict[str, list[tuple[int, int]]]) -> bool:
    """Every statement `lost` in a run was a delete, and the team's night did its deleting
    later, not never: for each table, as many rows deleted by DEFERRED_AT_MOST minutes after
    as the original night had by then (a soft delete's purge). Only a delete waits: a write
    of another kind that did not take is superseded, not deferred."""
    deleting = {statement for statement, _table, _rows in deleted}
    return bool(lost) and set(lost) <= deleting and all(
        _rows_by(team.get(table, []), minute + DEFERRED_AT_MOST)
        >= _rows_by(original.get(table, []), minute)
        for _statement, table, _rows in deleted)


def blocked_writes(good: list[GoodRun], outcomes: Outcomes,
                   time_of: Callable[[int], str]) -> tuple[BlockedWrite, ...]:
    """Runs that changed rows on the original world (`good`) and changed none (or failed) on
    the team's, or in which a statement that changed rows changed none, unless what it did
    was delete and the team's night deleted as much soon after (`_deferred`).

    Statements are compared by id, not by text: the team may have edited a statement into
    several (mark, then purge), and a statement that still changed rows is not blocked; but
    a run that changed something is no alibi for a statement of it that no longer does.
    """
    blocked = []
    original = _deleted_by([(minute, deleted) for _t, minute, _a, _c, deleted in good])
    team = _deleted_by([(minute, now[3]) for (_t, minute, _a), now in outcomes.items()])
    for task, minute, attempt, changed, deleted in good:
        key = (task, minute, attempt)
        if key not in outcomes:
            blocked.append(BlockedWrite(task=task, at=time_of(minute),
                                        outcome="no statement ran", lost=changed))
            continue
        outcome, now_changed, failed, _deleted = outcomes[key]
        lost = [s for s in changed if s not in now_changed]
        if not failed and _deferred(minute, lost, deleted, original, team):
            continue  # deleted later, as a soft delete's purge does: nothing was refused
        if outcome is None and lost:
            outcome = f"{', '.join(lost)} changed 0 rows"
        if outcome is not None:
            blocked.append(BlockedWrite(task=task, at=time_of(minute), outcome=outcome,
                                        lost=tuple(lost)))
    return tuple(blocked)


_RANK = {"prevented": 0, "not reached": 1, "happened": 2}


def hidden_times(harms: tuple[HarmNight, ...], reveal: bool) -> tuple[HarmNight, ...]:
    """Before the end, a variant night's times are not shown: they would tell its clock."""
    if reveal:
        return harms
    return tuple(replace(h, first_at=None) if h.night != "tonight's race" else h for h in harms)


def merge_steps(steps: tuple[StepReplay, ...], shifted: tuple[StepReplay, ...],
                 what: str, reveal: bool = True) -> tuple[StepReplay, ...]:
    """Each step as the worse of the two races saw it: prevented only when prevented in both."""
    other = {s.id: s for s in shifted}
    merged = []
    for step in steps:
        seen = other.get(step.id)
        if seen is None or _RANK.get(seen.status, 0) <= _RANK.get(step.status, 0):
            merged.append(step)
            continue
        tonight = (f" (tonight's race: {step.status}"
                   f"{' at ' + step.at if step.at else ''})")
        if not reveal:  # its time and outcome could tell the variant's numbers
            seen = replace(seen, at=None, outcome="", next=None, faults_after=())
        merged.append(replace(seen, outcome=f"in {what}{tonight}: {seen.outcome}".rstrip(": ")))
    return tuple(merged)


NormalHarms = tuple[HarmNight, ...]
TeamNight = tuple[Outcomes, tuple[ev.MonitorCheck, ...], NormalHarms]
Nights = tuple[tuple[BlockedWrite, ...], tuple[ev.MonitorCheck, ...], NormalHarms]


def normal_night_harms(team: Night, until: int, night: str) -> NormalHarms:
    """The customers' harms (outage invariants) the team's world showed on a normal night:
    the exercise's own normal night has none, so each is the guards' doing."""
    found = []
    for invariant in team.exercise.invariants:
        minutes = team.harm_clock.minutes(invariant.id, until)
        first = team.harm_clock.first(invariant.id)
        if invariant.outage and minutes:
            found.append(HarmNight(harm=invariant.id, night=night, minutes=minutes,
                                   first_at=team.time_of(first) if first is not None else None))
    return tuple(found)
