"""The facilitator's prepared injects (`raceday host --injects FILE`): checked like an
exercise, each problem one line with file:line; in the master list they go out on time or when
their harm holds, and move, go out now or are cancelled, each change recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_fixtures import TOKENS

from raceday.engine.clock import Pace
from raceday.engine.load import load_named_exercise
from raceday.engine.session import SessionError
from raceday.exercise.model import Exercise
from raceday.team.client import View
from raceday.team.host import Host
from raceday.team.inject_file import InjectFileError, load_inject_file
from raceday.team.inject_plan import CANCELLED, PLANNED, SENT, InjectPlan, when_words
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.transcript.render import describe

GOOD = """\
exercise: dynamodb-dns-race
injects:
  - id: ceo-call
    kind: question
    at: "23:06"
    title: The CEO asks what to tell customers
    text: Who speaks for us?
  - id: social
    kind: status
    to: [responder]
    when: empty-answer
    after: 5m
    title: Customers say the app is down
  - id: pager
    kind: alarm
    at: "23:30"
    title: Pager - error rate high
  - id: spare
    at: "23:20"
    title: A spare message
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "injects.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_bad_inject_file_says_each_problem_on_one_line_with_its_line(
        flagship: Exercise, tmp_path: Path) -> None:
    path = _write(tmp_path, """\
exercise: dynamodb-dns-race
injects:
  - title: Unquoted time
    at: 23:40
  - title: Unknown harm
    when: dns-broken
  - title: Both
    at: "23:10"
    when: empty-answer
  - title: To whom
    to: [ceo]
    at: "23:10"
    colour: red
  - kind: fax
    at: "23:10"
""")
    with pytest.raises(InjectFileError) as caught:
        load_inject_file(path, flagship)
    problems = caught.value.problems
    assert f"{path}:4: inject \"prepared-1\": at is a time in quotes, \"23:40\" (unquoted, YAML " \
           "reads 23:40 as a number)" in problems
    assert any(p.startswith(f"{path}:6: inject \"prepared-2\": unknown harm 'dns-broken' "
                            "(harms are empty-answer") for p in problems)
    assert f"{path}:7: inject \"prepared-3\" needs \"at\" (a time, \"23:40\") or \"when\" (a " \
           "harm that holds), one of the two" in problems
    assert any(p.startswith(f"{path}:11: inject \"prepared-4\": unknown role 'ceo'")
               for p in problems)
    assert any(p.startswith(f"{path}:13: inject 4: unknown key 'colour'") for p in problems)
    assert f"{path}:14: inject \"prepared-5\" needs a title" in problems
    assert any(p.startswith(f"{path}:14: inject \"prepared-5\": kind 'fax' is not one of")
               for p in problems)
    assert all("\n" not in p for p in problems)


