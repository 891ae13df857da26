"""A play of a bundled script, played once per test run and shared by every test (and every
xdist worker) that reads it.

The recovery-under-load plays take 20-60 s each; the golden debriefs, the whole transcripts
and the exercise's own tests all read the same five. Each play is `raceday run EXERCISE
--script S --json` (the score, its debrief.md, its transcript), written once into a folder of
the run's base temp folder (shared by the workers) under a lock: a second asker waits for the
first and reads what it wrote. Tests only read what a play left; a test that changes a
session plays its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"


@dataclass(frozen=True)
class Played:
    """A finished headless session: its folder and the JSON score `raceday run` printed."""

    folder: Path
    result: dict[str, Any]


class ReferencePlays:
    """Plays scripts into `shared`, once per (exercise, script) for the whole run."""

    def __init__(self, shared: Path) -> None:
        self.shared = shared
        self._mine: dict[str, Played] = {}

    def __call__(self, exercise: str, script: Path) -> Played:
        script = script.resolve()
        name = f"{exercise}-{script.parent.parent.name}-{script.parent.name}-{script.stem}"
        if name not in self._mine:
            self._mine[name] = self._play_once(name, exercise, script)
        return self._mine[name]

    def _play_once(self, name: str, exercise: str, script: Path) -> Played:
        self.shared.mkdir(parents=True, exist_ok=True)
        place = self.shared / name
        with open(self.shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker playing it: wait, then read
            done = place / "result.json"
            if not done.exists():
                result = _run(exercise, script, place / "transcripts")
                (place / "result.part").write_text(json.dumps(result), encoding="utf-8")
                os.replace(place / "result.part", done)
            result = json.loads(done.read_text(encoding="utf-8"))
        return Played(Path(result["session"]), result)


def _run(exercise: str, script: Path, transcripts: Path) -> dict[str, Any]:
    from raceday.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["run", str(EXERCISES / exercise), "--script", str(script),
                       "--transcripts", str(transcripts), "--json"])
    assert status == 0, f"{script} did not play: {out.getvalue()[-2000:]}"
    result: dict[str, Any] = json.loads(out.getvalue())
    return result
