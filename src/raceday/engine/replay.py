"""Replay the race against the team's database and judge each guard by its effect.

The replay is an ordinary session with no players: the same timeline, the same store path,
the team's schema and edited statements, the exercise's seed data. Then the normal night
(without the delayed worker) is played twice, on the original world and on the team's, and
every write that took on the first but not on the second is a good write the guards block.

When the exercise defines a shifted race (`replay: shifted`), all of it is played a second
time on other numbers (the clock elsewhere, the delayed worker later, the seed renumbered):
a race step is prevented only when it is prevented in both races, and a good write refused
on either normal night is refused. A guard keyed on tonight's plan numbers or times is not a
guard.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.clock import Pace
from raceday.engine.facts import step_statuses
from raceday.exercise.model import Exercise, ShiftSpec, Statement
from raceday.store.replay_world import build_replay_world, remove_earlier_worlds, remove_world
from raceday.store.sqlite_store import WorldStore
from raceday.transcript import events as ev
from raceday.transcript.events import BlockedWrite, ReplayResult, StepReplay
from raceday.transcript.log import EventLog
from raceday.transcript.wording import describe_run

if TYPE_CHECKING:  # the session calls the replay: at run time this module never imports it
    from raceday.engine.session import Session


def _with_statements(exercise: Exercise, sql: dict[str, str]) -> Exercise:
    statements = tuple(
        Statement(s.id, s.role, sql.get(s.id, s.sql), s.description, s.line)
        for s in exercise.statements
    )
    return replace(exercise, statements=statements)


def _without_delayed(exercise: Exercise) -> Exercise:
    """The normal night: no delayed worker's tasks, and the normal night's own tasks run."""
    if exercise.replay is None:
        return exercise
    delayed = set(exercise.replay.delayed)
    return replace(exercise, tasks=tuple(t for t in exercise.tasks if t.id not in delayed),
                   replay=replace(exercise.replay, normal=()))


def _shift(exercise: Exercise, shift: ShiftSpec) -> Exercise:
    """The same night on another clock, with the named tasks falling due later."""
    moved = timedelta(minutes=shift.clock)
    clock = replace(exercise.clock, start=exercise.clock.start + moved,
                    end=exercise.clock.end + moved)
    later = dict(shift.later)
    tasks = tuple(
        replace(t, at=t.at + later[t.id],
                until=t.until + later[t.id] if t.until is not None else None)
        if t.id in later else t
        for t in exercise.tasks)
    return replace(exercise, clock=clock, tasks=tasks)


def _describe_shift(exercise: Exercise, shift: ShiftSpec) -> str:
    start = (exercise.clock.start + timedelta(minutes=shift.clock)).strftime("%H:%M")
    parts = [f"the clock from {start}"]
    if shift.seed.strip():
        parts.append("the plans renumbered")
    parts += [f"{task} {minutes} min later" for task, minutes in shift.later]
    return f"the shifted race ({', '.join(parts)})"


Probe = tuple[int, str, str, str]


def _play(kind: type[Session], exercise: Exercise, world: Path, folder: Path, until: int,
          *, judge_world: bool = True, probes: tuple[Probe, ...] = ()) -> Session:
    """Play the timeline with every role automated, to `until`, and close it.

    `judge_world` False: a normal night, where only the runs' outcomes are compared, so the
    world's checks (truth, invariants, milestones) are not run."""
    folder.mkdir(parents=True)
    store = WorldStore.open(world, exercise.roles)
    session = kind(exercise, store, EventLog(folder), (), Pace.TURNS)
    session.judge_world = judge_world
    session.probes = list(probes)
    session.start()
    session.advance_to(until)
    session.store.close()
    session.log.close()
    return session


Run = tuple[list[ev.Statement], ev.Automation]


def _runs(session: Session, task_id: str) -> list[Run]:
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


def _faults_at(session: Session, minute: int) -> tuple[str, ...]:
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


def _step_replays(exercise: Exercise, race: Session) -> tuple[StepReplay, ...]:
    steps: list[StepReplay] = []
    states = race.facts.race_steps(exercise)
    statuses = step_statuses(states)
    by_id = {s.step.id: s for s in states}
    for state in states:
        step = state.step
        status = statuses[step.id]
        runs = [r for r in _runs(race, step.task) if r[1].outcome != "skipped"]
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
                                next=closing.next, faults_after=_faults_at(race, closing.minute)))
    return tuple(steps)


def _blocked(original: Session, team: Session) -> tuple[BlockedWrite, ...]:
    """Runs that changed rows on the original world and changed none (or failed) on the team's.

    Whole runs are compared, not statements: the team may have edited a statement into
    several (mark, then purge), and a run that still changed what it should is not blocked.
    """

    def runs(session: Session) -> dict[tuple[str, int, int], Run]:
        found: dict[tuple[str, int, int], Run] = {}
        for task_id in {t.id for t in session.exercise.tasks}:
            for run in _runs(session, task_id):
                found[(task_id, run[1].minute, run[1].attempt)] = run
        return found

    before = runs(original)
    after = runs(team)
    blocked = []
    for key in sorted(before, key=lambda k: (k[1], k[0], k[2])):
        _, was = before[key]
        if was.outcome == "failed" or not was.changed:
            continue
        if key not in after:
            blocked.append(BlockedWrite(task=key[0], at=team.time_of(key[1]),
                                        outcome="no statement ran"))
            continue
        statements, now = after[key]
        if now.outcome == "failed" or not now.changed:
            blocked.append(BlockedWrite(task=key[0], at=team.time_of(key[1]),
                                        outcome=describe_run(statements)))
    return tuple(blocked)


