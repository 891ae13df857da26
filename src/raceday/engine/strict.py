"""`raceday check --strict`: what plays but teaches badly, found by playing the reference plays.

An exercise can load, play and score, and still teach nothing in places: a race step that
no reference play shows a guard preventing (nobody knows a guard can stop it), a correct
finding no play declares while its evidence is there, a fault the score cannot see. Each is
a warning, `file:line: warning: ...`; nothing here stops an exercise from loading or playing.

The reference plays (`scripts/*.yaml` beside `exercise.yaml`) are played headless into a
temporary folder, so checking leaves no session and no history behind.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from raceday.engine.headless import run_script
from raceday.engine.script import load_script
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind


@dataclass(frozen=True)
class Played:
    """One reference play's events (or why it could not be played)."""

    path: Path
    events: tuple[ev.Event, ...] = ()
    problem: str = ""


def play_references(exercise: Exercise) -> list[Played]:
    """Play every `scripts/*.yaml` of the exercise, each into a throw-away folder."""
    if exercise.path is None:
        return []
    played: list[Played] = []
    with tempfile.TemporaryDirectory(prefix="raceday-strict-") as tmp:
        for path in sorted((exercise.path.parent / "scripts").glob("*.yaml")):
            try:
                session, _ = run_script(exercise, load_script(path, exercise), Path(tmp))
            except RacedayError as exc:
                played.append(Played(path, problem=str(exc)))
                continue
            played.append(Played(path, tuple(session.events)))
    return played


def strict_warnings(exercise: Exercise, played: Sequence[Played] | None = None) -> list[str]:
    """Every warning for the exercise, in file order (see the module's docstring)."""
    plays = play_references(exercise) if played is None else list(played)
    where = _shown(exercise.path) if exercise.path else exercise.id
    out: list[tuple[int, str]] = []

    def warn(line: int, text: str) -> None:
        out.append((line, f"{where}:{line}: warning: {text}"))

    for line, note in exercise.moved:
        warn(line, note)
    guard_tasks = {t.id for t in exercise.tasks if t.proves or t.keeps}
    for hint in exercise.hints:
        if hint.task in guard_tasks and hint.play is None:
            warn(hint.line, f'hint "{hint.id}" teaches the guard of task "{hint.task}" but has '
                            f"no play: nothing shows that doing what it says earns points")
    for p in plays:
        if p.problem:
            warn(1, f"reference play {p.path.name} does not play: {p.problem}")
    good = [p for p in plays if not p.problem]
    if not good:
        warn(1, "no reference play in scripts/*.yaml: nothing shows the exercise can be won")
        return [text for _, text in sorted(out)]
    scores = [s.score for p in good for s in of_kind(p.events, ev.ScoreEvent)]
    prevented = {step for s in scores if s.guards for step in s.guards.prevented}
    confirmed = {d.finding for p in good for d in of_kind(p.events, ev.Declaration)
                 if d.correct and d.verdict in ("confirmed", "")}
    faults = [f for p in good for f in of_kind(p.events, ev.Fault)]
    guards = exercise.scoring.guards
    for step in guards.steps if guards else ():
        if step.id not in prevented:
            warn(step.line, f'race step "{step.id}": no reference play prevents it, so no '
                            f"play shows that a guard can stop it")
    for finding in exercise.findings:
        if finding.correct and finding.id not in confirmed:
            warn(finding.line, f'finding "{finding.id}": no reference play declares it while '
                               f"its evidence is there")
    out.extend(_unseen_faults(exercise, faults, where))
    return [text for _, text in sorted(out)]


def _shown(path: Path) -> str:
    """The path as an author types it: relative to the current folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _unseen_faults(exercise: Exercise, faults: Sequence[ev.Fault],
                   where: str) -> list[tuple[int, str]]:
    """Faults the score cannot see: never scored or never credited."""
    out: list[tuple[int, str]] = []
    detection, recovery = exercise.scoring.detection, exercise.scoring.recovery
    evidence = {f.evidence for f in exercise.findings if f.correct}
    seen = {f.invariant for f in faults}
    for inv in exercise.invariants:
        head = f'{where}:{inv.line}: warning: invariant "{inv.id}"'
        if detection is None and recovery is None:
            out.append((inv.line, f"{head}: the scoring has no detection or recovery, so "
                                  f"this fault changes no score"))
        elif inv.id not in seen:
            out.append((inv.line, f"{head}: no reference play shows this fault, so no play "
                                  f"shows the score seeing it"))
        elif (detection is None or inv.id != detection.invariant) and inv.id not in evidence:
            out.append((inv.line, f"{head}: not the fault detection times and no correct "
                                  f"finding names it as evidence: surfacing it earns nothing"))
    return out
