"""The facilitator rules on the team's declarations (right, partly, wrong, with a note): the
ruling is an event, reaches the judge's facts, and the debrief and AAR show it; a right finding
declared before the fault is no strength."""

from __future__ import annotations

import pytest
from team_fixtures import joined, send

from raceday.engine.session import SessionError
from raceday.team.host import Host
from raceday.team.rulings import rulings_in
from raceday.transcript import events as ev
from raceday.transcript.debrief import build_debrief
from raceday.transcript.log import read_events
from raceday.transcript.render import describe


def _declared(host: Host, finding: str) -> ev.Declaration:
    return next(e for e in reversed(host.need().events)
                if isinstance(e, ev.Declaration) and e.finding == finding)


def test_a_ruling_is_recorded_reaches_the_facts_and_shows_in_the_debrief(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    send(host, rita, "declare", finding="ddos-attack")
    attack = _declared(host, "ddos-attack")
    assert attack.verdict == "wrong"
    host.rule(attack.seq, "wrong", "no look behind it")
    host.rule(attack.seq, "partly", "clients retrying do look like an attack")  # changed mind
    rulings = [e for e in host.need().events
               if isinstance(e, ev.Facilitation) and e.action == "ruling"]
    assert [(r.ruling, r.declaration, r.detail, r.to) for r in rulings] == [
        ("wrong", attack.seq, "ddos-attack", ("responder",)),
        ("partly", attack.seq, "ddos-attack", ("responder",))]
    assert describe(rulings[-1]) == (
        "facilitator: ruled responder's declaration at 23:00 (ddos-attack) partly right: "
        "clients retrying do look like an attack")
    assert host.need().facts.rulings[-1] == (
        attack.minute, "ddos-attack", "partly", "clients retrying do look like an attack")
    host.end()
    events = read_events(host.folder).events
    assert rulings_in(events) == host.need().facts.rulings  # what a resumed host reads back
    debrief = build_debrief(events)
    [row] = debrief.declarations
    assert row.judged == ("wrong; the facilitator ruled it partly right: clients retrying do "
                          "look like an attack")
    md = (host.folder / "debrief.md").read_text(encoding="utf-8")
    assert "the facilitator ruled it partly right: clients retrying do look like an attack" in md
    assert any("only partly right" in x for x in debrief.after_action.improvements)


def test_a_ruling_right_makes_the_declaration_a_strength(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    send(host, rita, "declare", finding="route53-failure")
    host.rule(_declared(host, "route53-failure").seq, "right", "Route 53 served it")
    host.end()
    after = build_debrief(read_events(host.folder).events).after_action
    assert any(x.startswith("Declared a right finding at 23:00: Route 53 failed (the "
                            "facilitator ruled it right: Route 53 served it)") for x in after.strengths)
    assert not any("Route 53 failed" in x for x in after.improvements)


def test_bad_rulings_are_one_line_errors(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    send(host, rita, "declare", finding="ddos-attack")
    seq = _declared(host, "ddos-attack").seq
    with pytest.raises(SessionError, match="a ruling is one of right, partly, wrong, not 'maybe'"):
        host.rule(seq, "maybe")
    with pytest.raises(SessionError, match="event 1 is not a declaration of this session"):
        host.rule(1, "right")
    with pytest.raises(SessionError, match="one line"):
        host.rule(seq, "right", "a\x1b[2Jcleared screen")
    host.end()
    with pytest.raises(SessionError, match="the session is scored"):
        host.rule(seq, "right")


def test_a_right_finding_declared_before_the_fault_is_no_strength(host: Host) -> None:
    """The AAR used to list it as a strength while saying the fault was never surfaced."""
    rita = joined(host, "responder", "Rita")
    send(host, rita, "declare", finding="empty-dns-record")  # 23:00: the fault comes at 23:48
    assert _declared(host, "empty-dns-record").verdict == "false_alarm"
    host.end()  # the night plays itself out: the fault happens, nobody surfaces it
    after = build_debrief(read_events(host.folder).events).after_action
    assert not any("Declared a right finding" in x for x in after.strengths)
    assert any("never surfaced" in x for x in after.improvements)
    assert any(x.startswith("Declared 'The regional endpoint") and "before it was so" in x
               for x in after.improvements)
