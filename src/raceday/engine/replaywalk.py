"""The replayed race as steps a facilitator walks one key at a time.

The replay (`Session.replay()`) plays the night again on a copy of the team's world and
writes that night's events to `<folder>/race/events.jsonl`. This module turns those events
into a short walk: the quiet stretches folded into one step each, the same outcome repeated
minute after minute folded into one, and every automation run around the race (the delayed
worker's, every run that was refused or changed nothing, every run after which a race step
happened or a fault began) a step of its own. After each step it says which endpoints answer
empty, from the replay's own fault events (the replay world keeps only its final state,
which is read once, for the last step). At the end: the verdict per race step, the good
writes the guards blocked, the warnings and what it all does to the score.

No Textual here: the screen (`screens/replay.py`) only draws what this builds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from raceday.engine.replay import race_night
from raceday.engine.replay_postgres import kept_race_world
from raceday.engine.snapshot import WorldPlan, WorldView, read_store_world
from raceday.exercise.model import Exercise
from raceday.judge.guards import grade_harms, harm_titles, practice_titles
from raceday.judge.score import replay_guards
from raceday.store import open_world_file
from raceday.store.protocol import Store
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.transcript.verdicts import HarmNight, HarmVerdict

_QUIET_MIN = 3
"""A quiet stretch with fewer runs than this, between two steps, gets no step of its own."""
_MARKS = (ev.RaceStep, ev.Fault, ev.InvariantClear, ev.Restored, ev.CheckFailed, ev.Milestone)
Mark = ev.RaceStep | ev.Fault | ev.InvariantClear | ev.Restored | ev.CheckFailed | ev.Milestone


@dataclass
class Run:
    """One automation run of the replayed night: its statements and what came of them."""

    minute: int
    time: str
    task: str
    role: str
    title: str
    outcome: str  # applied | zero_rows | failed
    next: str | None
    changed: int | None
    statements: list[ev.Statement] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    guard: str | None = None
    """Set on the run where a guard stopped a race step: what stopped it, in words."""

    @property
    def error(self) -> str | None:
        return next((e.error or "" for e in self.statements if not e.ok), None)


@dataclass(frozen=True)
class WalkStep:
    """One key press of the walk."""

    kind: str  # intro | quiet | run | repeat | verdict
    time: str
    title: str
    runs: tuple[Run, ...] = ()
    count: int = 0
    """For a repeat: how many times it happened; for a quiet stretch: how many runs."""
    tally: tuple[tuple[str, int], ...] = ()
    """For a quiet stretch: each task title and how many runs it had."""
    empty: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()
    happened: tuple[str, ...] = ()
    """Race steps that happened in this step (their titles)."""
    guards: tuple[str, ...] = ()
    """The guards that spoke in this step (what stopped which race step)."""


@dataclass(frozen=True)
class Verdict:
    id: str
    title: str
    status: str
    at: str | None
    outcome: str
    next: str | None
    worth: int
    faults_after: tuple[str, ...]


@dataclass(frozen=True)
class ReplayWalk:
    """Everything the replay screen shows."""

    steps: tuple[WalkStep, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    blocked: tuple[ev.BlockedWrite, ...] = ()
    warnings: tuple[str, ...] = ()
    endpoints: tuple[str, ...] = ()
    final_world: WorldView | None = None
    points: int = 0
    max_points: int = 0
    penalty: int = 0
    folder: str = ""
    edits: tuple[str, ...] = ()
    error: str | None = None
    harms: tuple[HarmVerdict, ...] = ()
    """What the guards kept from the customers, harm by harm (exercises that list harms: the
    points are these, and the race steps are the story)."""
    normal_harms: tuple[HarmNight, ...] = ()

    @property
    def prevented(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.verdicts if v.status == "prevented")

    @property
    def happened(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.verdicts if v.status == "happened")


def unavailable(reason: str | None = None) -> ReplayWalk:
    """A replay that could not run: the walk is only its reason."""
    return ReplayWalk(error=reason or "the replay is not available")


def _why_not(event: ev.Replay) -> str | None:
    return event.error or event.note


# -- reading the replayed night --------------------------------------------------------------


def runs_of(events: Sequence[ev.Event]) -> list[Run]:
    """Every automation run that did something (not the ones skipped by a kill switch).

    Race steps, faults and their clearing are kept with the run during (or after) which
    they were recorded.
    """
    runs: list[Run] = []
    statements: list[ev.Statement] = []
    marks: list[Mark] = []
    for event in events:
        if isinstance(event, ev.Statement) and event.automated and event.task:
            statements.append(event)
        elif isinstance(event, _MARKS):
            if statements or not runs:
                marks.append(event)
            else:  # after a run closed (the minute's checks): it belongs to that run
                runs[-1].marks.append(event)
        elif isinstance(event, ev.Automation):
            if event.outcome == "skipped":
                statements, marks = [], []
                continue
            runs.append(Run(
                minute=event.minute, time=event.sim_time, task=event.task, role=event.role,
                title=event.title, outcome=event.outcome, next=event.next,
                changed=event.changed, statements=statements, marks=marks))
            statements, marks = [], []
    if marks and runs:
        runs[-1].marks.extend(marks)
    return runs


def _verdicts(exercise: Exercise, result: ev.ReplayResult, guards: ev.ReplayGuards | None,
              ) -> tuple[tuple[Verdict, ...], ev.ReplayGuards]:
    """Each race step's verdict with its worth, and the guards' points (as the engine's
    scoring judged this replay)."""
    judged = guards if guards is not None else replay_guards(exercise, result)
    verdicts = tuple(
        Verdict(s.id, s.title or s.id, s.status, s.at, s.outcome, s.next,
                judged.worth.get(s.id, 0), s.faults_after)
        for s in result.steps)
    return verdicts, judged


def _mark_guards(exercise: Exercise, runs: list[Run], verdicts: tuple[Verdict, ...]) -> None:
    """Name the guard on the run where it stopped a race step (as the replay chose it)."""
    tasks = {s.id: s.task for s in exercise.scoring.guards.steps} \
        if exercise.scoring.guards else {}
    for verdict in verdicts:
        if verdict.status != "prevented" or verdict.at is None:
            continue
        task = tasks.get(verdict.id)
        candidates = [r for r in runs if r.task == task and r.time == verdict.at]
        run = next((r for r in candidates if r.outcome != "applied"),
                   candidates[0] if candidates else None)
        if run is None:
            continue
        what = verdict.outcome
        if run.error:
            what = f"refused: {run.error}"
        elif run.outcome == "zero_rows":
            what = "0 rows changed: its WHERE (or a guard) kept the stale write out"
        line = f"{verdict.id} prevented here: {what}"
        run.guard = line if run.guard is None else f"{run.guard}\n{line}"


def outcome_words(run: Run) -> str:
    """How a run ended, in a few words."""
    if run.outcome == "failed":
        return f"refused: {run.error}" if run.error else "failed"
    if run.outcome == "zero_rows":
        return "changed 0 rows"
    return "applied"


def _signature(runs: list[Run], delayed: set[str]) -> frozenset[tuple[str, str, str]]:
    return frozenset((r.task if r.task in delayed else "", r.outcome, r.error or "")
                     for r in runs)


def _interesting(run: Run, delayed: set[str]) -> bool:
    return (run.task in delayed or run.outcome != "applied" or bool(run.marks)
            or run.guard is not None)


def _fault_state(runs: tuple[Run, ...], faults: dict[str, tuple[str, tuple[str, ...]]]) -> None:
    for run in runs:
        for mark in run.marks:
            if isinstance(mark, ev.Fault):
                cells = tuple(str(row[0]) for row in mark.rows if row)
                faults[mark.invariant] = (mark.fault, cells)
            elif isinstance(mark, ev.InvariantClear):
                faults.pop(mark.invariant, None)


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first}–{last}"


def build_walk(exercise: Exercise, event: ev.Replay, events: Sequence[ev.Event],
               endpoints: tuple[str, ...] = (), final_world: WorldView | None = None,
               edits: tuple[str, ...] = ()) -> ReplayWalk:
    """The walk of one replay: `event` is the replay event, `events` the replayed night's."""
    result = event.result
    if not event.available or result is None:
        return unavailable(_why_not(event))
    verdicts, guards = _verdicts(exercise, result, event.guards)
    delayed = set(exercise.replay.delayed) if exercise.replay else set()
    runs = runs_of(events)
    _mark_guards(exercise, runs, verdicts)

    by_minute: dict[int, list[Run]] = {}
    for run in runs:
        by_minute.setdefault(run.minute, []).append(run)
    minutes = sorted(by_minute)
    notable = [m for m in minutes if any(_interesting(r, delayed) for r in by_minute[m])]

    # group notable minutes that repeat the same outcome (nothing marked) into one step
    groups: list[list[int]] = []
    for minute in notable:
        interesting = [r for r in by_minute[minute] if _interesting(r, delayed)]
        marked = any(r.marks or r.guard for r in interesting)
        if groups and not marked:
            last = groups[-1]
            last_runs = [r for r in by_minute[last[-1]] if _interesting(r, delayed)]
            last_marked = any(r.marks or r.guard for r in last_runs)
            if not last_marked and _signature(last_runs, delayed) == \
                    _signature(interesting, delayed):
                last.append(minute)
                continue
        groups.append([minute])

    faults: dict[str, tuple[str, tuple[str, ...]]] = {}
    names = set(endpoints)

    def state() -> tuple[tuple[str, ...], tuple[str, ...]]:
        empty: list[str] = []
        for _, cells in faults.values():
            empty += [c for c in cells if (not names or c in names) and c not in empty]
        return tuple(empty), tuple(text for text, _ in faults.values())

    start = next((e for e in events if isinstance(e, ev.SessionStart)), None)
    steps: list[WalkStep] = []
    empty, fault_texts = state()
    steps.append(WalkStep("intro", start.sim_time if start else "", "The replay begins",
                          empty=empty, faults=fault_texts))

    def quiet(lo: int, hi: int) -> None:
        inside = [r for m in minutes if lo <= m <= hi for r in by_minute[m]]
        if not inside:
            return
        _fault_state(tuple(inside), faults)
        if len(inside) < _QUIET_MIN and steps[-1].kind != "intro":
            return  # a minute or two of routine between two steps is not worth a key press
        tally = Counter(f"{r.role}: {r.title}" for r in inside)
        e, f = state()
        steps.append(WalkStep("quiet", _span(inside[0].time, inside[-1].time),
                              "The night goes on as usual", tuple(inside), len(inside),
                              tuple(tally.items()), e, f))

    covered = -1
    for group in groups:
        if group[0] > covered + 1:
            quiet(covered + 1, group[0] - 1)
        if len(group) == 1:
            for run in by_minute[group[0]]:
                _fault_state((run,), faults)
                e, f = state()
                happened = tuple(m.title or m.step for m in run.marks
                                 if isinstance(m, ev.RaceStep))
                steps.append(WalkStep("run", run.time, f"{run.role}: {run.title}", (run,),
                                      1, (), e, f, happened,
                                      tuple(run.guard.splitlines()) if run.guard else ()))
        else:
            inside = [r for m in minutes if group[0] <= m <= group[-1] for r in by_minute[m]]
            _fault_state(tuple(inside), faults)
            shown = [r for m in group for r in by_minute[m] if _interesting(r, delayed)]
            e, f = state()
            titles = sorted({f"{r.role}: {r.title}" for r in shown})
            outcomes = sorted({outcome_words(r) for r in shown})
            if len(titles) == 1:
                title = f"{titles[0]} ({len(shown)} times)"
            elif len(outcomes) == 1:
                title = f"{len(shown)} runs, every one {outcomes[0]}"
            else:
                title = f"{len(shown)} runs, the same way as before"
            tally = Counter(f"{r.role}: {r.title}" for r in shown)
            steps.append(WalkStep("repeat", _span(shown[0].time, shown[-1].time), title,
                                  tuple(shown), len(shown), tuple(tally.items()), e, f))
        covered = group[-1]
    if minutes and covered < minutes[-1]:
        quiet(covered + 1, minutes[-1])

    e, f = state()
    steps.append(WalkStep("verdict", runs[-1].time if runs else "", "The verdict",
                          empty=e, faults=f))
    return ReplayWalk(
        steps=tuple(steps), verdicts=verdicts, blocked=result.blocked_good_writes,
        warnings=result.warnings, endpoints=endpoints, final_world=final_world,
        points=guards.points, max_points=guards.max, penalty=guards.penalty,
        folder=result.folder, edits=edits, harms=_harms(exercise, result),
        normal_harms=result.normal_harms)


