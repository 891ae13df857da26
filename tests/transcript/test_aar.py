"""The debrief a team reads after a game day: names, observer notes, injects beside the
responses, the AAR/IP shape, and a timeline chart that spans both lanes without overlaps."""

from __future__ import annotations

import io
import random
from pathlib import Path

from rich.console import Console

from raceday.engine.clock import Pace
from raceday.engine.headless import open_session, run_script
from raceday.engine.load import load_named_exercise
from raceday.transcript import events as ev
from raceday.transcript.debrief import build_debrief, render_markdown, render_terminal
from raceday.transcript.debrief.html import render_html
from raceday.transcript.log import read_events
from raceday.transcript.timeline_chart import Mark, clusters


def short_game_day(tmp_path: Path) -> Path:
    exercise = load_named_exercise("dynamodb-dns-race")
    session = open_session(exercise, ["planner", "responder"], tmp_path, Pace.LIVE)
    session.record(ev.Cast(names={"planner": "Ana", "responder": "Cy"}))
    session.advance_to(50)  # 23:50: the alarms are in, the canary among them
    session.execute("responder", "SELECT * FROM dns_answer")
    session.note("Cy went to dns_answer first", author="Dee")
    session.record(ev.Facilitation(action="pause"))
    session.advance_to(60)
    session.end("ended by the players")
    return session.folder


def test_the_debrief_names_the_players_and_keeps_the_notes(tmp_path: Path) -> None:
    debrief = build_debrief(read_events(short_game_day(tmp_path)).events)
    assert dict(debrief.names) == {"planner": "Ana", "responder": "Cy"}
    text = render_markdown(debrief)
    assert "planner (Ana)" in text and "responder (Cy)" in text
    assert "**Dee**: Cy went to dns_answer first" in text
    for section in ("### 1. Exercise overview", "### 2. Objectives", "### 3. Analysis",
                    "### 4. Injects and the team's responses", "### 5. Observer notes",
                    "### Appendix A: Improvement plan", "facilitator: clock paused"):
        assert section in text
    canary = next(i for i in debrief.injects if "dns-canary" in i.title)
    assert canary.responses and "SELECT * FROM dns_answer" in canary.responses[0]
    html = render_html(debrief)
    assert "responder (Cy)" in html and "Cy went to dns_answer first" in html


def test_the_chart_spans_both_lanes_over_the_whole_night(tmp_path: Path) -> None:
    debrief = build_debrief(read_events(short_game_day(tmp_path)).events)
    chart = debrief.timeline.chart()
    night = [m for m in chart.marks if m.lane == "event"]
    assert any(m.time == "02:25" for m in night)  # that night's restore, after play ended
    assert chart.end >= max(m.minute for m in night)
    assert {b.kind for b in chart.bands} >= {"outage", "detect"}


def test_mark_labels_never_overlap() -> None:
    rng = random.Random(7)
    for _ in range(200):
        xs = sorted(rng.uniform(0, 400) for _ in range(rng.randint(1, 30)))
        spots = [(x, n, Mark("team", 0, "", "fault", "")) for n, x in enumerate(xs, start=1)]
        labels = clusters(spots, 7.4)
        assert sum(len(c.marks) for c in labels) == len(xs)
        for a, b in zip(labels, labels[1:], strict=False):
            assert a.at + a.size(7.4) / 2 < b.at - b.size(7.4) / 2


def _strengths(script: Path, tmp_path: Path) -> tuple[str, ...]:
    from raceday.engine.load import load_exercise
    from raceday.engine.script import load_script

    root = Path(__file__).resolve().parents[2]
    exercise = load_exercise(root / "exercises" / "lost-update-basics")
    session, _ = run_script(exercise, load_script(root / script, exercise), tmp_path)
    return build_debrief(read_events(session.folder).events).after_action.strengths


def test_the_final_replay_is_not_a_strength_of_the_team(tmp_path: Path) -> None:
    """Issue 57: a team that did nothing read "Replayed the race against the team's schema"
    among its strengths: the end's replay is raceday's. One the team asked for is theirs."""
    nothing = _strengths(Path("tests/scenarios/customers/lost-update-nothing.yaml"),
                         tmp_path / "nothing")
    assert not any("Replayed" in s for s in nothing), nothing
    asked = _strengths(Path("exercises/lost-update-basics/scripts/replay-all-guards.yaml"),
                       tmp_path / "asked")
    assert "Replayed the race against the team's schema at 09:10." in asked, asked


