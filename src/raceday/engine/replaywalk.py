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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from raceday.engine.scoring import replay_guards
from raceday.engine.snapshot import WorldPlan, WorldView, read_store_world
from raceday.exercise.model import Exercise
from raceday.transcript.log import read_events

Event = dict[str, Any]

_QUIET_MIN = 3
"""A quiet stretch with fewer runs than this, between two steps, gets no step of its own."""
_MARKS = {"race_step", "fault", "invariant_clear", "restored", "check_failed", "milestone"}


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
    statements: list[Event] = field(default_factory=list)
    marks: list[Event] = field(default_factory=list)
    guard: str | None = None
    """Set on the run where a guard stopped a race step: what stopped it, in words."""

    def describe(self) -> str:
        """What the run's statements did, in a few words."""
        parts = []
        for e in self.statements:
            if not e.get("ok", True):
                parts.append(f"refused ({e.get('error_kind')}): {e.get('error')}")
            elif e.get("rows") is not None:
                n = e["rows"]
                parts.append(f"read {n} row{'s' if n != 1 else ''}")
            else:
                n = e.get("rowcount") or 0
                parts.append(f"changed {n} row{'s' if n != 1 else ''}" if n
                             else "0 rows changed")
        return "; ".join(parts) or "no statement ran"

    @property
    def error(self) -> str | None:
        return next((str(e.get("error")) for e in self.statements if not e.get("ok", True)),
                    None)


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

    event: Event
    steps: tuple[WalkStep, ...]
    verdicts: tuple[Verdict, ...]
    blocked: tuple[Event, ...]
    warnings: tuple[str, ...]
    endpoints: tuple[str, ...]
    final_world: WorldView | None
    points: int
    max_points: int
    penalty: int
    folder: str
    edits: tuple[str, ...] = ()
    error: str | None = None

    @property
    def prevented(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.verdicts if v.status == "prevented")

    @property
    def happened(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.verdicts if v.status == "happened")


def unavailable(event: Event) -> ReplayWalk:
    """A replay that could not run: the walk is only its reason."""
    reason = str(event.get("error") or event.get("note") or "the replay is not available")
    return ReplayWalk(event, (), (), (), (), (), None, 0, 0, 0, "", error=reason)


# -- reading the replayed night --------------------------------------------------------------


def runs_of(events: tuple[Event, ...] | list[Event]) -> list[Run]:
    """Every automation run that did something (not the ones skipped by a kill switch).

    Race steps, faults and their clearing are kept with the run during (or after) which
    they were recorded.
    """
    runs: list[Run] = []
    statements: list[Event] = []
    marks: list[Event] = []
    for event in events:
        kind = event.get("kind")
        if kind == "statement" and event.get("automated") and event.get("task"):
            statements.append(event)
        elif kind in _MARKS:
            if statements or not runs:
                marks.append(event)
            else:  # after a run closed (the minute's checks): it belongs to that run
                runs[-1].marks.append(event)
        elif kind == "automation":
            if event.get("outcome") == "skipped":
                statements, marks = [], []
                continue
            runs.append(Run(
                minute=int(event.get("minute", 0)), time=str(event.get("sim_time", "")),
                task=str(event.get("task", "")), role=str(event.get("role", "")),
                title=str(event.get("title", "")), outcome=str(event.get("outcome", "")),
                next=event.get("next"), changed=event.get("changed"),
                statements=statements, marks=marks))
            statements, marks = [], []
    if marks and runs:
        runs[-1].marks.extend(marks)
    return runs


def _verdicts(exercise: Exercise, event: Event) -> tuple[tuple[Verdict, ...], int, int, int]:
    """Each race step's verdict with its worth; the points, their maximum, the penalty (as the
    engine's scoring judged this replay)."""
    guards = event.get("guards") or replay_guards(exercise, event)
    worth = guards["worth"]
    verdicts = tuple(
        Verdict(str(s.get("id")), str(s.get("title") or s.get("id")), str(s.get("status")),
                s.get("at"), str(s.get("outcome", "")), s.get("next"),
                worth.get(str(s.get("id")), 0), tuple(s.get("faults_after") or ()))
        for s in event.get("steps") or [] if isinstance(s, dict))
    return verdicts, guards["points"], guards["max"], guards["penalty"]


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
        elif "0 rows changed" in verdict.outcome:
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
            if mark.get("kind") == "fault":
                cells = tuple(str(row[0]) for row in mark.get("rows") or [] if row)
                faults[str(mark.get("invariant"))] = (str(mark.get("fault")), cells)
            elif mark.get("kind") == "invariant_clear":
                faults.pop(str(mark.get("invariant")), None)


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first}–{last}"


def build_walk(exercise: Exercise, event: Event, events: tuple[Event, ...] | list[Event],
               endpoints: tuple[str, ...] = (), final_world: WorldView | None = None,
               edits: tuple[str, ...] = ()) -> ReplayWalk:
    """The walk of one replay: `event` is the replay event, `events` the replayed night's."""
    if not event.get("available", True):
        return unavailable(event)
    verdicts, points, max_points, penalty = _verdicts(exercise, event)
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

    start = next((e for e in events if e.get("kind") == "session_start"), {})
    steps: list[WalkStep] = []
    empty, fault_texts = state()
    steps.append(WalkStep("intro", str(start.get("sim_time", "")), "The replay begins",
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
                happened = tuple(str(m.get("title") or m.get("step")) for m in run.marks
                                 if m.get("kind") == "race_step")
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
    blocked = tuple(b for b in event.get("blocked_good_writes") or [] if isinstance(b, dict))
    return ReplayWalk(
        event=event, steps=tuple(steps), verdicts=verdicts, blocked=blocked,
        warnings=tuple(str(w) for w in event.get("warnings") or []), endpoints=endpoints,
        final_world=final_world, points=points, max_points=max_points, penalty=penalty,
        folder=str(event.get("folder", "")), edits=edits)


def load_walk(exercise: Exercise, event: Event, session_folder: Path,
              edits: tuple[str, ...] = ()) -> ReplayWalk:
    """Read the replayed night and its final world (a worker thread only)."""
    if not event.get("available", True):
        return unavailable(event)
    folder = Path(str(event.get("folder", "")))
    if not folder.exists():  # a relative folder, and the working folder has changed
        folder = session_folder / "replay" / folder.name
    race = folder / "race"
    events: tuple[Event, ...] = ()
    if (race / "events.jsonl").exists():
        events = read_events(race).events
    endpoints: tuple[str, ...] = ()
    world: WorldView | None = None
    db = folder / "race.db"
    if db.exists():
        from raceday.store.sqlite_store import WorldStore

        store = WorldStore.open(db, exercise.roles)
        try:
            plan = WorldPlan.from_tables(store.tables())
            world = read_store_world(store, plan)
            if world.answers is not None:
                endpoints = tuple(a.endpoint for a in world.answers)
        except Exception:  # the team's schema may have broken the panel's queries
            world = None
        finally:
            store.close()
    return build_walk(exercise, event, events, endpoints, world, edits)
