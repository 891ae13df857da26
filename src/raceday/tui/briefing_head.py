"""What the briefing's first frame shows (title, summary, the clock's start and zone), kept in
raceday's cache folder by the run that loaded the exercise, and found again by the next.

`raceday play ID` draws its briefing before the exercise is loaded when it knows its head:
the load (PyYAML, the model's dataclasses, the world built and every statement compiled:
about 30 ms) then runs in a worker right after the first frame. A head is kept under a
digest of exercise.yaml's bytes (with the head's format and raceday's version): the same
bytes give the same head wherever the folder is, and any edit is a miss, never an old head.
A miss (the first start, an edit, no cache on disk, a file unreadable or damaged) loads the
exercise before the first frame, as it always was, and keeps its head for the next start.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from raceday import __version__
from raceday.cache import cache_folder, write_atomically
from raceday.exercise import EXERCISE_FILE

if TYPE_CHECKING:
    from raceday.exercise.model import Exercise

FORMAT = 1
"""The kept head's format: a change to what it holds or means starts every cache afresh."""


@dataclass(frozen=True)
class BriefingHead:
    """The briefing's first frame: the bar and the title with the summary."""

    title: str
    summary: str  # its whitespace as shown: runs of it are one space
    start: str  # the clock's face at the start, "23:00"
    zone: str

    @classmethod
    def of(cls, exercise: Exercise) -> BriefingHead:
        from raceday.exercise.times import format_time

        clock = exercise.clock
        return cls(exercise.title, " ".join(exercise.summary.split()),
                   format_time(0, clock.start), clock.zone)


_FIELDS = tuple(f.name for f in fields(BriefingHead))


def exercise_bytes(path: Path) -> bytes | None:
    """exercise.yaml's bytes, for the exercise at `path` (a folder or its file)."""
    try:
        return (path if path.is_file() else path / EXERCISE_FILE).read_bytes()
    except OSError:
        return None


def _head_file(data: bytes) -> Path | None:
    """Where the head of an exercise.yaml holding `data` is kept; None: no cache on disk."""
    folder = cache_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(f"raceday {__version__} head {FORMAT}\n".encode())
    digest.update(data)
    return folder / "briefing-heads" / f"{digest.hexdigest()}.json"


def read_head(path: Path) -> BriefingHead | None:
    """The kept first frame of the exercise at `path` (a folder or its file), or None."""
    data = exercise_bytes(path)
    kept = _head_file(data) if data is not None else None
    if kept is None:
        return None
    try:
        raw = json.loads(kept.read_bytes())
    except (OSError, ValueError):
        return None  # absent, unreadable or damaged: a miss
    if not isinstance(raw, dict) or sorted(raw) != sorted(_FIELDS) \
            or not all(isinstance(value, str) for value in raw.values()):
        return None
    return BriefingHead(**raw)


def load_keeping_head(path: Path, shown: BriefingHead | None = None) -> Exercise:
    """Load the exercise at `path` (the loader's errors raised as they are) and keep its head
    for the next start unless it is the one `shown` (found kept). A worker thread only.

    The head is kept under the bytes read before the load, and only if the file still holds
    them after it: a file edited meanwhile keeps nothing."""
    from raceday.engine.load import load_exercise

    before = exercise_bytes(path)
    exercise = load_exercise(path)
    head = BriefingHead.of(exercise)
    if before is not None and head != shown and exercise_bytes(path) == before:
        kept = _head_file(before)
        if kept is not None:
            write_atomically(kept, json.dumps(dict(zip(_FIELDS, astuple(head), strict=True))))
    return exercise