_RANK = {"prevented": 0, "not reached": 1, "happened": 2}


def _merge_steps(steps: tuple[StepReplay, ...], shifted: tuple[StepReplay, ...],
                 what: str) -> tuple[StepReplay, ...]:
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
        merged.append(replace(seen, outcome=f"in {what}{tonight}: {seen.outcome}".rstrip(": ")))
    return tuple(merged)


def _normal_nights(kind: type[Session], exercise: Exercise, team_exercise: Exercise, live: Path,
                   folder: Path, until: int, renumber: str,
                   probes: tuple[Probe, ...] = ()) -> tuple[tuple[BlockedWrite, ...],
                                                             tuple[ev.MonitorCheck, ...]]:
    """The normal night on the original world and on the team's: the good writes refused,
    and the team's alerts run again on the team's normal night at their minutes."""
    pristine = folder / "normal-pristine.db"
    WorldStore.create(pristine, exercise.world_sql, exercise.roles).close()
    if renumber.strip():
        original_world = folder / "normal-original.db"
        build_replay_world(pristine, exercise.world_sql, original_world, renumber)
    else:
        original_world = pristine
    original = _play(kind, _without_delayed(exercise), original_world, folder / "normal-original",
                     until, judge_world=False)
    team_world = folder / "normal-team.db"
    build_replay_world(live, exercise.world_sql, team_world, renumber)
    team = _play(kind, _without_delayed(team_exercise), team_world, folder / "normal-team",
                 max([until, *(p[0] for p in probes)]), judge_world=False, probes=probes)
    for world in (pristine, original_world, team_world):  # never read again
        remove_world(world)
    return _blocked(original, team), tuple(team.probe_results)


def replay_race(session: Session, probes: tuple[Probe, ...] = (), *,
                keep_world: bool = True) -> ReplayResult:
    """Replay the race on a copy of the team's world; the live world is not touched.

    `probes` (minute, name, role, sql): the team's alerts on the fault and the looks behind
    its diagnoses, run again on the team's normal night at the same minutes (the result's
    `monitor_checks`). Only the race's world is kept (for the replay walk), and only until
    the next replay; `keep_world=False` (the final replay, never walked) keeps none."""
    exercise = session.exercise
    root = session.folder / "replay"
    remove_earlier_worlds(root)
    n = 1
    while (root / str(n)).exists():
        n += 1
    folder = root / str(n)
    folder.mkdir(parents=True)
    live = folder / "team-now.db"
    session.store.backup_to(live)
    until = (exercise.replay.until if exercise.replay and exercise.replay.until is not None
             else session.end_minute)
    team_exercise = _with_statements(exercise, session.statement_sql)

    race_world = folder / "race.db"
    warnings = build_replay_world(live, exercise.world_sql, race_world)
    kind = type(session)  # the replay plays sessions of the kind it was given
    race = _play(kind, team_exercise, race_world, folder / "race", until)
    steps = _step_replays(exercise, race)
    fault = race.facts.fault_started
    fault_at = race.time_of(fault) if fault is not None else None
    warnings.extend(f"an exercise check failed in the replay (the team's schema broke it): "
                    f"{e.error}" for e in race.events if isinstance(e, ev.CheckFailed))

    blocked: tuple[BlockedWrite, ...] = ()
    checks: tuple[ev.MonitorCheck, ...] = ()
    delayed = bool(exercise.replay and exercise.replay.delayed)
    if delayed:
        blocked, checks = _normal_nights(kind, exercise, team_exercise, live, folder, until, "",
                                         probes)
    shift = exercise.replay.shifted if exercise.replay else None
    # Nothing prevented in tonight's race: the shifted race can only agree (a step is
    # prevented only when prevented in both), so it is not played.
    if shift is not None and any(s.status == "prevented" for s in steps):
        what = _describe_shift(exercise, shift)
        other = folder / "shifted"
        other.mkdir()
        shifted_world = other / "race.db"
        build_replay_world(live, exercise.world_sql, shifted_world, shift.seed)
        shifted_exercise = _shift(exercise, shift)
        shifted = _play(kind, _shift(team_exercise, shift), shifted_world, other / "race", until)
        remove_world(shifted_world)
        steps = _merge_steps(steps, _step_replays(shifted_exercise, shifted), what)
        if fault_at is None and shifted.facts.fault_started is not None:
            fault_at = f"{shifted.time_of(shifted.facts.fault_started)} in {what}"
        if delayed:
            seen = {b.task for b in blocked}
            more, _ = _normal_nights(kind, shifted_exercise, _shift(team_exercise, shift), live,
                                     other, until, shift.seed)
            blocked += tuple(replace(b, outcome=f"{b.outcome}, on the normal night of {what}")
                             for b in more if b.task not in seen)
    remove_world(live)
    if not keep_world:
        remove_world(race_world)
    return ReplayResult(
        steps=steps,
        fault_at=fault_at,
        blocked_good_writes=blocked,
        warnings=tuple(dict.fromkeys(warnings)),
        folder=str(folder.relative_to(session.folder)),  # relative: transcripts stay the same
        monitor_checks=checks,
    )