def test_a_crash_and_its_resume_are_in_the_debrief(tmp_path: Path) -> None:
    """Issue 57: a crashed, resumed session's debrief never said so."""
    from raceday.engine.load import load_exercise
    from raceday.engine.resume import resume_session

    root = Path(__file__).resolve().parents[2]
    exercise = load_exercise(root / "exercises" / "lost-update-basics")
    session = open_session(exercise, ("operator",), tmp_path)
    session.wait(session.minute + 5)
    session.store.close()
    session.log.close()  # as a kill leaves it: no score
    resumed = resume_session(session.folder, exercise).session
    resumed.end()
    debrief = build_debrief(read_events(session.folder).events)
    assert debrief.summary.resumed and debrief.summary.resumed[0].startswith("at 09:05 (after "
                                                                             "event ")
    text = render_markdown(debrief)
    assert "- Interrupted: the session crashed or was killed at 09:05 (after event " in text
    assert ", and resumed there" in text
    assert "Interrupted: the session crashed or was killed" in render_html(debrief)
    console = Console(width=120, record=True, file=io.StringIO())
    render_terminal(debrief, console)
    assert "Interrupted: the session crashed or was killed at 09:05" in \
        " ".join(console.export_text().split())
    assert any(m.kind == "resumed" and m.time == "09:05" for m in debrief.timeline.chart().marks)


def test_a_crash_during_a_wait_is_told_where_it_happened(tmp_path: Path) -> None:
    """A session killed while a wait ran on (the audit's: killed at 07:04 in a wait to 14:20)
    read "resumed at 14:20": the resume plays the wait asked for to its end, so the crash is
    told at the last event recorded, and the resume where it took the session on."""
    from raceday.engine.load import load_exercise
    from raceday.engine.resume import resume_session
    from raceday.transcript.log import EVENTS_FILE

    root = Path(__file__).resolve().parents[2]
    exercise = load_exercise(root / "exercises" / "lost-update-basics")
    session = open_session(exercise, ("operator",), tmp_path / "whole")
    session.wait(session.minute + 12)  # to 09:12
    session.store.close()
    session.log.close()
    lines = (session.folder / EVENTS_FILE).read_text(encoding="utf-8").splitlines()
    events = read_events(session.folder).events
    cut = next(i for i, e in enumerate(events) if e.minute >= 7)  # killed at 09:07
    crashed = tmp_path / "crashed" / session.folder.name
    crashed.mkdir(parents=True)
    (crashed / EVENTS_FILE).write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")
    stopped = events[cut - 1]
    resumed = resume_session(crashed, exercise).session
    resumed.end()
    debrief = build_debrief(read_events(crashed).events)
    assert debrief.summary.resumed[0].startswith(
        f"at {stopped.sim_time} (after event {stopped.seq}), and resumed at 09:12")
    assert any(m.kind == "resumed" and m.time == stopped.sim_time
               for m in debrief.timeline.chart().marks)


def test_a_step_that_happened_is_told_once_as_it_happened(tmp_path: Path) -> None:
    """Issue 57: one AAR read "guards were seen stopping stale-apply" beside "The race ran its
    course: stale-apply at 23:48", and "… did not happen" for a step that happened. A step
    that happened tonight and was stopped in the final replay says both, in one sentence."""
    from raceday.engine.load import load_exercise
    from raceday.engine.script import load_script

    root = Path(__file__).resolve().parents[2]
    exercise = load_exercise(root / "exercises" / "dynamodb-dns-race")
    script = root / "exercises" / "dynamodb-dns-race" / "scripts" / "textbook.yaml"
    session, _ = run_script(exercise, load_script(script, exercise), tmp_path)
    aar = build_debrief(read_events(session.folder).events).after_action
    happened = ("stale-apply", "active-plan-delete", "empty-answer")
    assert not any(s.startswith("The team's guards were seen stopping") for s in aar.strengths)
    assert ("After stale-apply happened tonight, the guards the team added were seen stopping "
            "it in the final replay.") in aar.strengths
    assert not any(x.startswith(f"{step} did not happen") for step in happened
                   for x in aar.improvements), aar.improvements
    assert any(x.startswith("The race ran its course: stale-apply at 23:48")
               for x in aar.improvements)


def test_the_good_path_says_what_the_guards_refused(tmp_path: Path) -> None:
    """Issue 57: "The good path" read "still works" while the score took -10 for two planned
    rollbacks the guards refused on the normal night."""
    from raceday.engine.load import load_exercise
    from raceday.engine.script import load_script

    root = Path(__file__).resolve().parents[2]
    exercise = load_exercise(root / "exercises" / "dynamodb-dns-race")
    script = root / "tests" / "scenarios" / "judge" / "forward-only-strict.yaml"
    session, _ = run_script(exercise, load_script(script, exercise), tmp_path)
    debrief = build_debrief(read_events(session.folder).events)
    text = render_markdown(debrief)
    good_path = text[text.index("### The good path"):text.index("### Replay")]
    assert "- BLOCKED on the normal night: planned-rollback-fips at 23:20" in good_path
    assert "- The refused good writes cost the guards 10 points." in good_path
    assert any(x.startswith("The guards refused 2 good writes of the normal night "
                            "(planned-rollback-fips at 23:20, planned-rollback-regional at "
                            "00:50), which cost 10 points.")
               for x in debrief.after_action.improvements), debrief.after_action.improvements
    assert "BLOCKED on the normal night" in render_html(debrief)
