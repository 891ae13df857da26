"""The race night of a team that changed nothing it reads, kept per exercise.

When the team's replay world is the exercise's own (the same schema objects and rows:
`world_fingerprint`) and its statements are the exercise's, its race night is the
exercise's own, move for move (the engine is deterministic): what the final replay reads
of it (the race steps, each harm's minutes and first time, when the fault began, the
checks that failed, and its transcript for a later walk) depends on the exercise, how far
it is played and raceday's code only. The first such session plays it and keeps it in the
cache folder; every later one reads it back (the practice nights of such a team are not
played either: `replay_forked._practice_nights`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from raceday.cache import cache_folder, code_digest, write_atomically
from raceday.engine.night import Night, NightKind
from raceday.engine.replay_exercises import exercise_digest
from raceday.engine.replay_outcomes import HarmTimes, harm_times, step_replays
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.events import StepReplay
from raceday.value import Value, frozen

EVENTS = "events.jsonl"


@frozen
class RaceOutcome(Value):
    """What the final replay reads of a race night (kept, for the exercise's own)."""

    steps: tuple[StepReplay, ...]
    harms: tuple[tuple[str, int, str | None], ...]  # (harm, minutes, first began)
    fault_at: str | None
    warnings: tuple[str, ...]

    def harm_times(self) -> HarmTimes:
        return {harm: (minutes, first) for harm, minutes, first in self.harms}


def race_outcome(exercise: Exercise, race: Night, until: int) -> RaceOutcome:
    """What the final replay reads of a race night played on the team's replay world."""
    fault = race.facts.fault_started
    return RaceOutcome(
        steps=step_replays(exercise, race),
        harms=tuple((harm, minutes, first) for harm, (minutes, first)
                    in harm_times(exercise, race, until).items()),
        fault_at=race.time_of(fault) if fault is not None else None,
        warnings=tuple(f"an exercise check failed in the replay (the team's schema broke it): "
                       f"{e.error}" for e in race.events if isinstance(e, ev.CheckFailed)))


def own_race_key(kind: NightKind, exercise: Exercise, until: int, db: str) -> str:
    return hashlib.sha256(json.dumps(["own-race", db, kind.__module__, kind.__qualname__,
                                      code_digest(), exercise_digest(exercise), until]
                                     ).encode()).hexdigest()


def _files(key: str) -> tuple[Path, Path] | None:
    folder = cache_folder()
    if folder is None:
        return None
    return folder / "own-races" / f"{key}.json", folder / "own-races" / f"{key}.{EVENTS}"


def read_own_race(key: str, race_folder: Path) -> RaceOutcome | None:
    """The kept race night, its transcript copied into `race_folder`; None when not kept
    (or unreadable: then it is played again)."""
    files = _files(key)
    if files is None:
        return None
    data_file, events_file = files
    try:
        data: Any = json.loads(data_file.read_text(encoding="utf-8"))
        own = RaceOutcome(
            steps=tuple(StepReplay(**{**step, "faults_after": tuple(step["faults_after"])})
                        for step in data["steps"]),
            harms=tuple((str(h), int(m), None if f is None else str(f))
                        for h, m, f in data["harms"]),
            fault_at=None if data["fault_at"] is None else str(data["fault_at"]),
            warnings=tuple(str(w) for w in data["warnings"]))
        race_folder.mkdir(parents=True)
        shutil.copyfile(events_file, race_folder / EVENTS)
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(race_folder, ignore_errors=True)
        return None
    return own


def keep_own_race(key: str, own: RaceOutcome, race_folder: Path) -> None:
    """Keep the race night (its transcript from `race_folder`) for the sessions after."""
    files = _files(key)
    if files is None or not (race_folder / EVENTS).is_file():
        return
    data_file, events_file = files
    try:
        events_file.parent.mkdir(parents=True, exist_ok=True)
        partial = events_file.with_name(f"{events_file.name}.{os.getpid()}.part")
        shutil.copyfile(race_folder / EVENTS, partial)
        partial.replace(events_file)  # the transcript before the answer that names it
    except OSError:
        return  # not kept (a full disk): played again next time
    write_atomically(data_file, json.dumps({
        "steps": [dataclasses.asdict(step) for step in own.steps],
        "harms": [list(h) for h in own.harms],
        "fault_at": own.fault_at,
        "warnings": list(own.warnings)}))
