"""`raceday check`: the reference plays' statements still find what they name.

An exercise can load while a script of it in `scripts/*.yaml` queries a table or column the
world no longer has (renamed in world.sql, dropped by an earlier step): the play then
"works" and teaches nothing. Each script's player steps are played in order on a fresh
session, at once: no clock moves, so no automation runs and no replay (`check --strict`
plays them whole, in time). What a statement names is the world's and the script's own
doing, so this is far enough: every statement or monitor the store answers with "no such
..." is a problem at the step's line.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from raceday.cache import cache_folder, code_digest, write_atomically
from raceday.engine.headless import open_session, play_step
from raceday.engine.script import load_script
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev

MISSING = ("no such table", "no such column", "no such view", "no such function")
"""How SQLite (and the store's own words) say a name is not there."""
SKIPPED = ("replay", "end", "wait")
"""Steps this check does not play: they move time (a replay plays the whole night again),
and name nothing."""


def missing_names(exercise: Exercise) -> list[str]:
    """`file:line: ...` for each reference-play step whose SQL names what is not there."""
    if exercise.path is None:
        return []
    scripts = sorted((exercise.path.parent / "scripts").glob("*.yaml"))
    cached = _cache_file(exercise, scripts)
    known = read_problems(cached) if cached is not None else None
    if known is not None:
        return known
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="raceday-check-") as tmp:
        for path in scripts:
            problems += _play(exercise, path, Path(tmp))
    if cached is not None:  # not written (a read-only home): the next check plays again
        write_atomically(cached, json.dumps({"problems": problems}))
    return problems


def _cache_file(exercise: Exercise, scripts: list[Path]) -> Path | None:
    """Where this check's answer is kept: keyed on everything that decides it (the exercise
    as loaded, each script's path and bytes, raceday's code, the working directory the
    messages are relative to). A second `check` of an unchanged exercise is instant."""
    folder = cache_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(repr(exercise).encode("utf-8"))
    for part in (code_digest(), str(Path.cwd()), *(str(p) for p in scripts)):
        digest.update(part.encode("utf-8", "surrogateescape"))
    for path in scripts:
        try:
            digest.update(path.read_bytes())
        except OSError:
            return None
    return folder / "check" / f"{digest.hexdigest()}.json"


def read_problems(path: Path) -> list[str] | None:
    """A check's kept answer (`file:line: ...` lines), or None: absent or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        problems = data["problems"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: played again
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return None
    return problems


def _play(exercise: Exercise, path: Path, folder: Path) -> list[str]:
    try:
        script = load_script(path, exercise)
    except RacedayError as exc:
        return [str(exc)]
    problems: list[str] = []
    session = open_session(exercise, script.roles, folder)
    try:
        for step in script.steps:
            if step.action in SKIPPED:
                continue
            seen = len(session.events)
            try:
                play_step(session, replace(step, at=None), f"{path}:{step.line}")
            except RacedayError as exc:  # a step that cannot be played at all: said once
                problems.append(str(exc))
                break
            for event in session.events[seen:]:
                why = _missing(event)
                if why is not None:
                    problems.append(f"{shown(path)}:{step.line}: {step.action} as "
                                    f"{step.role}: {why}")
    finally:
        session.close()
    return problems


def _missing(event: ev.Event) -> str | None:
    """The error when a player's statement or action named something that is not there."""
    error = None
    if isinstance(event, ev.Statement) and not event.automated and not event.ok:
        error = event.error
    elif isinstance(event, ev.Refused):
        error = event.error
    if error and any(words in error for words in MISSING):
        return error
    return None


def shown(path: Path) -> str:
    """`path` as a message names it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
