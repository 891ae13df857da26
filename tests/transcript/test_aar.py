"""The debrief a team reads after a game day: names, observer notes, injects beside the
responses, the AAR/IP shape, and a timeline chart that spans both lanes without overlaps."""

from __future__ import annotations

import random
from pathlib import Path

from raceday.engine.clock import Pace
from raceday.engine.headless import open_session
from raceday.engine.load import load_named_exercise
from raceday.transcript import events as ev
from raceday.transcript.debrief import build_debrief, render_markdown
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
