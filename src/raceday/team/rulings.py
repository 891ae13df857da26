"""The facilitator's rulings on the team's declarations: right, partly right or wrong, with a
note; and their marks of what an inject expected of the team (`mark_expected`: met, partly or
not met, for the AAR, never the score). The judge decides each declaration from the world;
a facilitator who heard the team's reasoning may rule otherwise, and the debrief shows their
word beside the judge's.

A ruling is a `Facilitation` event (action "ruling") and goes into the session's facts
(`Facts.rulings`), where the judge finds it (judge/rulings.py). A finding declared in the
player's own words is named there by its words (`ruled_finding`).
"""

from __future__ import annotations

from collections.abc import Sequence

from raceday.engine.session import Session, SessionError
from raceday.inert import has_controls
from raceday.judge.facts import ruled_finding
from raceday.transcript import events as ev
from raceday.transcript.debrief.expectations import mark_word

RULINGS = ("right", "partly", "wrong")
MAX_NOTE = 300


def declaration_of(session: Session, seq: int) -> ev.Declaration:
    """The declaration event number `seq`, or a one-line error."""
    found = next((e for e in session.events if e.seq == seq), None)
    if not isinstance(found, ev.Declaration):
        raise SessionError(f"event {seq} is not a declaration of this session")
    return found


def rule(session: Session, seq: int, ruling: str, note: str = "") -> ev.Event:
    """Record the facilitator's ruling on declaration `seq` and hand it to the judge."""
    if ruling not in RULINGS:
        raise SessionError(f"a ruling is one of {', '.join(RULINGS)}, not {ruling!r}")
    note = " ".join(note.split())
    if len(note) > MAX_NOTE or has_controls(note, one_line=True):
        raise SessionError(f"a ruling's note is one line of at most {MAX_NOTE} printable "
                           "characters")
    if session.ended:
        raise SessionError("the session is scored: rule before it ends (the hot wash's "
                           "words go into `raceday aar`)")
    declared = declaration_of(session, seq)
    finding = ruled_finding(declared.finding, declared.text)  # own words: "own-words: <words>"
    event = session.record(ev.Facilitation(
        action="ruling", ruling=ruling, declaration=seq, detail=finding,
        to=(declared.role,), at=declared.sim_time, text=note))
    session.facts.rulings.append((declared.minute, finding, ruling, note))
    return event


def rulings_in(events: Sequence[ev.Event]) -> list[tuple[int, str, str, str]]:
    """The facts' rulings from a transcript's events (a resumed session's)."""
    declared = {e.seq: e for e in events if isinstance(e, ev.Declaration)}
    return [(declared[e.declaration].minute,
             ruled_finding(declared[e.declaration].finding, declared[e.declaration].text),
             e.ruling, e.text)
            for e in events
            if isinstance(e, ev.Facilitation) and e.action == "ruling"
            and e.declaration in declared]



def mark_expected(session: Session, inject: str, number: int, mark: str) -> ev.Event:
    """Record the facilitator's mark (met, partly, not met) of expectation `number` (from 1)
    of an inject the team was shown; it fills the AAR, never the score. A later mark of the
    same expectation replaces this one."""
    word = mark_word(mark)
    if word is None:
        raise SessionError(f"a mark is met, partly or not met, not {mark!r}")
    if session.ended:
        raise SessionError("the session is scored: mark it in the hot wash (`raceday aar "
                           f"SESSION --mark {inject}:{number} {word.replace(' ', '-')}`)")
    heard = [e for e in session.events if isinstance(e, ev.Inject) and e.id == inject]
    if not heard:
        raise SessionError(f"inject {inject} has not reached the team yet: mark what it "
                           "expected once it has")
    expect = heard[-1].expect
    if not expect:
        raise SessionError(f"inject {inject} expects nothing of the team")
    if not 1 <= number <= len(expect):
        raise SessionError(f"inject {inject} expects {len(expect)} thing"
                           f"{'s' * (len(expect) != 1)} (numbered from 1), not {number}")
    return session.record(ev.Facilitation(
        action="expect", inject=inject, declaration=number, detail=expect[number - 1],
        ruling=word, at=heard[-1].sim_time))
