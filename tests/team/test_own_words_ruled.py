"""A seat declares a finding in its own words; the facilitator rules on it and the ruling is
what the score and the debrief use."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_fixtures import TOKENS, joined, send

from raceday.engine.clock import Pace
from raceday.engine.headless import run_script
from raceday.engine.script import load_script
from raceday.exercise.model import OWN_WORDS, Exercise
from raceday.judge.facts import own_words_key
from raceday.team.host import Host
from raceday.team.script import run_team_script
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.debrief import build_debrief
from raceday.transcript.log import of_kind, read_events
from raceday.transcript.render import describe

WORDS = "The clean-up deleted the plan the endpoint was still using"


def _declare_at_2355(host: Host) -> ev.Declaration:
    rita = joined(host, "responder", "Rita")
    session = host.need()
    host.advance_to(session.minute + 55)
    assert session.facts.fault_started is not None  # the fault came at 23:48
    row = send(host, rita, "declare", finding=OWN_WORDS, text=WORDS)
    assert row.status == "done"
    return next(e for e in reversed(session.events) if isinstance(e, ev.Declaration))


@pytest.mark.parametrize("ruling", ["", "right", "partly", "wrong"])
def test_a_seats_own_words_count_as_the_facilitator_rules(
        flagship: Exercise, tmp_path: Path, ruling: str) -> None:
    # the responder's seat only: the automation plays both Enactors, so the fault comes
    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path / "t",
                pace=Pace.TURNS, tokens={"responder": TOKENS["responder"]})
    host.start()
    try:
        declared = _declare_at_2355(host)
        assert (declared.finding, declared.text, declared.verdict) == (OWN_WORDS, WORDS,
                                                                      "to_rule")
        if ruling:
            host.rule(declared.seq, ruling, "that is the mechanism")
        score = host.end()
    finally:
        host.close()
    detection = score.score.detection
    assert detection is not None
    said = f"detection: '{WORDS}' (own words, {declared.sim_time})"
    if ruling == "right":  # the only way the fault was surfaced: from 0 to points
        assert detection.points > 0 and detection.by == f"declared '{WORDS}'"
        assert f"{said} ruled right (that is the mechanism): it counts as a diagnosis" \
            in score.score.reasons
    else:
        assert detection.points == 0 and detection.by is None
    words = {"": "was not ruled: it neither counts nor costs",
             "partly": "ruled partly right (that is the mechanism): it neither counts nor costs",
             "wrong": "ruled wrong (that is the mechanism): it costs what a wrong finding "
                      "costs"}
    if ruling in words:
        assert f"{said} {words[ruling]}" in score.score.reasons
    debrief = build_debrief(read_events(host.folder).events)
    [row] = debrief.declarations
    assert (row.role, row.text) == ("responder", WORDS)
    md = (host.folder / "debrief.md").read_text(encoding="utf-8")
    assert WORDS in md
    after = debrief.after_action
    assert (f"Wrong finding declared: '{WORDS}'" in md) == (ruling == "wrong")
    if ruling == "right":
        assert row.judged.endswith("the facilitator ruled it right: that is the mechanism")
        assert f"Declared a right finding at {declared.sim_time}: {WORDS} (the facilitator " \
               "ruled it right: that is the mechanism)." in after.strengths
        assert "the facilitator ruled it right: that is the mechanism" in md
        assert f"| Time to diagnosis | 7 min ('{WORDS}' at 23:55) |" in md
    elif not ruling:
        assert "never ruled" in row.judged
        assert any(x.startswith(f"Declared '{WORDS}'") and "nobody ruled on it" in x
                   for x in after.improvements)
    else:
        assert not any(WORDS in x for x in after.strengths)
        assert any(WORDS in x for x in after.improvements)


def test_a_seats_empty_or_overlong_words_are_refused_in_one_line(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    for text, error in (("   ", "a finding in your own words needs words"),
                        ("y" * 201, "a finding in your own words is at most 200 characters, "
                                    "not 201")):
        send(host, rita, "declare", finding=OWN_WORDS, text=text)
        refused = next(e for e in reversed(host.need().events) if isinstance(e, ev.Refused))
        assert refused.error == error
    send(host, rita, "declare", finding=OWN_WORDS, text=WORDS)  # the session goes on
    assert host.need().facts.own_words[-1][1] == WORDS
    declared = next(e for e in reversed(host.need().events) if isinstance(e, ev.Declaration))
    ruled = host.rule(declared.seq, "right")
    assert host.need().facts.rulings[-1][1] == own_words_key(WORDS)
    assert describe(ruled) == (f"facilitator: ruled responder's declaration at "
                               f"{declared.sim_time} (own-words: {WORDS}) right")


def test_a_resumed_host_keeps_the_own_words_and_the_ruling(flagship: Exercise,
                                                           tmp_path: Path) -> None:
    seats, tokens = seats_from_roles(("responder",)), {"responder": TOKENS["responder"]}
    host = Host(flagship, seats, transcripts=tmp_path / "t", pace=Pace.TURNS, tokens=tokens)
    host.start()
    declared = _declare_at_2355(host)
    host.rule(declared.seq, "right", "yes")
    folder = host.folder
    host.need().close()  # killed: no score
    host.close()
    again = Host(flagship, seats, transcripts=tmp_path / "t", pace=Pace.TURNS,
                 tokens={"responder": "token-r-new"})
    session = again.resume_session(folder)
    try:
        assert session.facts.own_words == [(declared.minute, WORDS)]
        assert session.facts.rulings == [(declared.minute, own_words_key(WORDS), "right", "yes")]
        score = again.end()
    finally:
        again.close()
    assert score.score.detection is not None
    assert score.score.detection.by == f"declared '{WORDS}'"


def test_a_team_script_declares_in_own_words_as_the_headless_run_does(
        flagship: Exercise, tmp_path: Path) -> None:
    path = tmp_path / "own.yaml"
    path.write_text("exercise: dynamodb-dns-race\nseats: {rita: responder}\nsteps:\n"
                    f'  - at: "23:55"\n    as: rita\n    declare: {{text: "{WORDS}"}}\n'
                    '  - wait: "00:30"\n', encoding="utf-8")
    script = load_script(path, flagship)
    solo, _ = run_script(flagship, script, tmp_path / "headless")
    team = run_team_script(flagship, script, tmp_path / "team", players={"rita": "Rita"})
    for folder in (solo.folder, team.host.folder):
        [declared] = of_kind(read_events(folder).events, ev.Declaration)
        assert (declared.finding, declared.text, declared.sim_time) == (OWN_WORDS, WORDS,
                                                                        "23:55")


def test_a_rulings_note_and_a_skips_task_title_stay_off_the_players_screens(
        flagship: Exercise, tmp_path: Path) -> None:
    """The ruling note ("she had not yet seen the rollback wedge") went to every seat and the
    projector, and a skip named a player's next task there; the transcript keeps both."""
    from raceday.team.client import View

    host = Host(flagship, seats_from_roles(("enactor-a", "responder")),
                transcripts=tmp_path / "t", pace=Pace.TURNS,
                tokens={"enactor-a": TOKENS["enactor-a"], "responder": TOKENS["responder"]})
    host.start()
    try:
        host.skip()  # to 23:31, Enactor A's check
        rita = joined(host, "responder", "Rita")
        send(host, rita, "declare", finding=OWN_WORDS, text=WORDS)
        declared = next(e for e in reversed(host.need().events)
                        if isinstance(e, ev.Declaration))
        host.rule(declared.seq, "partly", "she had not yet seen the rollback wedge")
        host.pump()
        seen = View(host.folder).new_events()  # what a seat and the projector read
        console = View(host.folder).new_events(private=True)
    finally:
        host.close()
    for events in (seen, console):
        [ruling] = [e for e in of_kind(events, ev.Facilitation) if e.action == "ruling"]
        assert ruling.text == "" and ruling.ruling == "partly"
        [skip] = [e for e in of_kind(events, ev.Facilitation) if e.action == "skip"]
        assert skip.detail == "23:31, when enactor-a's task falls due"
    kept = read_events(host.folder).events
    [ruling] = [e for e in of_kind(kept, ev.Facilitation) if e.action == "ruling"]
    assert ruling.text == "she had not yet seen the rollback wedge"
    [skip] = [e for e in of_kind(kept, ev.Facilitation) if e.action == "skip"]
    assert skip.detail.endswith("falls due: Pick up a plan and check it is newer than the "
                                "regional endpoint's")
