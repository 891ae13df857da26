"""The unknown night: which night of the exercise's family a session plays, drawn when it
opens (`raceday play --unknown`), and that night as the exercise the clock plays.

Detection should measure what a player saw, not what they remember of the article: the
live night is drawn from the family (`replay: nights`) and told only at the end. The draw's
seed is recorded (resume plays the same night) but names nothing; RACEDAY_SEED fixes it.
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace

from raceday.engine.replay_exercises import practiced, variant_of, without_delayed
from raceday.errors import InputError
from raceday.exercise.model import (
    QUIET_NIGHT,
    RACE_NIGHT,
    Exercise,
    FamilyNight,
    NightsSpec,
    PracticeNight,
    ShiftSpec,
)
from raceday.judge.facts import Facts
from raceday.judge.variant import SEED_VARIABLE, session_seed
from raceday.transcript import events as ev
from raceday.transcript.verdicts import Score
from raceday.value import Value, frozen

RACE, PRACTICE, QUIET = "race", "practice", "quiet"
"""What kind of night was drawn (`DrawnNight.kind`): the history keeps detection per kind."""


_NIGHT_SALT = 0x6E69676874  # "night": a given RACEDAY_SEED draws the night apart from the variant


class UnknownNightError(InputError):
    """An unknown night asked of an exercise that declares no family (`replay: nights`), or
    a night it does not have."""

    def __init__(self, problem: str) -> None:
        super().__init__([problem])


@frozen
class DrawnNight(Value):
    """The night an unknown session plays: a night of the family, its fault `later` minutes
    later than the exercise's, and the seed it was drawn with."""

    night: str
    kind: str
    title: str
    later: int = 0
    seed: int = 0


def night_seed() -> int:
    """The draw's seed: from RACEDAY_SEED when it is set (so a facilitator can run the same
    night twice), else fresh; never the variant night's seed, which no file may predict."""
    if os.environ.get(SEED_VARIABLE, "").strip():
        return session_seed() ^ _NIGHT_SALT  # the same for the same RACEDAY_SEED
    return secrets.randbits(63)


def family_of(exercise: Exercise) -> NightsSpec:
    spec = exercise.replay.nights if exercise.replay is not None else None
    if spec is None:
        raise UnknownNightError(
            f"{exercise.id} declares no family of nights to draw an unknown night from "
            "(replay: nights in its exercise.yaml)")
    return spec


