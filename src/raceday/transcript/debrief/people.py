"""The people around a session, as the debrief shows them: the players' names, observers'
notes, the facilitator's hand on the clock, and every inject beside what the team did next;
and the exercise's objectives (the parts of the score) rated the way an AAR/IP rates them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from raceday.transcript import events as ev
from raceday.transcript.debrief.expectations import live_marks, with_expected
from raceday.transcript.debrief.model import (
    AfterAction,
    InjectResponse,
    Objective,
    Observation,
    ScoreReport,
)
from raceday.transcript.debrief.ratings import RATINGS as RATINGS  # the renderers' import
from raceday.transcript.debrief.ratings import rating
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.log import of_kind
from raceday.transcript.render import describe, facilitation_words

RESPONSE_WINDOW = 15
"""Minutes after an inject in which the team's actions count as its response (or until the
next inject arrives, whichever is sooner)."""
RESPONSES_SHOWN = 4



def names(r: Reading) -> tuple[tuple[str, str], ...]:
    """(role, who played it): the cast's names, and in a team session the name each player
    joined their seat with (several people at one seat over the night: all of them)."""
    cast = next(of_kind(r.events, ev.Cast), None)
    named: dict[str, list[str]] = {str(role): [str(name)] for role, name in
                                   (cast.names.items() if cast else ())}
    for joined in of_kind(r.events, ev.SeatJoined):
        people = named.setdefault(joined.role, [])
        if joined.player not in people:
            people.append(joined.player)
    return tuple((role, ", ".join(people)) for role, people in named.items() if people)


STRENGTH_MARKS = ("+",)
IMPROVEMENT_MARKS = ("-", "!")
"""How an observer tags a note as they write it: '+ calm hand-off' is a strength, '- nobody
checked the kill switch' an area for improvement (the mark is not kept)."""


def tagged(text: str) -> tuple[str, str]:
    """(tag, text without its mark) for an observer's note."""
    stripped = text.strip()
    for marks, tag in ((STRENGTH_MARKS, "strength"), (IMPROVEMENT_MARKS, "improvement")):
        if stripped[:1] in marks:
            return tag, stripped[1:].strip()
    return "", stripped


def observations(r: Reading) -> tuple[Observation, ...]:
    out: list[Observation] = []
    for note in of_kind(r.events, ev.Note):
        tag, text = tagged(note.text)
        out.append(Observation(r.time(note), note.author or note.role or "", text, tag))
    return tuple(out)


def with_observations(a: AfterAction, notes: Sequence[Observation]) -> AfterAction:
    """The AAR's strengths and areas for improvement with the observers' tagged notes, each
    linked to its moment."""
    def line(o: Observation) -> str:
        when = f"Observed at {o.time}" if o.time else "Observed in the hot wash"
        return when + (f" by {o.author}" if o.author else "") + f": {o.text}"

    strengths = tuple(line(o) for o in notes if o.tag == "strength")
    improvements = tuple(line(o) for o in notes if o.tag == "improvement")
    return replace(a, strengths=a.strengths + strengths,
                   improvements=a.improvements + improvements)


def facilitation(r: Reading) -> tuple[str, ...]:
    return tuple(f"{r.time(e)} {facilitation_words(e)}"
                 for e in of_kind(r.events, ev.Facilitation))


def _team_action(e: ev.Event) -> bool:
    if isinstance(e, ev.Statement):
        return not e.automated
    return isinstance(e, ev.MonitorSaved | ev.Declaration | ev.Hint | ev.Edit | ev.Replay)


def inject_responses(r: Reading) -> tuple[InjectResponse, ...]:
    """Every inject shown to the team (not that night's reveals), with the team's actions
    from it until the next inject at a later minute (at most `RESPONSE_WINDOW` minutes);
    the routine statements of roles with scheduled tasks are left out (see below)."""
    injects = [e for e in of_kind(r.events, ev.Inject) if e.inject_kind != "reveal"]
    dues = Counter((e.role, e.task) for e in of_kind(r.events, ev.TaskDue))
    tasked = {role for (role, _task), times in dues.items() if times > 1}  # recurring work
    out: list[InjectResponse] = []
    marks = live_marks(r.events)  # the facilitator's marks of what each inject expected
    team = [e for e in r.events if _team_action(e)]  # once, not once per inject
    for inject in injects:
        # a role with recurring work (a person in an automation seat) answers an inject by
        # its statements only when the inject is for it; otherwise those are its routine
        actions = [e for e in team if not (
            isinstance(e, ev.Statement) and e.role in tasked and e.role not in inject.to)]
        later = [i.minute for i in injects if i.minute > inject.minute]
        until = min([inject.minute + RESPONSE_WINDOW, *later])
        seen = [a for a in actions if inject.seq < a.seq and a.minute < until]
        words = [f"{r.time(a)} {_short(describe(a))}" for a in seen[:RESPONSES_SHOWN]]
        if len(seen) > RESPONSES_SHOWN:
            words.append(f"and {len(seen) - RESPONSES_SHOWN} more")
        if not seen:
            after = next((a for a in actions if a.seq > inject.seq), None)
            if after is not None and after.minute - inject.minute <= RESPONSE_WINDOW:
                words.append(f"none before the next inject; the team's next action, "
                             f"{after.minute - inject.minute} min later: {r.time(after)} "
                             f"{_short(describe(after), 60)}")
        out.append(with_expected(InjectResponse(r.time(inject), inject.inject_kind,
                                                inject.title, ", ".join(inject.to) or "everyone",
                                                inject.source or "", tuple(words)),
                                 inject, marks))
    return tuple(out)


def objectives(score: ScoreReport | None) -> tuple[Objective, ...]:
    if score is None:
        return ()
    return tuple(Objective(s.name, s.points, s.max, rating(s.points, s.max))
                 for s in score.sections if s.max)


def _short(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
