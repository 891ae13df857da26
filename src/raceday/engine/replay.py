"""Replay the race against the team's database and judge each guard by its effect.

The replay is an ordinary session with no players: the same timeline, the same store path,
the team's schema and edited statements, the exercise's seed data. Then the normal night
(without the delayed worker) is played twice, on the original world and on the team's, and
every write that took on the first but not on the second is a good write the guards block.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from raceday.engine.clock import Pace
from raceday.engine.facts import step_statuses
from raceday.engine.session import Event, Session
from raceday.exercise.model import Exercise, Statement
from raceday.store.replay_world import build_replay_world
from raceday.store.sqlite_store import WorldStore
from raceday.transcript.log import EventLog


@dataclass(frozen=True)
class StepReplay:
    """One race step as the replay saw it."""

    id: str
    title: str
    status: str  # prevented | happened | not reached
    at: str | None
    outcome: str  # what the step's statements did: "applied (1 row)", "refused: ...", ...
    next: str | None
    faults_after: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status, "at": self.at,
                "outcome": self.outcome, "next": self.next, "faults_after": list(self.faults_after)}


@dataclass(frozen=True)
class BlockedWrite:
    """A write of the normal night that the original world took and the team's refused."""

    task: str
    at: str
    outcome: str

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "at": self.at, "outcome": self.outcome}


@dataclass(frozen=True)
class ReplayResult:
    steps: tuple[StepReplay, ...]
    fault_at: str | None
    blocked: tuple[BlockedWrite, ...]
    warnings: tuple[str, ...]
    folder: str

    @property
    def prevented(self) -> list[str]:
        return [s.id for s in self.steps if s.status == "prevented"]

    @property
    def happened(self) -> list[str]:
        return [s.id for s in self.steps if s.status == "happened"]

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": [s.to_json() for s in self.steps],
            "prevented": self.prevented,
            "happened": self.happened,
            "fault_at": self.fault_at,
            "blocked_good_writes": [b.to_json() for b in self.blocked],
            "warnings": list(self.warnings),
            "folder": self.folder,
        }


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


def _play(exercise: Exercise, world: Path, folder: Path, until: int) -> Session:
    """Play the timeline with every role automated, to `until`, and close it."""
    folder.mkdir(parents=True)
    store = WorldStore.open(world, exercise.roles)
    session = Session(exercise, store, EventLog(folder), (), Pace.TURNS)
    session.start()
    session.advance_to(until)
    session.store.close()
    session.log.close()
    return session


def _describe_run(events: list[Event]) -> str:
    parts = []
    for e in events:
        if e["kind"] != "statement":
            continue
        if not e["ok"]:
            parts.append(f"refused ({e.get('error_kind')}): {e.get('error')}")
        elif e.get("rows") is not None:
            parts.append(f"read {e['rows']} row{'s' if e['rows'] != 1 else ''}")
        else:
            n = e.get("rowcount") or 0
            parts.append(f"applied ({n} row{'s' if n != 1 else ''})" if n else "0 rows changed")
    return "; ".join(parts) or "no statement ran"


def _runs(session: Session, task_id: str) -> list[tuple[list[Event], Event]]:
    """Each run of a task: its statement events and the closing automation event."""
    runs: list[tuple[list[Event], Event]] = []
    current: list[Event] = []
    for event in session.events:
        if event["kind"] == "statement" and event.get("task") == task_id:
            current.append(event)
        elif event["kind"] == "automation" and event.get("task") == task_id:
            runs.append((current, event))
            current = []
    return runs


def _faults_at(session: Session, minute: int) -> tuple[str, ...]:
    """Faults present right after `minute` (from the fault and clear events)."""
    present: dict[str, str] = {}
    for event in session.events:
        if event["minute"] > minute:
            break
        if event["kind"] == "fault":
            present[event["invariant"]] = event["fault"]
        elif event["kind"] == "invariant_clear":
            present.pop(event["invariant"], None)
    return tuple(present.values())