def _harms(exercise: Exercise, result: ev.ReplayResult) -> tuple[HarmVerdict, ...]:
    """The harm verdicts of this replay, as the score grades them (one computation)."""
    rubric = exercise.scoring.guards
    if rubric is None or not rubric.harms:
        return ()
    return grade_harms(rubric, result.harms, harm_titles(exercise),
                       practice_titles(exercise)).verdicts


def load_walk(exercise: Exercise, event: ev.Replay, session_folder: Path,
              edits: tuple[str, ...] = ()) -> ReplayWalk:
    """Read the replayed night and its final world (a worker thread only)."""
    if not event.available or event.result is None:
        return unavailable(_why_not(event))
    folder = Path(event.result.folder)
    if not folder.exists():  # a relative folder, and the working folder has changed
        folder = session_folder / "replay" / folder.name
    race = folder / "race"
    events: tuple[ev.Event, ...] = ()
    played = race_night(race)  # played in this process: its events, not parsed again
    if played is not None:
        events = played
    elif (race / "events.jsonl").exists():
        events = read_events(race).events
    endpoints: tuple[str, ...] = ()
    world: WorldView | None = None
    db = folder / "race.db"
    store: Store | None = kept_race_world(folder)  # on PostgreSQL: the kept race schema
    if store is None and db.exists():
        store = open_world_file(db, exercise.roles)
    if store is not None:
        try:
            plan = WorldPlan.for_exercise(exercise, store.tables(), onboarding=True)
            world = read_store_world(store, plan)
            if world.answers is not None:
                endpoints = tuple(a.endpoint for a in world.answers)
        except Exception:  # the team's schema may have broken the panel's queries
            world = None
        finally:
            store.close()
    return build_walk(exercise, event, events, endpoints, world, edits)
