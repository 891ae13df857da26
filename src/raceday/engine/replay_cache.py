"""What replays keep between replays: answers that depend on the exercise, its seed and
raceday's code only (a normal night's good writes, a baseline's harms, the fingerprint of
the exercise's own replay world), kept in this process and in the cache folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from raceday.cache import cache_folder, code_digest, write_atomically
from raceday.engine.night import NightKind
from raceday.engine.replay_exercises import exercise_digest
from raceday.engine.replay_outcomes import GoodRun, Harms
from raceday.exercise.model import Exercise

baselines_known: dict[str, Harms] = {}


good_known: dict[str, list[GoodRun]] = {}


def normal_night_key(kind: NightKind, normal: Exercise, until: int, renumber: str,
                      db: str) -> str:
    """The name of a normal night's good writes: the database kind (`sqlite`,
    `postgresql`: each plays its own dialect), the session's kind, the code, the exercise."""
    return hashlib.sha256(json.dumps([db, kind.__module__, kind.__qualname__, code_digest(),
                                      exercise_digest(normal), until, renumber]).encode()
                          ).hexdigest()


def cache_file(key: str) -> Path | None:
    """Where a normal night's good writes or a baseline's harms are kept: $RACEDAY_CACHE_DIR, else
    the user's cache folder; None when RACEDAY_CACHE_DIR is empty (no cache on disk)."""
    folder = cache_folder()
    return folder / "normal-nights" / f"{key}.json" if folder is not None else None


def read_good(path: Path) -> list[GoodRun] | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return [(str(t), int(m), int(a), tuple(str(x) for x in c),
                 tuple((str(st), str(table), int(rows)) for st, table, rows in d))
                for t, m, a, c, d in data["good"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: the night is played again


def write_good(path: Path, good: list[GoodRun]) -> None:
    # not written (a full disk, a read-only home): the next replay plays the night again
    write_atomically(path, json.dumps({"good": good}))


def baseline_key(kind: NightKind, exercise: Exercise, until: int, renumber: str,
                 db: str) -> str:
    """The name of a baseline (the race with no guard on the exercise's own world): the
    database kind, the session's kind, the code, the exercise, how far, the renumbering."""
    return hashlib.sha256(json.dumps(["baseline", db, kind.__module__, kind.__qualname__,
                                      code_digest(), exercise_digest(exercise), until,
                                      renumber]).encode()).hexdigest()


def baseline_cached(key: str) -> Harms | None:
    """A baseline known in this process or kept in the cache folder, or None."""
    known = baselines_known.get(key)
    if known is not None:
        return known
    cached = cache_file(key)
    if cached is None:
        return None
    try:
        data: Any = json.loads(cached.read_text(encoding="utf-8"))
        known = {str(h): (int(m), None if f is None else int(f))
                 for h, (m, f) in data["harms"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: played again
    baselines_known[key] = known
    return known


def keep_baseline(key: str, known: Harms) -> None:
    """Keep a baseline in this process (the 32 latest) and in the cache folder."""
    remember_baseline(key, known)
    cached = cache_file(key)
    if cached is not None:  # not written (a full disk): played again next time
        write_atomically(cached, json.dumps({"harms": known}))


def remember_baseline(key: str, known: Harms) -> None:
    """Keep a baseline in this process only (a child that played it wrote the cache file)."""
    baselines_known[key] = known
    if len(baselines_known) > 32:
        baselines_known.pop(next(iter(baselines_known)))


worlds_known: dict[str, str] = {}


def world_key(exercise: Exercise, db: str = "sqlite") -> str:
    """The name of the fingerprint of the world a replay builds from the exercise's own world
    (SQLite's `store.world_digest.world_fingerprint`, PostgreSQL's
    `replay_postgres.schema_digest`): the database kind, the code, the world's SQL, the
    roles."""
    return hashlib.sha256(json.dumps(["world", db, code_digest(), exercise.world_sql,
                                      repr(exercise.roles)]).encode()).hexdigest()


def world_cached(key: str) -> str | None:
    """A world's fingerprint known in this process or kept in the cache folder, or None."""
    known = worlds_known.get(key)
    if known is not None:
        return known
    cached = cache_file(key)
    if cached is None:
        return None
    try:
        data: Any = json.loads(cached.read_text(encoding="utf-8"))
        known = str(data["world"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: built again
    worlds_known[key] = known
    return known


def keep_world(key: str, fingerprint: str) -> None:
    worlds_known[key] = fingerprint
    cached = cache_file(key)
    if cached is not None:
        write_atomically(cached, json.dumps({"world": fingerprint}))
