"""What the team was expected to do or say about an inject (an exercise's `expect:`, as
OpenBAS's expectations), and the facilitator's marks of it: met, partly or not met.

The inject's event carries its expectations; a mark is made live (a `facilitation` event,
action "expect", from the console) or in the hot wash (`raceday aar SESSION --mark INJECT:N
met`, kept in aar.json). The marks fill the AAR: each inject's row says what was expected
and how it was marked (a discussion inject has a response at last), and an objective the
exercise ties expectations to is rated from its points and the marks together. They never
touch the score.

The debrief's own values hold them as subclasses (`ExpectedInject`, `MarkedObjective`), so
every renderer shows them as it shows any inject row or objective.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from raceday.transcript import events as ev
from raceday.transcript.debrief.model import Debrief, InjectResponse, Objective
from raceday.transcript.debrief.ratings import rating
from raceday.value import Value, frozen

MARKS = ("met", "partly", "not met")
WEIGHTS = {"met": 1.0, "partly": 0.5, "not met": 0.0}
HOT_WASH = "in the hot wash"


def mark_word(text: str) -> str | None:
    """'met', 'partly', 'not met' from what a facilitator typed ('not-met', 'NOT_MET'…);
    None when it is none of them."""
    word = " ".join(text.lower().replace("-", " ").replace("_", " ").split())
    word = {"partly met": "partly", "unmet": "not met", "no": "not met", "yes": "met"}.get(
        word, word)
    return word if word in MARKS else None


@frozen
class Expected(Value):
    """One expected action or answer of an inject, and its mark ("" until marked; `marked`
    says when: "at 23:52" live, or "in the hot wash")."""

    inject: str
    number: int
    text: str
    objective: str = ""
    mark: str = ""
    marked: str = ""

    @property
    def key(self) -> str:
        """How aar.json names it: by its inject and its words (a number could come to mean
        another line if the exercise changes)."""
        return f"{self.inject}: {self.text}"

    def line(self) -> str:
        said = (f"{self.mark} (marked {self.marked})" if self.marked else self.mark) \
            if self.mark else "not marked yet"
        return f"expected: {self.text}: {said}"


@frozen
class ExpectedInject(InjectResponse):
    """An inject row of the AAR with what was expected of the team: its `responses` are
    what the team was seen doing (`seen`) and then one line per expectation and its mark."""

    inject: str = ""
    seen: tuple[str, ...] = ()
    expected: tuple[Expected, ...] = ()


@frozen
class MarkedObjective(Objective):
    """An objective rated from its points and the facilitator's marks of the expectations
    tied to it; `name` says so ("detection (expected actions: 1 met, 1 partly of 2)"),
    `objective` is the score part's own name."""

    objective: str = ""
    marked: str = ""


def objective_name(o: Objective) -> str:
    """The score part an objective is (without the marks a `MarkedObjective`'s name adds)."""
    return o.objective if isinstance(o, MarkedObjective) else o.name


def live_marks(events: Sequence[ev.Event]) -> dict[tuple[str, int], tuple[str, str]]:
    """(inject id, number) -> (mark, clock time) from the facilitator's live marks; a later
    mark of the same expectation replaces the earlier."""
    out: dict[tuple[str, int], tuple[str, str]] = {}
    for e in events:
        if isinstance(e, ev.Facilitation) and e.action == "expect" and e.ruling in MARKS:
            out[(e.inject, e.declaration)] = (e.ruling, e.sim_time)
    return out


def with_expected(row: InjectResponse, inject: ev.Inject,
                  marks: Mapping[tuple[str, int], tuple[str, str]]) -> InjectResponse:
    """An inject row with its expectations and their live marks (the row as it was when the
    inject expects nothing)."""
    if not inject.expect:
        return row
    expected = []
    for n, text in enumerate(inject.expect, start=1):
        mark, at = marks.get((inject.id, n), ("", ""))
        expected.append(Expected(inject.id, n, text, inject.objective, mark,
                                 f"at {at}" if mark else ""))
    return _row(row, inject.id, row.responses, tuple(expected))


def _row(row: InjectResponse, inject: str, seen: tuple[str, ...],
         expected: tuple[Expected, ...]) -> ExpectedInject:
    return ExpectedInject(row.time, row.kind, row.title, row.to, row.source,
                          seen + tuple(x.line() for x in expected), inject=inject, seen=seen,
                          expected=expected)


def expectations(d: Debrief) -> tuple[Expected, ...]:
    """Every expectation of the injects the team was shown, in their order."""
    return tuple(x for i in d.injects if isinstance(i, ExpectedInject) for x in i.expected)


def remark(d: Debrief, hot_wash: Mapping[str, str]) -> Debrief:
    """The debrief with the hot wash's marks (aar.json: expectation key -> mark) over the
    live ones, and the objectives rated with them. Unchanged when nothing was expected."""
    if not any(isinstance(i, ExpectedInject) for i in d.injects):
        return d
    rows: list[InjectResponse] = []
    for i in d.injects:
        if not isinstance(i, ExpectedInject):
            rows.append(i)
            continue
        expected = tuple(replace(x, mark=hot_wash[x.key], marked=HOT_WASH)
                         if hot_wash.get(x.key) in MARKS else x for x in i.expected)
        rows.append(_row(i, i.inject, i.seen, expected))
    marked = replace(d, injects=tuple(rows))
    return replace(marked, objectives=tuple(_rated(o, expectations(marked))
                                            for o in d.objectives))


def _rated(o: Objective, expected: Sequence[Expected]) -> Objective:
    """The objective rated from its points and the marks tied to it, equally weighted (the
    points alone when none is marked)."""
    name = objective_name(o)
    marks = [x.mark for x in expected if x.objective == name and x.mark]
    tied = [x for x in expected if x.objective == name]
    if not marks:
        return Objective(name, o.points, o.max, rating(o.points, o.max)) \
            if isinstance(o, MarkedObjective) else o
    share = sum(WEIGHTS[m] for m in marks) / len(marks)
    points = o.points / o.max if o.max else 0.0
    combined = (points + share) / 2
    counts = ", ".join(f"{marks.count(m)} {m}" for m in MARKS if marks.count(m))
    words = f"expected actions: {counts} of {len(tied)}"
    # a rating from a share: the points' own scale, on the combined share
    return MarkedObjective(f"{name} ({words}; rated from the points and the marks)",
                           o.points, o.max, rating(round(combined * 1000), 1000),
                           objective=name, marked=words)
