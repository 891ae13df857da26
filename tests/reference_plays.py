"""A play of a script, played once per test run and shared by every test (and every xdist
worker) that reads it.

The recovery-under-load plays take 20-60 s each; the golden debriefs, the whole transcripts
and the exercise's own tests all read the same five. Each play is `raceday run EXERCISE
--script S --json` (the score, its debrief.md, its transcript), written once into a folder of
the run's base temp folder (shared by the workers) under a lock: a second asker waits for the
first and reads what it wrote. Tests only read what a play left; a test that changes a
session plays its own.

`sized` plays recovery-under-load's world at another fleet size (AWS's response at 4,000
droplets is read by the record's phases, by the PostgreSQL comparison and by the failover
test), and `on_postgres` plays on the PostgreSQL server (its world dropped once played), so
the tests that compare them can run on any worker without playing a night twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"
DEFAULT_SIZE = "SELECT 20000 AS size"
"""recovery-under-load's fleet as bundled; `sized` plays it at another size."""


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
        """The bundled exercise played by `raceday run EXERCISE --script S --json`."""
        name, play = self._bundled(exercise, script)
        return self._once(name, play)

    def many(self, exercise: str, scripts: list[Path]) -> list[Played]:
        """Several plays of the bundled exercise, in the order given. Those another worker is
        playing are left for last, so two workers asking for the same ones share them out
        instead of one waiting while the other plays them all."""
        wanted = [self._bundled(exercise, script) for script in scripts]
        for name, play in wanted:
            if name not in self._mine:
                found = self._play_once(name, play, wait=False)
                if found is not None:
                    self._mine[name] = found
        return [self._once(name, play) for name, play in wanted]

    def _bundled(self, exercise: str, script: Path) -> tuple[str, Callable[[Path], dict[str, Any]]]:
        script = script.resolve()
        name = f"{exercise}-{script.parent.parent.name}-{script.parent.name}-{script.stem}"
        return name, lambda place: _run(exercise, script, place / "transcripts")

    def sized(self, exercise: str, script: Path, size: int) -> Played:
        """The exercise with its world's fleet at `size` (its `SELECT 20000 AS size`)."""
        script = script.resolve()
        name = f"{exercise}-{size}-{script.parent.parent.name}-{script.parent.name}-{script.stem}"
        return self._once(name, lambda place: _run_sized(exercise, script, size,
                                                         place / "transcripts"))

    def on_postgres(self, exercise: str, script: Path, dsn: str, size: int | None = None) -> Played:
        """The exercise's postgres.yaml variant played on the server at `dsn` (its world
        dropped once played), with its fleet at `size` if given (as `sized`); the score as
        `raceday run --json` prints it."""
        script = script.resolve()
        sized = "" if size is None else f"{size}-"
        name = (f"pg-{exercise}-{sized}{script.parent.parent.name}-{script.parent.name}-"
                f"{script.stem}")
        return self._once(name, lambda place: _run_on_postgres(exercise, script, dsn,
                                                               place / "transcripts", size))

    def _once(self, name: str, play: Callable[[Path], dict[str, Any]]) -> Played:
        if name not in self._mine:
            played = self._play_once(name, play)
            assert played is not None  # it waited for the lock
            self._mine[name] = played
        return self._mine[name]

    def _play_once(self, name: str, play: Callable[[Path], dict[str, Any]], *,
                   wait: bool = True) -> Played | None:
        """The play, played here unless it was already; None if another worker is playing
        it and `wait` is false."""
        self.shared.mkdir(parents=True, exist_ok=True)
        place = self.shared / name
        with open(self.shared / f"{name}.lock", "w") as lock:
            try:  # another worker playing it: wait, then read (or come back later)
                fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            done = place / "result.json"
            if not done.exists():
                result = play(place)
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


def _run_sized(exercise: str, script: Path, size: int, transcripts: Path) -> dict[str, Any]:
    from raceday.engine.headless import run_script
    from raceday.engine.load import load_exercise
    from raceday.engine.script import load_script

    bundled = load_exercise(EXERCISES / exercise)
    assert DEFAULT_SIZE in bundled.world_sql
    sized = dataclasses.replace(
        bundled, world_sql=bundled.world_sql.replace(DEFAULT_SIZE, f"SELECT {size} AS size"))
    _session, result = run_script(sized, load_script(script, sized), transcripts)
    as_printed: dict[str, Any] = json.loads(json.dumps(result))
    return as_printed


def _run_on_postgres(exercise: str, script: Path, dsn: str, transcripts: Path,
                     size: int | None = None) -> dict[str, Any]:
    from raceday.engine.headless import run_script
    from raceday.engine.load import load_named_exercise
    from raceday.engine.script import load_script
    from raceday.exercise.postgres import for_postgres
    from raceday.store.postgres.world import drop_world

    bundled = load_named_exercise(exercise)
    if size is not None:  # the variant first, then the size (no path: not applied again)
        bundled = for_postgres(bundled)
        assert DEFAULT_SIZE in bundled.world_sql
        bundled = dataclasses.replace(bundled, path=None, world_sql=bundled.world_sql.replace(
            DEFAULT_SIZE, f"SELECT {size} AS size"))
    session, result = run_script(bundled, load_script(script, bundled), transcripts, db=dsn)
    drop_world(dsn, (session.folder / "world.postgres").read_text().strip())
    as_printed: dict[str, Any] = json.loads(json.dumps(result))
    return as_printed


def verdicts(result: dict[str, Any]) -> dict[str, Any]:
    """What two databases must agree on in a play's JSON score: each harm's points (on which
    night, from when, for how long), the guard points, the collateral and the good writes it
    stands for, and the total."""
    guards = result["guards"]
    return {
        "harms": [(h["id"], h["practice"], h["night"], h["points"], h["max"], h["first_at"],
                   h["minutes"], h["baseline"]) for h in guards["harms"]],
        "guards": guards["points"],
        "collateral": guards["collateral"],
        "blocked": [(b["task"], b["at"]) for b in guards["blocked_good_writes"]],
        "total": result["total"],
    }
