"""The normal nights of a team that changed nothing, kept per exercise.

A replay plays the team's normal night (the night without the delayed Enactor, on the team's
world, with its statements and its alerts run again at their minutes) beside the exercise's
own, to find the good writes the team's world refused, the harms it caused with no race at
all, and the alerts that were noise. When the team's replay world is the exercise's own and
its statements are the exercise's (`own_race`'s test), that night is the exercise's normal
night move for move (the engine is deterministic), so what the replay reads of it depends on
the exercise, how far it is played, the alerts and raceday's code only: the first such
session plays it and keeps it in the cache folder, every later one reads it back. (That is a
newcomer who watched, or a team that played the record's own moves; a team that changed a
statement or its schema plays its own night, as before.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raceday.cache import cache_folder, code_digest, write_atomically
from raceday.engine.night import NightKind, Probe
from raceday.engine.replay_exercises import exercise_digest
from raceday.engine.replay_outcomes import Nights
from raceday.exercise.model import Exercise
from raceday.transcript.events import MonitorCheck
from raceday.transcript.verdicts import BlockedWrite, HarmNight


def own_normal_key(kind: NightKind, exercise: Exercise, until: int, probes: tuple[Probe, ...],
                   db: str) -> str:
    return hashlib.sha256(json.dumps(["own-normal", db, kind.__module__, kind.__qualname__,
                                      code_digest(), exercise_digest(exercise), until,
                                      [list(p) for p in probes]]).encode()).hexdigest()


def _file(key: str) -> Path | None:
    folder = cache_folder()
    return None if folder is None else folder / "own-normal-nights" / f"{key}.json"


def read_own_normal(key: str) -> Nights | None:
    """The kept normal nights' answer; None when not kept (or unreadable: then they are
    played again)."""
    file = _file(key)
    if file is None:
        return None
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
        return (tuple(BlockedWrite(**{**b, "lost": tuple(b.get("lost", ()))})
                      for b in data["blocked"]),
                tuple(MonitorCheck(**c) for c in data["checks"]),
                tuple(HarmNight(**h) for h in data["harms"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def keep_own_normal(key: str, nights: Nights) -> None:
    """Keep the normal nights' answer for the sessions after (not kept: a full disk, no
    cache folder; then they are played again)."""
    file = _file(key)
    if file is None:
        return
    blocked, checks, harms = nights
    write_atomically(file, json.dumps({
        "blocked": [dataclasses.asdict(b) for b in blocked],
        "checks": [dataclasses.asdict(c) for c in checks],
        "harms": [dataclasses.asdict(h) for h in harms]}))


def kept_or_played(key: str, play: Callable[[], Callable[[], Nights] | None],
                   ) -> Callable[[], Nights] | None:
    """The normal nights' answer as both replays ask for it: kept under `key`, read back;
    else `play()`, started now (None: no normal night to play), its answer kept under `key`
    once asked. An empty `key` (a team that changed something) reads and keeps nothing."""
    kept = read_own_normal(key) if key else None
    if kept is not None:
        return lambda: kept
    answer = play()
    if answer is None or not key:
        return answer

    def keeping() -> Nights:
        nights = answer()
        keep_own_normal(key, nights)
        return nights

    return keeping
