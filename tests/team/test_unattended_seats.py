"""One empty or quiet seat never stalls a game day: after the host's grace the automation
does the held step, recorded, and the night's fault comes while the team is still there."""

from __future__ import annotations

from pathlib import Path

from raceday.team.start_host import build_host
from raceday.transcript import events as ev
from raceday.transcript.log import read_events


def _night(tmp_path: Path, grace_all: bool, grace: int | None = 5) -> list[ev.Event]:
    host = build_host("dynamodb-dns-race", "responder,enactor-a", "turns", None, tmp_path)
    host.grace_all, host.grace = grace_all, grace
    host.start()
    try:
        host.pump()  # the host tells the session which seats nobody is at
        host.advance_to(75)  # 00:15, as a facilitator's skips would
        host.end()
    finally:
        host.close()
    return list(read_events(host.folder).events)


def test_a_seat_never_taken_has_its_held_step_played_after_the_grace(tmp_path: Path) -> None:
    events = _night(tmp_path, grace_all=False)
    automated = [e for e in events if isinstance(e, ev.Facilitation) and e.action == "automate"]
    assert [e.detail for e in automated][:1] == ["enactor-a-check"]
    assert "within 5 min of 23:31" in automated[0].text
    assert automated[0].sim_time == "23:36"
    fault = next(e for e in events if isinstance(e, ev.Fault))
    assert fault.sim_time == "23:53"  # the apply due at 23:48, played 5 minutes later
    assert not fault.after_team_left


def test_without_a_grace_the_step_waits_for_the_facilitator(tmp_path: Path) -> None:
    events = _night(tmp_path, grace_all=True, grace=None)
    assert not any(isinstance(e, ev.Facilitation) and e.action == "automate" for e in events)
    faults = [e for e in events if isinstance(e, ev.Fault) and not e.after_team_left]
    assert faults == []  # nobody played the step: no fault while the team was there



def test_a_seat_that_acts_keeps_its_step_a_refusal_is_a_choice(tmp_path: Path) -> None:
    from raceday.engine.actions import RunSql

    host = build_host("dynamodb-dns-race", "responder,enactor-a", "turns", None, tmp_path)
    host.grace_all = True  # a headless host
    host.start()
    try:
        seat = host.seats["enactor-a"]
        seat.joined_at, seat.acted = 1.0, True  # Bo is there and has acted
        host.need().perform(RunSql(role="enactor-a", sql="SELECT 1"))
        host.pump()
        assert "enactor-a" not in host.need().unattended
        assert host.need().unattended == {"responder": 5}  # the responder never joined
        host.advance_to(75)
        host.end()
    finally:
        host.close()
    events = read_events(host.folder).events
    assert not any(isinstance(e, ev.Facilitation) and e.action == "automate" for e in events)
    assert not any(isinstance(e, ev.Fault) and not e.after_team_left for e in events)


def test_a_fault_step_the_facilitator_skips_is_scored_as_not_played(tmp_path: Path) -> None:
    host = build_host("dynamodb-dns-race", "responder,enactor-a", "turns", None, tmp_path)
    host.grace = None
    host.start()
    try:
        for seat in host.seats.values():
            seat.joined_at = 1.0
        host.advance_to(48)  # 23:48: Enactor A's apply falls due, and its seat is quiet
        for task in list(host.need().pending):
            host.skip_step(task)
        host.advance_to(75)
        score = host.end().score
    finally:
        host.close()
    assert score.fault.outcome == "not played"
    assert score.detection is not None and score.detection.points == score.detection.max
    assert "not played: the facilitator let the night go on without" in \
        score.detection.reasons[-1]
    assert score.guards is not None and score.guards.points == 0  # no guard: none earned