def draw_night(exercise: Exercise, seed: int) -> DrawnNight:
    """The night `seed` draws from the exercise's family, by the family's weights."""
    family = family_of(exercise).family
    rng = random.Random(f"night:{seed}")
    chosen = rng.choices(family, weights=[n.weight for n in family])[0]
    later = 0
    if chosen.later is not None:
        least, most, step = chosen.later
        later = least + step * rng.randint(0, (most - least) // step)
    return DrawnNight(night=chosen.night, kind=_kind(chosen), title=night_title(exercise, chosen),
                      later=later, seed=seed)


_SEEDS_SEARCHED = 100_000


def named_night(exercise: Exercise, night_id: str, later: int | None = None,
                start: int = 0) -> DrawnNight:
    """A night of the family the facilitator (or a test) picks rather than draws: the first
    seed from `start` that draws it (with its fault `later` minutes later, when given), so
    the transcript records a seed as for any draw and a resume plays the same night."""
    chosen = family_of(exercise).night(night_id)
    if chosen is None:
        known = ", ".join(n.night for n in family_of(exercise).family)
        raise UnknownNightError(f"{exercise.id} has no night {night_id!r} in its family "
                                f"(nights: {known})")
    for seed in range(start, start + _SEEDS_SEARCHED):
        drawn = draw_night(exercise, seed)
        if drawn.night == night_id and (later is None or drawn.later == later):
            return drawn
    raise UnknownNightError(f"{exercise.id}: night {night_id!r} is never drawn "
                            f"{'' if later is None else f'{later} minutes later '}"
                            f"(its later range is {chosen.later})")


def _kind(night: FamilyNight) -> str:
    return {RACE_NIGHT: RACE, QUIET_NIGHT: QUIET}.get(night.night, PRACTICE)


def night_title(exercise: Exercise, night: FamilyNight) -> str:
    """The night in words, as the end reveals it."""
    if night.night == RACE_NIGHT:
        return "the race of the record (the night the exercise tells)"
    if night.night == QUIET_NIGHT:
        return "a quiet night: nothing went wrong"
    practice = exercise.replay.practice_night(night.night) if exercise.replay else None
    return practice.title if practice is not None else night.night


def live_exercise(exercise: Exercise, drawn: DrawnNight) -> Exercise:
    """The drawn night as an exercise the clock plays: its tasks and when they fall due.
    The session keeps the family's exercise for everything else (roles, statements, hints,
    the final replay), so the team's guards are judged on every night as on any session."""
    replay = exercise.replay
    if replay is None:
        return exercise
    if drawn.kind == QUIET:
        return without_delayed(exercise)
    if drawn.kind == RACE:
        if not drawn.later:
            return exercise
        return variant_of(exercise, ShiftSpec(later=tuple((t, drawn.later)
                                                          for t in replay.delayed)))
    night = replay.practice_night(drawn.night)
    if night is None:
        raise UnknownNightError(f"{exercise.id} has no practice night {drawn.night!r}")
    return practiced(exercise, _moved(night, drawn.later))


def _moved(night: PracticeNight, later: int) -> PracticeNight:
    if not later:
        return night
    return replace(night, changes=tuple(replace(c, at=c.at + later) for c in night.changes))


def unknown_briefing(exercise: Exercise) -> str:
    """The briefing an unknown night shows: the exercise's, with what comes before its
    second section (an opening paragraph and the situation, which tell tonight's story) in
    the family's words (`nights: situation`)."""
    spec = family_of(exercise)
    briefing = exercise.briefing.strip()
    if not spec.situation.strip():
        return briefing
    first = 0 if briefing.startswith("## ") else briefing.find("\n## ") + 1
    second = briefing.find("\n## ", first + 1) if first >= 0 else -1
    rest = briefing[second + 1:] if second >= 0 else ""
    return (spec.situation.strip() + "\n\n" + rest).strip()


def chosen_night(exercise: Exercise, unknown: bool, night: str | None) -> DrawnNight | None:
    """The night `--unknown` (drawn) or `--night ID` (the facilitator's pick) asks for; None:
    the night the exercise tells."""
    if night is not None:
        return named_night(exercise, night, start=night_seed() % 1_000_000)
    if unknown:
        return draw_night(exercise, night_seed())
    return None


def facilitator_night_line(night: DrawnNight) -> str:
    """What the host's own terminal tells the facilitator of an unknown night (never a seat's
    screen, the projector or a file)."""
    later = f", its fault {night.later} min later than the file's" if night.later else ""
    return (f"Unknown night (for the facilitator only; the seats are not told): "
            f"{night.title}{later}.")


def judge_as_drawn(night: DrawnNight, facts: Facts, events: Sequence[ev.Event]) -> None:
    """What the judge needs of the drawn night: which it was, and the team's monitors that
    never alerted on it (one keyed on another night's particulars is silent here)."""
    facts.night, facts.night_kind = night.night, night.kind
    alerted = {name for _minute, name in facts.monitor_alerts}
    saved = dict.fromkeys(e.name for e in events if isinstance(e, ev.MonitorSaved))
    facts.silent_monitors = [name for name in saved if name not in alerted]


def night_revealed(night: DrawnNight, facts: Facts, score: Score,
                   time_of: Callable[[int], str]) -> ev.NightRevealed:
    """The unknown night told at its end: which it was, when its harm began, and what
    surfaced it first."""
    began = facts.fault_started
    detection = score.detection
    gave_away = (f"{detection.by} at {detection.detected_at}"
                 if detection is not None and detection.by and began is not None else None)
    return ev.NightRevealed(night=night.night, night_kind=night.kind, title=night.title,
                            later=night.later,
                            began_at=time_of(began) if began is not None else None,
                            gave_away=gave_away)


def night_json(events: Sequence[ev.Event]) -> dict[str, object] | None:
    """An unknown session's night as `raceday run --json` says it (None: the night told)."""
    told = next((e for e in events if isinstance(e, ev.NightRevealed)), None)
    if told is None:
        return None
    return {"id": told.night, "kind": told.night_kind, "title": told.title,
            "later": told.later, "began_at": told.began_at}
