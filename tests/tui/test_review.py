"""`raceday review`: walking a saved session with the keyboard, read-only."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from raceday.errors import TranscriptError
from raceday.transcript import events as ev
from raceday.tui.screens.review import DebriefScreen, ReviewApp, notable

pytestmark = pytest.mark.tui

FIXTURES = Path(__file__).parents[1] / "transcript" / "fixtures"


def text_of(app: ReviewApp, selector: str) -> str:
    """The plain text a panel shows (the detail panel holds a Rich group)."""
    if selector == "#review-detail":
        out = io.StringIO()
        Console(file=out, width=200).print(app.detail)
        return out.getvalue()
    return str(app.query_one(selector, Static).render())


async def test_next_and_previous_walk_the_events() -> None:
    app = ReviewApp.from_folder(FIXTURES / "night")
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.index == 0
        assert "The DNS race: us-east-1" in text_of(app, "#review-detail")
        rows = app.rows  # what matters: the automation's routine is not listed
        await pilot.press("n")
        assert app.index == rows[1]
        await pilot.press("right", "right")
        assert app.index == rows[3]
        await pilot.press("p")
        assert app.index == rows[2]
        await pilot.press("left", "left", "left")
        assert app.index == 0  # stops at the first event
        assert "event 1/" in text_of(app, "#review-bar")


async def test_review_lists_what_matters_and_a_lists_everything() -> None:
    from raceday.tui.screens.review import matters

    app = ReviewApp.from_folder(FIXTURES / "night")
    async with app.run_test(size=(120, 40)) as pilot:
        listed = [app.events[i] for i in app.rows]
        assert not any(isinstance(e, (ev.TaskDue, ev.Automation, ev.Wait)) for e in listed)
        assert any(isinstance(e, ev.Statement) and not e.automated for e in listed)
        assert all(matters(e) for e in listed)
        assert len(app.rows) < len(app.events)
        await pilot.press("a")
        assert len(app.rows) == len(app.events)
        await pilot.press("a")
        assert all(matters(app.events[i]) for i in app.rows)


async def test_the_world_so_far_and_the_score_at_the_end() -> None:
    app = ReviewApp.from_folder(FIXTURES / "night")
    async with app.run_test(size=(120, 40)) as pilot:
        fault = next(i for i, e in enumerate(app.events) if isinstance(e, ev.Fault))
        while app.index < fault:
            await pilot.press("n")
        assert app.state.faults and "FAULT" in text_of(app, "#review-world")
        await pilot.press("end")
        assert app.index == len(app.events) - 1
        final = app.events[-1]
        assert isinstance(final, ev.ScoreEvent)
        expected = f"{final.score.total}/{final.score.max}"
        assert app.state.score == expected
        assert f"SCORE {expected}" in text_of(app, "#review-world")
        assert "Every point, with its reason" in text_of(app, "#review-detail")
        await pilot.press("n")  # past the end: stays on the score
        assert app.index == len(app.events) - 1


async def test_notable_jumps_skip_the_automations_routine() -> None:
    app = ReviewApp.from_folder(FIXTURES / "night")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("right_square_bracket")
        assert app.index > 0 and notable(app.events[app.index])
        skipped = app.events[1:app.index]
        assert all(not notable(e) for e in skipped)
        here = app.index
        await pilot.press("right_square_bracket", "left_square_bracket")
        assert app.index == here


async def test_the_debrief_opens_over_the_review_and_closes() -> None:
    app = ReviewApp.from_folder(FIXTURES / "night")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("d")
        await app.workers.wait_for_complete()  # built off the event loop
        await pilot.pause()
        assert isinstance(app.screen, DebriefScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, DebriefScreen)
        await pilot.press("d")  # built once: the second d opens it at once
        assert isinstance(app.screen, DebriefScreen)


async def test_the_reviews_debrief_has_the_rooms_edits_and_says_when_it_cannot(
        tmp_path: Path) -> None:
    """d shows what `raceday debrief` prints: the after-action report's edits in; a broken
    aar.json is said in one line and the debrief shown without it."""
    from raceday.transcript.debrief.aar import AarEdits, aar_path

    for aar, shown in ((AarEdits(evaluators="Grace, evaluator").to_json(), True),
                       ("{not json", False)):
        folder = tmp_path / ("good" if shown else "broken")
        shutil.copytree(FIXTURES / "night", folder)
        aar_path(folder).write_text(aar, encoding="utf-8")
        app = ReviewApp.from_folder(folder)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("d")
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
            assert isinstance(app.screen, DebriefScreen)
            out = io.StringIO()
            Console(file=out, width=200, color_system=None).print(
                app.screen.query_one("#debrief-text", Static).content)
            assert "Debrief: The DNS race" in out.getvalue()
            assert ("Grace, evaluator" in out.getvalue()) is shown
            said = [f"{n.title}: {n.message}" for n in app._notifications
                    if n.title == "aar.json"]
            assert len(said) == (0 if shown else 1), said
            assert all(m.startswith("aar.json: Shown without") for m in said), said


async def test_an_interrupted_session_reviews_with_its_warning() -> None:
    app = ReviewApp.from_folder(FIXTURES / "interrupted")
    torn = len((FIXTURES / "interrupted" / "events.jsonl").read_text().splitlines())
    assert app.warning is not None and f":{torn}: last line cut short" in app.warning
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("end")
        assert app.state.score is None


def test_a_corrupt_or_missing_transcript_fails_before_the_screen_opens(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="events.jsonl:3"):
        ReviewApp.from_folder(FIXTURES / "corrupt")
    with pytest.raises(TranscriptError, match="no such transcript"):
        ReviewApp.from_folder(tmp_path)
    shutil.copytree(FIXTURES / "night", tmp_path / "copy")
    assert ReviewApp.from_folder(tmp_path / "copy").folder == tmp_path / "copy"


async def test_review_opens_on_the_moments_that_matter_one_key_each() -> None:
    """The fault (f), the alarms (l), the declarations (e), the repair (r), the score (s):
    the start lists them, and each key jumps to the next of its kind, wrapping round."""
    app = ReviewApp.from_folder(FIXTURES / "night")
    events = app.events
    faults = [i for i, e in enumerate(events)
              if isinstance(e, ev.Fault) or (isinstance(e, ev.RaceStep) and e.happened)]
    declared = [i for i, e in enumerate(events) if isinstance(e, ev.Declaration)]
    restored = [i for i, e in enumerate(events) if isinstance(e, (ev.Restored, ev.Milestone))]
    assert faults and declared and restored
    async with app.run_test(size=(120, 40)) as pilot:
        start = text_of(app, "#review-detail")
        assert "The moments that matter" in start
        assert f"declarations: {len(declared)} at {events[declared[0]].sim_time}" in start
        await pilot.press("f")
        assert app.index == faults[0]
        await pilot.press("f")
        assert app.index == faults[1 % len(faults)]
        await pilot.press("e")
        assert isinstance(events[app.index], ev.Declaration)
        await pilot.press("r")
        assert app.index in restored and app.index > declared[0]
        await pilot.press("s")
        assert isinstance(events[app.index], ev.ScoreEvent)
        await pilot.press("f")  # past the last fault: from the first again
        assert app.index == faults[0]
