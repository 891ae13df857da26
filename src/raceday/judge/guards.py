"""Guard points by the harm kept away, never by a pattern a team can bend.

Every replayed race night (tonight's, and a variant drawn for the session) is played twice:
with the team's schema and edits, and on the exercise's own world. A harm's points are the
share of its minutes the team's world avoided (or, graded "any", all of them when it never
occurred), on the night where the team's world did worst. Good writes of the normal night
that the team's world refused cost `collateral` each; refusing as much as the guards could
earn is an outage of its own, and then the guards earn nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from raceday.exercise.model import Exercise, GuardsRubric, HarmWorth
from raceday.transcript.verdicts import HarmNight, HarmVerdict
from raceday.transcript.wording import plural
from raceday.value import Value, frozen


@frozen
class HarmGrades(Value):
    """The guards' points before collateral, harm by harm, with a reason for each."""

    verdicts: tuple[HarmVerdict, ...]
    reasons: tuple[str, ...]

    @property
    def earned(self) -> int:
        return sum(v.points for v in self.verdicts)


def harm_titles(exercise: Exercise) -> dict[str, str]:
    """Each harm's words for a reason: its invariant's fault."""
    return {i.id: i.fault for i in exercise.invariants}


def practice_titles(exercise: Exercise) -> dict[str, str]:
    """Each practice night's words: "on the practice night: <its title>"."""
    nights = exercise.replay.practice if exercise.replay is not None else ()
    return {n.id: f"on the practice night: {n.title}" for n in nights}


def practice_words(title: str) -> str:
    """A practice night as a reason names it ("the practice night '…'")."""
    return f"the practice night '{title}'"


def _share(worth: HarmWorth, night: HarmNight) -> float:
    """The share of the harm this night's team world kept away (0 to 1)."""
    if worth.grade == "any":
        return 1.0 if night.minutes == 0 else 0.0
    if night.baseline <= 0:
        return 0.0
    return max(0.0, 1.0 - night.minutes / night.baseline)


def grade_harms(rubric: GuardsRubric, nights: Sequence[HarmNight],
                titles: Mapping[str, str],
                practice_titles: Mapping[str, str] | None = None) -> HarmGrades:
    """Each harm the rubric lists, graded on the worst of the replayed race nights, or on its
    practice night alone."""
    practice_titles = practice_titles or {}
    verdicts: list[HarmVerdict] = []
    reasons: list[str] = []
    for worth in rubric.harms:
        title = titles.get(worth.invariant, worth.invariant)
        seen = [n for n in nights if n.harm == worth.invariant and n.baseline > 0
                and n.practice == worth.night]
        if worth.night:
            title = f"{title} ({practice_titles.get(worth.night, worth.night)})"
        if not seen:
            verdicts.append(HarmVerdict(id=worth.invariant, title=title, max=worth.points,
                                        grade=worth.grade, practice=worth.night))
            what = "the practice night" if worth.night else "the replayed race"
            reasons.append(f"guards +0/{worth.points}: {title}: {what} never "
                           "causes it on the exercise's own world, so keeping it away "
                           "cannot be told from luck")
            continue
        worst = min(seen, key=lambda n: (_share(worth, n), -n.minutes))
        share = _share(worth, worst)
        points = round(worth.points * share)
        verdicts.append(HarmVerdict(
            id=worth.invariant, title=title, points=points, max=worth.points,
            grade=worth.grade, minutes=worst.minutes, baseline=worst.baseline,
            night=worst.night, first_at=worst.first_at, practice=worth.night))
        told = replace(worst, night="") if worth.night else worst  # the title names it
        reasons.append(f"guards +{points}/{worth.points}: {title}: "
                       + _how(worth, told, len(seen)))
    return HarmGrades(verdicts=tuple(verdicts), reasons=tuple(reasons))


def _how(worth: HarmWorth, night: HarmNight, nights: int) -> str:
    """Why the harm earned what it did; `night.night` empty: the title already names it."""
    where = f" in {night.night}" if night.night else ""
    over = f" (the worse of {nights} replayed nights)" if nights > 1 else ""
    if night.minutes == 0:
        where = (" in both replayed nights" if nights == 2
                 else f" in all {nights} replayed nights" if nights > 2 else where)
        return (f"kept away all night{where}; without your guards it lasted "
                f"{plural(night.baseline, 'minute')}")
    began = f" from {night.first_at}" if night.first_at else ""
    if worth.grade == "any":
        return (f"it still happened{began}{where}{over}: a harm that must never occur "
                "earns nothing once it does")
    return (f"present {plural(night.minutes, 'minute')}{began}{where}{over}, against "
            f"{plural(night.baseline, 'minute')} without your guards")


QUARTER = 15
"""A harm the team's world causes on a normal night costs `collateral` per started quarter
hour it lasts."""


def harm_cost(rubric: GuardsRubric, minutes: int) -> int:
    return rubric.collateral * -(-minutes // QUARTER)


def collateral_cost(rubric: GuardsRubric, refused: int, failed_penalties: int = 0,
                    harmed: Sequence[HarmNight] = ()) -> int:
    """What the guards' collateral costs, in points: each good write of the normal nights
    refused, each good path blocked, each harm they caused on a normal night."""
    return (refused * rubric.collateral + failed_penalties
            + sum(harm_cost(rubric, h.minutes) for h in harmed))


def stops_the_service(rubric: GuardsRubric, refused: int, failed_penalties: int = 0,
                      harmed: Sequence[HarmNight] = ()) -> bool:
    """Collateral as large as the guards are worth: the guards are an outage of their own."""
    cost = collateral_cost(rubric, refused, failed_penalties, harmed)
    return cost > 0 and cost >= rubric.points
