"""Expectations per inject (as OpenBAS has): an inject's `expect:` lines say what the team is
expected to do or say; the facilitator marks each met, partly or not met, live (the console's
injects list, x) or in the hot wash (`raceday aar SESSION --mark INJECT:N met`); the marks
fill the AAR's inject rows and the objectives' ratings, never the score, and the players
never see them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from team_fixtures import make_host, until

from raceday.cli import main
from raceday.engine.load import load_exercise
from raceday.engine.session import SessionError
from raceday.errors import ExerciseError
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.debrief import load_debrief
from raceday.transcript.log import of_kind, read_events

MINIMAL = Path(__file__).parents[1] / "exercise" / "fixtures" / "minimal"

ROOT = Path(__file__).parents[2]
LOCK = "enactor-a-lock-retries"


def _minimal(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "minimal"
    shutil.copytree(MINIMAL, folder)
    yaml_path = folder / "exercise.yaml"
    text = yaml_path.read_text(encoding="utf-8")
    yaml_path.write_text(text.replace('    at: "00:12"\n', '    at: "00:12"\n' + extra),
                         encoding="utf-8")
    return folder


def test_an_inject_carries_what_the_team_is_expected_to_do(tmp_path: Path) -> None:
    folder = _minimal(tmp_path, "    expect:\n      - names the setting\n"
                                "      - asks who else writes it\n    objective: detection\n")
    pager = next(i for i in load_exercise(folder).injects if i.id == "pager")
    assert pager.expect == ("names the setting", "asks who else writes it")
    assert pager.objective == "detection"


@pytest.mark.parametrize(("extra", "said"), [
    ("    objective: detection\n", '"objective" names the objective the marks of "expect" rate'),
    ("    expect: [names it]\n    objective: speed\n", '"objective" must be one of'),
    ("    expect: [" + "x" * 121 + "]\n", "at most 120 characters"),
    ("    expect: names it\n", '"expect" must be a list'),
])
def test_a_wrong_expectation_is_one_line_naming_file_and_line(tmp_path: Path, extra: str,
                                                               said: str) -> None:
    folder = _minimal(tmp_path, extra)
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder)
    text = str(caught.value)
    assert said in text and "exercise.yaml:" in text, text


def test_the_hot_wash_marks_fill_the_inject_rows_and_the_objective_never_the_score(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = ROOT / "exercises" / "lost-update-basics" / "scripts" / "no-guards.yaml"
    assert main(["run", "lost-update-basics", "--script", str(script), "--json",
                 "--transcripts", str(tmp_path / "t")]) == 0
    result = json.loads(capsys.readouterr().out)
    session = Path(result["session"])
    page = next(line for line in (session / "debrief.md").read_text().splitlines()
                if "| alarm: App errors: writes to db-1 refused" in line)
    assert "expected: names the lost update: a writer saved what it had read before Writer " \
           "A's change: not marked yet" in page
    assert main(["aar", str(session)]) == 0
    listing = capsys.readouterr().out
    assert "What the injects expected (--mark INJECT:N met|partly|not-met):" in listing
    assert "  page:1 names the lost update" in listing
    before = load_debrief(session).objectives
    assert main(["aar", str(session), "--mark", "page:1", "not-met"]) == 0
    capsys.readouterr()
    md = (session / "debrief.md").read_text(encoding="utf-8")
    html = (session / "debrief.html").read_text(encoding="utf-8")
    for text in (md, html):
        assert "Writer A&#x27;s change: not met (marked in the hot wash)" in text or \
            "Writer A's change: not met (marked in the hot wash)" in text
    detection = next(o for o in before if o.name == "detection")
    assert detection.rating == "P"  # 20/20 before the mark
    assert "| detection (expected actions: 1 not met of 1; rated from the points and the " \
           "marks) | 20/20 | S: performed with some challenges |" in md
    # the score is the judge's: the transcript's and the JSON debrief's totals do not move
    [score] = of_kind(read_events(session).events, ev.ScoreEvent)
    assert score.score.total == result["total"]
    assert main(["debrief", str(session), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["score"]["total"] == result["total"]


def test_a_mark_that_names_nothing_says_what_there_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = ROOT / "exercises" / "lost-update-basics" / "scripts" / "no-guards.yaml"
    assert main(["run", "lost-update-basics", "--script", str(script), "--json",
                 "--transcripts", str(tmp_path / "t")]) == 0
    session = Path(json.loads(capsys.readouterr().out)["session"])
    for argv, said in (
            (["page:2", "met"], "--mark page:2: inject page has 1 expected action (numbered "
                                "from 1"),
            (["pager:1", "met"], "--mark pager:1: no inject 'pager' with expected actions "
                                 "reached the team (these did: page)"),
            (["page:1", "maybe"], "--mark page:1 maybe: a mark is met, partly or not-met"),
            (["page", "met"], "--mark page: name the inject and its expected action as "
                              "INJECT:N")):
        assert main(["aar", str(session), "--mark", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err, err
    assert not (session / "aar.json").exists()


def test_a_live_mark_is_recorded_kept_from_the_players_and_in_the_aar(
        flagship: Exercise, tmp_path: Path) -> None:
    host = make_host(flagship, tmp_path / "t")
    try:
        with pytest.raises(SessionError, match="has not reached the team yet"):
            host.mark_expected(LOCK, 1, "met")
        host.advance_to(41)  # 23:41: the lock retries' alarm has gone out
        with pytest.raises(SessionError, match="expects 2 things"):
            host.mark_expected(LOCK, 3, "met")
        host.mark_expected(LOCK, 1, "partly")
        host.mark_expected(LOCK, 1, "met")  # a later mark replaces it
        host.mark_expected(LOCK, 2, "not met")
        host.pump()
        assert host.db is not None
        seen = host.db.events_after(0)  # what the seats and the projector read
        lock = [r for r in seen if r.kind == "inject" and LOCK in r.line]
        assert lock and all('"expect"' not in r.line for r in lock)  # no expectations
        assert not [r for r in seen if '"expect"' in r.line or "marked what" in r.line]
        host.end()
    finally:
        host.close()
    marks = [e for e in read_events(host.folder).events
             if isinstance(e, ev.Facilitation) and e.action == "expect"]
    assert [(m.inject, m.declaration, m.ruling) for m in marks] == [
        (LOCK, 1, "partly"), (LOCK, 1, "met"), (LOCK, 2, "not met")]
    md = (host.folder / "debrief.md").read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if "| alarm: Low severity: DNS Enactor A" in line)
    assert "expected: names the lock Enactor A cannot take, and the endpoint it guards: met " \
           "(marked at 23:41)" in row
    assert "expected: asks which plan Enactor A will apply once it gets the lock: not met " \
           "(marked at 23:41)" in row
    # the injects that reached the team expected 4 things of it for detection; 2 are marked
    assert "| detection (expected actions: 1 met, 1 not met of 4; rated from the points and " \
           "the marks) | 0/30 | M: performed with major challenges |" in md


@pytest.mark.tui
async def test_the_console_marks_an_inject_s_expectation_from_its_row(running: Any) -> None:
    from textual.widgets import OptionList

    from raceday.tui.team.console import ConsoleScreen
    from raceday.tui.team.console_app import ConsoleApp
    from raceday.tui.team.inject_list import InjectListScreen

    running.call(lambda s: running.advance_to(41)).result(timeout=10)
    app = ConsoleApp(running, run_host=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, InjectListScreen))
        screen = app.screen
        assert isinstance(screen, InjectListScreen)
        ids = [e for e in screen.keys]
        screen.query_one(OptionList).highlighted = ids.index(f"exercise:{LOCK}")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # the first thing it expected
        await pilot.pause()
        await pilot.press("enter")  # met
        await until(pilot, lambda: any(
            isinstance(e, ev.Facilitation) and e.action == "expect"
            for e in running.need().events))
    [mark] = [e for e in running.need().events
              if isinstance(e, ev.Facilitation) and e.action == "expect"]
    assert (mark.inject, mark.declaration, mark.ruling) == (LOCK, 1, "met")