def test_prepared_injects_go_out_on_time_move_cancel_and_follow_the_harm(
        flagship: Exercise, tmp_path: Path) -> None:
    prepared = load_inject_file(_write(tmp_path, GOOD), flagship)
    wall = [100.0]
    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path / "t",
                pace=Pace.LIVE, speed=60.0, wall=lambda: wall[0], tokens=TOKENS)
    host.prepared = (prepared, "injects.yaml")
    host.start()
    keys = {e.inject.id: e.key for e in host.injects.entries}
    host.move_inject(keys["pager"], 5)  # 23:30 -> 23:35
    host.cancel_inject(keys["spare"])
    with pytest.raises(SessionError, match="only the facilitator's waiting injects"):
        host.move_inject("exercise:" + flagship.injects[0].id, 5)
    wall[0] += 10  # ten simulated minutes in one look at the clock: it stops at 23:06
    host.pump()
    sent = [e for e in host.need().events if isinstance(e, ev.Inject) and e.id == "adhoc"]
    assert [(e.sim_time, e.title, e.inject_kind) for e in sent] == [
        ("23:06", "Question for discussion: The CEO asks what to tell customers", "message")]
    while host.need().minute < 70:  # to 00:10, past the fault (23:48) and five minutes in
        wall[0] += 1
        host.pump()
    by_title = {e.title: e for e in host.need().events if isinstance(e, ev.Inject)
                and e.id == "adhoc"}
    assert by_title["Pager - error rate high"].sim_time == "23:35"
    assert by_title["Pager - error rate high"].inject_kind == "alarm"
    assert "A spare message" not in by_title
    fault = next(e for e in host.need().events if isinstance(e, ev.Fault))
    social = by_title["Customers say the app is down"]
    assert social.minute == fault.minute + 5 and social.to == ("responder",)
    seen = View(host.folder).new_events()  # what the seats and the projector read
    assert not any(isinstance(e, ev.Facilitation) for e in seen)  # no spoiler of what comes
    assert "Customers say the app is down" in {e.title for e in seen if isinstance(e, ev.Inject)}
    states = {e.inject.id: e.state for e in host.injects.entries}
    assert states["spare"] == CANCELLED and states["pager"] == SENT
    host.end()
    words = [describe(e) for e in read_events(host.folder).events
             if isinstance(e, ev.Facilitation)]
    assert words[:3] == ["facilitator: loaded 4 prepared injects from injects.yaml",
                         "facilitator: inject moved: Pager - error rate high: now 23:35",
                         "facilitator: inject cancelled: A spare message"]
    host.close()


def test_a_waiting_inject_goes_out_now_and_skip_stops_at_the_next(
        flagship: Exercise, tmp_path: Path) -> None:
    prepared = load_inject_file(_write(tmp_path, GOOD), flagship)
    wall = [100.0]
    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path / "t",
                pace=Pace.LIVE, speed=60.0, wall=lambda: wall[0], tokens=TOKENS)
    host.prepared = (prepared, "injects.yaml")
    host.start()
    keys = {e.inject.id: e.key for e in host.injects.entries}
    host.send_inject_now(keys["pager"])
    assert host.need().events[-1].title == "Pager - error rate high"  # type: ignore[attr-defined]
    with pytest.raises(SessionError, match="is not waiting"):
        host.send_inject_now(keys["pager"])
    host.skip()  # the responder has no task before 23:06: skip stops at the CEO's question
    assert host.need().clock_face == "23:06"
    assert host.need().events[-1].title.startswith("Question for discussion")  # type: ignore[attr-defined]
    host.end()
    host.close()


def test_a_resumed_host_has_the_master_list_as_it_was(flagship: Exercise,
                                                      tmp_path: Path) -> None:
    """The host killed mid-night: `raceday resume` lists the prepared and live injects again,
    moved, cancelled and sent as they were; none goes out twice, the rest on time."""
    from raceday.team.inject_file import PreparedInject

    prepared = load_inject_file(_write(tmp_path, GOOD), flagship)
    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path / "t",
                pace=Pace.TURNS, tokens=TOKENS)
    host.prepared = (prepared, "injects.yaml")
    host.start()
    keys = {e.inject.id: e.key for e in host.injects.entries}
    host.move_inject(keys["pager"], 5)  # 23:35
    host.cancel_inject(keys["spare"])
    live = host.plan_live(PreparedInject(id="live", title="Legal asks for a timeline",
                                         text="By 01:00", kind="question", at=50))
    host.advance_to(10)  # the CEO's question went out at 23:06
    host.pump()
    before = {e.key: (e.state, e.inject.at, e.inject.after) for e in host.injects.entries}
    folder = host.folder
    host.need().close()  # killed: no score
    host.close()

    again = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path / "t",
                 pace=Pace.TURNS, tokens={"responder": "new"})
    again.resume_session(folder)
    after = {e.key: (e.state, e.inject.at, e.inject.after) for e in again.injects.entries}
    assert after == before
    assert after[keys["pager"]] == (PLANNED, 35, 0) and after[live.key][0] == PLANNED
    again.advance_to(60)
    again.pump()
    titles = [e.title for e in again.need().events if isinstance(e, ev.Inject)
              and e.id == "adhoc"]
    assert titles.count("Question for discussion: The CEO asks what to tell customers") == 1
    assert titles.count("Pager - error rate high") == 1
    assert "Question for discussion: Legal asks for a timeline" in titles
    assert "A spare message" not in titles
    again.end()
    again.close()


