"""One replay over forked worlds: the steps every replay takes, whichever database holds
the team's world; how a night's world is forked and where the night plays is its
`ReplayNights`' (SQLite's in `replay.py`, PostgreSQL's in `replay_postgres.py`).

The replay asks "would the team's database have refused the race?": it plays the race on a
world forked from the team's (its schema, the exercise's seed rows), then the normal night
(without the delayed worker) on the original world and on the team's; every write that took
on the first but not on the second is a good write the guards block. The race's harms are
judged beside the race on the exercise's own world with no guard (its baseline).

When the exercise defines a shifted race (`replay: shifted`), all of it is played a second
time on other numbers (the clock elsewhere, the delayed worker later, the seed renumbered):
a race step is prevented only when it is prevented in both races, and a good write refused
on either normal night is refused. A guard keyed on tonight's plan numbers or times is not a
guard. Nothing prevented or kept away in tonight's race: the variant can only agree (the
worse of the two nights counts), so it is not played.

When the exercise has practice nights (`replay: practice`), each is played on the team's
world beside the same night on the exercise's own (its baseline), while the races play, on
the variant's numbers when there is one (its clock, names and minutes, its world built with
the variant's seed): a guard keyed on tonight's numbers keeps nothing there either. A
team whose world forks into the exercise's own and whose statements are the exercise's has
practice nights that are their baselines (not played again), a final race night that is the
exercise's own (`own_race`) and normal nights that are too (`own_normal`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from raceday.engine.night import Night, NightKind, Probe, replay_until
from raceday.engine.own_normal import kept_or_played, own_normal_key
from raceday.engine.own_race import keep_own_race, own_race_key, race_outcome, read_own_race
from raceday.engine.replay_exercises import (
    describe_shift,
    practice_baseline,
    practice_baseline_seed,
    practice_seed,
    practiced,
    variant_of,
    with_statements,
)
from raceday.engine.replay_outcomes import (
    Harms,
    HarmTimes,
    Nights,
    NormalHarms,
    baseline_times,
    harm_nights,
    harm_nights_of,
    hidden_times,
    kept_some_away,
    merge_steps,
    step_replays,
)
from raceday.exercise.model import Exercise, ShiftSpec
from raceday.judge.guards import practice_words
from raceday.transcript import events as ev
from raceday.transcript.events import BlockedWrite, ReplayResult
from raceday.transcript.verdicts import HarmNight


class ReplayNights(Protocol):
    """How one replay's nights are played on one database: each on a world forked from the
    team's (or built from the exercise's own), started when asked for and answered when
    called, so that the nights the replay does not wait on play beside the one it does."""

    db: str
    """The database's name in the keys of what replays keep (`replay_cache`, `own_race`)."""

    def clear_earlier(self, root: Path) -> None:
        """Remove the worlds earlier replays under `root` kept for the walk."""

    def open(self, folder: Path) -> None:
        """Read the team's world as every fork of this replay copies it."""

    def same_as_own(self, exercise: Exercise, team_exercise: Exercise) -> bool:
        """The team's world forks into the exercise's own (its statements are the
        exercise's: the caller asked)."""

    def race(self, kind: NightKind, team_exercise: Exercise, folder: Path,
             until: int) -> Callable[[], Night]:
        """Tonight's race on the team's forked world, played into `folder`."""

    def warnings(self) -> list[str]:
        """What forking the race's world said (rows the team's schema refused)."""

    def normal(self, kind: NightKind, exercise: Exercise, team_exercise: Exercise,
               folder: Path, until: int, renumber: str, probes: tuple[Probe, ...],
               ) -> Callable[[], Nights]:
        """The normal night on the original world and on the team's (the race's world for
        `renumber`): the good writes refused, the probes' results, the team's harms."""

    def baseline(self, kind: NightKind, exercise: Exercise, folder: Path, until: int,
                 renumber: str) -> Callable[[], Harms]:
        """The race's harms on the exercise's own world with no guard."""

    def practice_baseline(self, kind: NightKind, exercise: Exercise, folder: Path,
                          until: int, renumber: str) -> Callable[[], Harms]:
        """A practice night's baseline (`baseline` on the exercise's own world, built with
        `renumber`), started now: it plays beside the races."""

    def practice_night(self, kind: NightKind, own: Exercise, team: Exercise, folder: Path,
                       until: int, renumber: str) -> Callable[[], HarmTimes]:
        """The team's practice night `team` on a world forked from the team's as the race's
        is (with `renumber`: the variant's seed), started now: its harms' times, as `own`
        (the exercise's night) counts them."""

    def shifted(self, kind: NightKind, team_exercise: Exercise, folder: Path, until: int,
                renumber: str) -> Callable[[], Night]:
        """The variant's race on the team's world forked with the variant's seed (the
        world its normal night starts from too, asked for after this)."""

    def close(self, *, keep_world: bool, played: bool) -> None:
        """Stop what was not asked for and remove every world made, but the race's when
        `keep_world` and the replay `played` (the walk reads it, until the next replay)."""


