"""`raceday check` plays what each hint teaches, and refuses a hint that earns nothing.

A hint that teaches a guard or a repair is a claim to the player: do this and it helps. A hint
may name a play script doing what it teaches (`play:`, with the part of the score it must
raise, `earns:`); checking the exercise plays it, and the same night with nothing done, into a
throw-away folder. A hint whose play earns no more than doing nothing is the exercise's error,
with the judge's own reason: a guard keyed on tonight's plan number refuses the night's later
good writes, or leaves the variant night's harm in place, and the score shows which.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from raceday.engine.headless import run_script
from raceday.engine.script import Script, load_script
from raceday.errors import RacedayError
from raceday.exercise.model import Exercise, Hint
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind
from raceday.transcript.verdicts import HarmNight, Score

TONIGHT = "tonight's race"


def hint_play_problems(exercise: Exercise) -> list[str]:
    """One `file:line: hint "X": ...` for each hint whose play fails or earns nothing."""
    hints = [h for h in exercise.hints if h.play]
    if not hints or exercise.path is None:
        return []
    folder = exercise.path.parent
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="raceday-hints-") as tmp:
        nothing, _ = _play(exercise, Script(folder / "nothing", exercise.id, None, ()), Path(tmp))
        for hint in hints:
            where = f'{exercise.path}:{hint.line}: hint "{hint.id}"'
            try:
                script = load_script(folder / str(hint.play), exercise)
                played, nights = _play(exercise, script, Path(tmp))
            except RacedayError as exc:
                problems.append(f"{where}: its play {hint.play} does not play: "
                                f"{str(exc).splitlines()[0]}")
                continue
            why = _earns_nothing(exercise, hint, played, nothing, nights)
            if why:
                problems.append(f"{where}: played as {hint.play}, {why}")
    return problems


def _play(exercise: Exercise, script: Script, folder: Path,
          ) -> tuple[Score, tuple[HarmNight, ...]]:
    """The play's score, and each harm in each race night of its final replay."""
    session, _ = run_script(exercise, script, folder)
    assert session.score is not None  # run_script ends the session
    final = [r for r in of_kind(session.events, ev.Replay) if r.final and r.result]
    nights = final[-1].result.harms if final and final[-1].result else ()
    return session.score, nights


def _points(score: Score, part: str) -> int:
    section = dict(score.parts).get(part)
    return section.points if section is not None else 0


def _earns_nothing(exercise: Exercise, hint: Hint, played: Score, nothing: Score,
                   nights: tuple[HarmNight, ...]) -> str:
    """Why the hint's play earns nothing, in the judge's terms; "" when it earns."""
    got, base = _points(played, hint.earns), _points(nothing, hint.earns)
    guards = played.guards
    if hint.earns == "guards":
        keyed = _keyed_on_tonight(nights)
        if keyed:
            return f"{keyed}: a guard keyed on tonight's numbers"
    if got > base or (hint.earns == "guards" and _proves(exercise, hint, played)):
        return ""
    head = f"it earns {got} {hint.earns} points, {'as' if got == base else 'less than'} " \
           f"doing nothing ({base})"
    steps = _task_steps(exercise, hint)
    if steps:
        head += f", and does not prevent {', '.join(steps)} (its task's race steps)"
    if hint.earns == "guards" and guards is not None and guards.blocked_good_writes:
        first = guards.blocked_good_writes[0]
        return (f"{head}: its guards refused {len(guards.blocked_good_writes)} good writes of "
                f"the normal night (the first: {first.task} at {first.at}, {first.outcome})")
    return head


def _task_steps(exercise: Exercise, hint: Hint) -> tuple[str, ...]:
    task = next((t for t in exercise.tasks if t.id == hint.task), None)
    return task.proves if task is not None else ()


def _proves(exercise: Exercise, hint: Hint, played: Score) -> bool:
    """A guard the hint's task asks for stops its own race steps, refusing no good write:
    on an exercise whose harms have several causes, one guard alone keeps no minute away
    (the next cause brings the same harm), yet it does what the hint says."""
    steps, guards = _task_steps(exercise, hint), played.guards
    if not steps or guards is None or guards.blocked_good_writes or guards.collateral:
        return False
    return all(step in guards.prevented for step in steps)


def _keyed_on_tonight(nights: tuple[HarmNight, ...]) -> str:
    """A harm kept away in tonight's race but left as it was on another race night."""
    race = [n for n in nights if not n.practice]
    kept = {n.harm for n in race if n.night == TONIGHT and n.minutes < n.baseline}
    for n in race:
        if n.night != TONIGHT and n.harm in kept and n.baseline and n.minutes >= n.baseline:
            return (f"it keeps {n.harm} away in {TONIGHT} but not on {n.night} ({n.minutes} "
                    f"minutes against {n.baseline} without it)")
    return ""