def _step_replays(exercise: Exercise, race: Session) -> tuple[StepReplay, ...]:
    steps: list[StepReplay] = []
    states = race.facts.race_steps(exercise)
    statuses = step_statuses(states)
    by_id = {s.step.id: s for s in states}
    for state in states:
        step = state.step
        status = statuses[step.id]
        runs = [r for r in _runs(race, step.task) if r[1]["outcome"] != "skipped"]
        chosen = None
        if status == "happened":
            chosen = next((r for r in runs if r[1]["minute"] == state.happened_at), None)
        elif status == "prevented":
            upstream = by_id.get(step.after) if step.after else None
            if upstream is not None and statuses[upstream.step.id] == "prevented":
                steps.append(StepReplay(step.id, step.title, status, None,
                                        f"the race stopped at {upstream.step.id}", None, ()))
                continue
            since = upstream.happened_at if upstream and upstream.happened_at is not None else -1
            candidates = [r for r in runs if r[1]["minute"] >= since]
            # show the run where the guard spoke: refused or changed nothing, else the first
            chosen = next((r for r in candidates if r[1]["outcome"] != "applied"),
                          candidates[0] if candidates else None)
        if chosen is None:
            steps.append(StepReplay(step.id, step.title, status, None, "never ran", None, ()))
            continue
        statements, closing = chosen
        steps.append(StepReplay(step.id, step.title, status, closing["sim_time"],
                                _describe_run(statements), closing.get("next"),
                                _faults_at(race, closing["minute"])))
    return tuple(steps)


def _blocked(original: Session, team: Session) -> tuple[BlockedWrite, ...]:
    """Runs that changed rows on the original world and changed none (or failed) on the team's.

    Whole runs are compared, not statements: the team may have edited a statement into
    several (mark, then purge), and a run that still changed what it should is not blocked.
    """

    def runs(session: Session) -> dict[tuple[str, int, int], tuple[Event, list[Event]]]:
        found: dict[tuple[str, int, int], tuple[Event, list[Event]]] = {}
        for task_id in {t.id for t in session.exercise.tasks}:
            for statements, closing in _runs(session, task_id):
                found[(task_id, closing["minute"], closing.get("attempt", 0))] = (closing, statements)
        return found

    before = runs(original)
    after = runs(team)
    blocked = []
    for key in sorted(before, key=lambda k: (k[1], k[0], k[2])):
        was, _ = before[key]
        if was["outcome"] == "failed" or not was.get("changed"):
            continue
        now, statements = after.get(key, ({"outcome": "missing"}, []))
        if now["outcome"] == "failed" or not now.get("changed"):
            blocked.append(BlockedWrite(key[0], team.time_of(key[1]), _describe_run(statements)))
    return tuple(blocked)


def replay_race(session: Session) -> ReplayResult:
    """Replay the race on a copy of the team's world; the live world is not touched."""
    exercise = session.exercise
    root = session.folder / "replay"
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
    race = _play(team_exercise, race_world, folder / "race", until)

    blocked: tuple[BlockedWrite, ...] = ()
    if exercise.replay and exercise.replay.delayed:
        original_world = folder / "normal-original.db"
        WorldStore.create(original_world, exercise.world_sql, exercise.roles).close()
        original = _play(_without_delayed(exercise), original_world, folder / "normal-original",
                         until)
        team_world = folder / "normal-team.db"
        build_replay_world(live, exercise.world_sql, team_world)
        team = _play(_without_delayed(team_exercise), team_world, folder / "normal-team", until)
        blocked = _blocked(original, team)
    live.unlink(missing_ok=True)
    fault = race.facts.fault_started
    warnings.extend(f"an exercise check failed in the replay (the team's schema broke it): "
                    f"{e['error']}" for e in race.events if e["kind"] == "check_failed")
    return ReplayResult(
        steps=_step_replays(exercise, race),
        fault_at=race.time_of(fault) if fault is not None else None,
        blocked=blocked,
        warnings=tuple(warnings),
        folder=str(folder.relative_to(session.folder)),  # relative: transcripts stay the same
    )
