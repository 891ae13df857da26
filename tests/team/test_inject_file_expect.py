"""A facilitator's prepared injects (`--injects FILE`) take `expect:` and `objective:` as an
exercise's injects do: checked at their lines, sent named by their own id, marked live or in
the hot wash, and shown in the AAR with the objective they rate."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_fixtures import TOKENS

from raceday.cli import main
from raceday.engine.clock import Pace
from raceday.engine.load import load_named_exercise
from raceday.exercise.model import Exercise
from raceday.team.host import Host
from raceday.team.inject_file import InjectFileError, load_inject_file
from raceday.team.inject_plan import SENT
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.debrief import load_debrief

PREPARED = """\
exercise: isolation-lab
injects:
  - id: ceo-call
    kind: question
    at: "23:35"
    title: The CEO asks what to tell customers
    expect:
      - names who speaks for the team
      - gives a time for the next update
    objective: detection
  - id: one-line
    at: "23:36"
    title: Legal asks for a timeline
    expect: says when the fault began
  - id: plain
    at: "23:37"
    title: A message that expects nothing
"""


@pytest.fixture(scope="module")
def lab() -> Exercise:
    return load_named_exercise("isolation-lab")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "injects.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_prepared_inject_reads_expect_and_objective(lab: Exercise, tmp_path: Path) -> None:
    ceo, legal, plain = load_inject_file(_write(tmp_path, PREPARED), lab)
    assert ceo.expect == ("names who speaks for the team", "gives a time for the next update")
    assert ceo.objective == "detection"
    assert legal.expect == ("says when the fault began",) and legal.objective == ""
    assert plain.expect == () and plain.objective == ""


def test_expect_and_objective_are_checked_at_their_lines(lab: Exercise, tmp_path: Path) -> None:
    path = _write(tmp_path, f"""\
injects:
  - id: a
    at: "23:35"
    title: Objective alone
    objective: detection
  - id: b
    at: "23:35"
    title: An objective that is none
    expect: [names the lock]
    objective: morale
  - id: c
    at: "23:35"
    title: Too long
    expect:
      - {"x" * 121}
      - 3
  - id: {lab.injects[0].id}
    at: "23:35"
    title: The exercise's own id
    expect: [names the lock]
""")
    with pytest.raises(InjectFileError) as caught:
        load_inject_file(path, lab)
    problems = caught.value.problems
    assert f'{path}:5: inject "a": "objective" names the objective the marks of "expect" ' \
           'rate; give "expect" too' in problems
    assert any(p.startswith(f"{path}:10: inject \"b\": objective 'morale' is not one of "
                            "detection, guards") for p in problems)
    assert f'{path}:15: inject "c": each of "expect" is one line of at most 120 ' \
           "characters" in problems
    assert f'{path}:16: inject "c": each of "expect" is a line of text (what the team is ' \
           "expected to do or say)" in problems
    assert any(p.startswith(f"{path}:17: inject \"{lab.injects[0].id}\": the exercise has an "
                            "inject") for p in problems)
    assert all("\n" not in p for p in problems)


def test_a_prepared_expectation_is_marked_live_and_in_the_hot_wash(
        lab: Exercise, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = Host(lab, seats_from_roles(("operator",)), transcripts=tmp_path / "t",
                pace=Pace.TURNS, tokens=TOKENS)
    host.prepared = (load_inject_file(_write(tmp_path, PREPARED), lab), "injects.yaml")
    host.start()
    entry = next(e for e in host.injects.entries if e.inject.id == "ceo-call")
    assert entry.inject.expect  # the console's x reads it from the master list
    host.advance_to(8)  # 23:38: all three went out
    host.pump()
    sent = {e.title: e for e in host.need().events if isinstance(e, ev.Inject)
            and e.source == "facilitator"}
    ceo = sent["Question for discussion: The CEO asks what to tell customers"]
    assert (ceo.id, ceo.expect, ceo.objective) == (
        "ceo-call", ("names who speaks for the team", "gives a time for the next update"),
        "detection")
    assert sent["Legal asks for a timeline"].id == "one-line"
    assert sent["A message that expects nothing"].id == "adhoc"  # as before
    assert {e.inject.id: e.state for e in host.injects.entries
            if e.source == "prepared"} == {"ceo-call": SENT, "one-line": SENT, "plain": SENT}
    host.mark_expected("ceo-call", 1, "met")
    host.end()
    host.close()
    folder = host.folder
    assert main(["aar", str(folder), "--mark", "ceo-call:2", "partly",
                 "--mark", "one-line:1", "not-met"]) == 0
    capsys.readouterr()
    debrief = load_debrief(folder)
    lines = [r for i in debrief.injects for r in i.responses]
    assert "expected: names who speaks for the team: met (marked at 23:38)" in lines
    assert "expected: gives a time for the next update: partly (marked in the hot wash)" in lines
    assert "expected: says when the fault began: not met (marked in the hot wash)" in lines
    detection = next(o for o in debrief.objectives if o.name.startswith("detection"))
    assert "expected actions: 1 met, 1 partly of 3" in detection.name  # and the page's


def test_a_resumed_host_keeps_a_prepared_inject_and_what_it_expects(
        lab: Exercise, tmp_path: Path) -> None:
    host = Host(lab, seats_from_roles(("operator",)), transcripts=tmp_path / "t",
                pace=Pace.TURNS, tokens=TOKENS)
    host.prepared = (load_inject_file(_write(tmp_path, PREPARED), lab), "injects.yaml")
    host.start()
    host.advance_to(6)  # 23:36: the CEO's question and Legal's went out
    host.pump()
    folder = host.folder
    host.need().close()  # killed: no score
    host.close()

    again = Host(lab, seats_from_roles(("operator",)), transcripts=tmp_path / "t",
                 pace=Pace.TURNS, tokens={"operator": "new"})
    again.resume_session(folder)
    states = {e.inject.id: e.state for e in again.injects.entries if e.source == "prepared"}
    assert states == {"ceo-call": SENT, "one-line": SENT, "plain": "planned"}
    again.advance_to(8)
    again.pump()
    heard = [e for e in again.need().events if isinstance(e, ev.Inject)
             and e.source == "facilitator"]
    assert [e.id for e in heard] == ["ceo-call", "one-line", "adhoc"]  # none twice
    assert heard[0].expect == ("names who speaks for the team",
                               "gives a time for the next update")
    again.mark_expected("ceo-call", 2, "met")  # what it expected is still there to mark
    again.end()
    again.close()