def test_the_master_list_says_how_long_a_flapping_harm_must_hold() -> None:
    plan = InjectPlan(load_named_exercise("recovery-under-load"))
    sts = plan.get("exercise:sts-second-impact")
    assert when_words(sts, str) == "when capacity-below-floor has held 180 min of the last 240"
    alarm = plan.get("exercise:launch-errors")
    assert when_words(alarm, str) == "when leases-lost holds, 10 min into it"


def test_a_prepared_inject_can_count_every_spell_of_a_flapping_harm(flagship: Exercise,
                                                                    tmp_path: Path) -> None:
    """`within` in a prepared file, as in an exercise: the harm's spells in the window add
    up, spells older than the window drop out, and nothing goes out while it is away."""
    [social] = load_inject_file(_write(tmp_path, """\
injects:
  - id: social
    when: empty-answer
    after: 10m
    within: 30m
    title: Customers keep saying the app comes and goes
"""), flagship)
    assert (social.when, social.after, social.within) == ("empty-answer", 10, 30)
    plan = InjectPlan(flagship)
    entry = plan.add(social, "prepared")
    assert when_words(entry, str) == "when empty-answer has held 10 min of the last 30"

    def spell(began: int, cleared: int | None) -> None:
        plan.note(ev.Fault(invariant="empty-answer", fault="empty", minute=began), "")
        if cleared is not None:
            plan.note(ev.InvariantClear(invariant="empty-answer", fault="empty",
                                        minute=cleared), "")

    spell(0, 6)  # 6 minutes, then gone: too long ago by minute 40
    spell(40, 44)  # 4 minutes
    assert plan.due(50) == [] and plan.next_minute(50) is None  # away now: nothing comes
    spell(50, None)  # 4 (40-44) + 6 from 50: due at 56, not at 55
    assert plan.next_minute(50) == 56
    assert plan.due(55) == []
    assert plan.due(56) == [entry]
    again = InjectPlan(flagship)
    late = again.add(social, "prepared")
    again.note(ev.Fault(invariant="empty-answer", fault="empty", minute=0), "")
    again.note(ev.InvariantClear(invariant="empty-answer", fault="empty", minute=6), "")
    again.note(ev.Fault(invariant="empty-answer", fault="empty", minute=36), "")
    # 0-6 is out of the window by minute 40: 36-46 is what counts
    assert again.due(45) == [] and again.due(46) == [late]
    moved = again.move(late.key, 60, 46)  # later than the window allows: held all of it
    assert moved.inject.after == 30


def test_within_in_a_prepared_file_is_checked_at_its_line(flagship: Exercise,
                                                          tmp_path: Path) -> None:
    path = _write(tmp_path, """\
injects:
  - title: Timed
    at: "23:10"
    within: 30m
  - title: No after
    when: empty-answer
    within: 30m
  - title: Too short
    when: empty-answer
    after: 1h
    within: 30m
  - title: Not a duration
    when: empty-answer
    after: 5m
    within: soon
""")
    with pytest.raises(InjectFileError) as caught:
        load_inject_file(path, flagship)
    problems = caught.value.problems
    assert f'{path}:4: inject "prepared-1": "within" goes with "when"; a timed inject has ' \
           "none" in problems
    assert f'{path}:7: inject "prepared-2": "within" counts "after" over a window; give ' \
           '"after" too (after: 3h, within: 4h)' in problems
    assert f'{path}:11: inject "prepared-3": within (30 min) is shorter than after (60 min): ' \
           "the harm could never hold that long in it" in problems
    assert any(p.startswith(f'{path}:15: inject "prepared-4": within: "soon" is not a duration')
               for p in problems)
    assert len(problems) == 4