def replay_over(nights: ReplayNights, session: Night, probes: tuple[Probe, ...], *,
                keep_world: bool, reveal: bool) -> ReplayResult:
    """The replay of `session` (`replay.replay_race`), its nights played by `nights`."""
    exercise = session.exercise
    root = session.folder / "replay"
    nights.clear_earlier(root)
    n = 1
    while (root / str(n)).exists():
        n += 1
    folder = root / str(n)
    folder.mkdir(parents=True)
    until = replay_until(session)
    team_exercise = with_statements(exercise, session.statement_sql)
    kind = type(session)  # the replay plays sessions of the kind it was given
    delayed = bool(exercise.replay and exercise.replay.delayed)
    shift = session.variant
    played = False
    try:
        nights.open(folder)
        # the team's world and statements are the exercise's own: each night of it is the
        # exercise's, move for move (the engine is deterministic)
        same_world = (not keep_world or bool(exercise.replay and exercise.replay.practice)) \
            and team_exercise.statements == exercise.statements \
            and nights.same_as_own(exercise, team_exercise)
        # an unchanged team's final race night is the exercise's own (`own_race`), and its
        # normal nights are too (`own_normal`)
        own_key = own_race_key(kind, exercise, until, nights.db) \
            if same_world and not keep_world else ""
        known = read_own_race(own_key, folder / "race") if own_key else None
        racing = nights.race(kind, team_exercise, folder / "race", until) \
            if known is None else None
        own_normal = own_normal_key(kind, exercise, until, probes, nights.db) \
            if same_world and delayed else ""
        normal = kept_or_played(own_normal, lambda: nights.normal(
            kind, exercise, team_exercise, folder, until, "", probes) if delayed else None)
        baseline = nights.baseline(kind, exercise, folder / "baseline", until, "")
        warnings = list(nights.warnings())
        practice = _practice_nights(nights, kind, exercise, team_exercise, folder, until,
                                    shift, same_world) \
            if exercise.replay is not None and exercise.replay.practice else None
        if known is not None:
            race = known
        else:
            assert racing is not None
            race = race_outcome(exercise, racing(), until)
            if own_key:
                keep_own_race(own_key, race, folder / "race")
        steps = race.steps
        harms = harm_nights_of(race.harm_times(), baseline(), "tonight's race")
        fault_at = race.fault_at
        warnings.extend(race.warnings)

        shifted_normal: Callable[[], Nights] | None = None
        what = ""
        if shift is not None and (any(s.status == "prevented" for s in steps)
                                  or kept_some_away(harms)):
            what = describe_shift(exercise, shift, reveal=reveal)
            other = folder / "shifted"
            other.mkdir()
            shifted_exercise = variant_of(exercise, shift)
            shifted_team = variant_of(team_exercise, shift)
            shifting = nights.shifted(kind, shifted_team, other, until, shift.seed)
            if delayed:
                shifted_normal = nights.normal(kind, shifted_exercise, shifted_team, other,
                                               until, shift.seed, ())
            shifted_baseline = nights.baseline(kind, shifted_exercise, other / "baseline",
                                               until, shift.seed)
            shifted = shifting()
            steps = merge_steps(steps, step_replays(shifted_exercise, shifted), what, reveal)
            harms += harm_nights(shifted_exercise, shifted, shifted_baseline(), until,
                                 "the variant night")
            if fault_at is None and shifted.facts.fault_started is not None:
                fault_at = (f"{shifted.time_of(shifted.facts.fault_started)} in {what}"
                            if reveal else f"in {what}")

        if practice is not None:  # played beside both races
            harms += practice()

        # the normal nights' answers last: they played beside both races
        blocked: tuple[BlockedWrite, ...] = ()
        checks: tuple[ev.MonitorCheck, ...] = ()
        normal_harms: NormalHarms = ()
        if normal is not None:
            blocked, checks, normal_harms = normal()
        if shifted_normal is not None:
            seen = {b.task for b in blocked}
            more, _, more_harms = shifted_normal()
            normal_harms += hidden_times(more_harms, reveal)
            blocked += tuple(replace(b, outcome=f"{b.outcome}, on the normal night of {what}")
                             for b in more if b.task not in seen)
        played = True
    finally:
        nights.close(keep_world=keep_world, played=played)
    return ReplayResult(
        steps=steps,
        fault_at=fault_at,
        blocked_good_writes=blocked,
        warnings=tuple(dict.fromkeys(warnings)),
        folder=str(folder.relative_to(session.folder)),  # relative: transcripts stay the same
        monitor_checks=checks,
        harms=hidden_times(harms, reveal),
        normal_harms=normal_harms,
    )


def _practice_nights(nights: ReplayNights, kind: NightKind, exercise: Exercise,
                     team_exercise: Exercise, folder: Path, until: int,
                     shift: ShiftSpec | None, same_world: bool,
                     ) -> Callable[[], tuple[HarmNight, ...]]:
    """Each practice night on a world forked from the team's as the race's is, beside the
    same night on the exercise's own world (its baseline), each started now; call what this
    returns for their harms. They need nothing of the race: they start with it.

    `same_world`: the team's world forks into the exercise's own and its statements are the
    exercise's, so each of its practice nights is its baseline, move for move (the engine is
    deterministic): not played again."""
    plays = []
    for night in exercise.replay.practice if exercise.replay is not None else ():
        own = practiced(exercise, night, shift)
        where = folder / f"practice-{night.id}"
        baseline = nights.practice_baseline(kind, practice_baseline(exercise, night, shift),
                                            where, until, practice_baseline_seed(exercise, shift))
        team = None if same_world else nights.practice_night(
            kind, own, practiced(team_exercise, night, shift), where, until,
            practice_seed(shift))
        plays.append((night, own, baseline, team))

    def answer() -> tuple[HarmNight, ...]:
        found: list[HarmNight] = []
        for night, own, baseline, team in plays:
            base = baseline()
            mine = team() if team is not None else baseline_times(own, base)
            found += harm_nights_of(mine, base, practice_words(night.title), practice=night.id)
        return tuple(found)

    return answer
