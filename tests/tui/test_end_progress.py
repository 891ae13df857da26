"""Ending a session early says how far the end has got: the rest of recovery-under-load's
night takes 15 s and more, and "Scoring…" alone read as a hang."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from tui_fixtures import MakeApp, calls_to, settle, start_play

from raceday.engine.progress import EVERY_S, NightProgress
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.messages import EndProgress
from raceday.tui.runner import SessionRunner
from raceday.tui.screens.end import EndScreen
from raceday.tui.screens.play import PlayScreen


class _Target:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def post_message(self, message: Any) -> bool:
        assert isinstance(message, EndProgress), message  # no event reaches the screen
        self.lines.append(message.line)
        return True


def test_an_ending_session_posts_the_progress_lines_and_no_event(flagship: Exercise) -> None:
    clock = [100.0]
    target = _Target()
    runner = SessionRunner(app=None, target=target)  # type: ignore[arg-type]
    runner._ending = True
    runner._progress = NightProgress(flagship, clock=lambda: clock[0])
    until = flagship.clock.end.strftime("%H:%M")
    runner._post_event(ev.stamped(ev.TeamLeft(until=until), sim_time="23:30"))
    clock[0] += EVERY_S  # the end began a while ago
    for minute in range(10):  # ten events in the same instant: one line
        clock[0] += 0.01
        runner._post_event(ev.stamped(ev.Inject(id="x", inject_kind="status", title="t"),
                                      after_team_left=True, minute=30 + minute,
                                      sim_time=f"23:3{minute}"))
    assert target.lines == [f"23:30 of {until}: the rest of the night plays itself out, with "
                            "only the automation"]
    runner._post_event(ev.Chart(label="fleet"))  # past the night: said at once, and once
    runner._post_event(ev.Chart(label="knobs"))
    assert target.lines[1:] == ["the night is over: replaying the race on a copy of your "
                                "world, to judge your guards"]


async def test_ending_early_shows_how_far_the_end_has_got(
        make_app: MakeApp, flagship: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("raceday.engine.progress.EVERY_S", 0.0)  # every event told
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        told = calls_to(play.results, "show_text")
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EndScreen)
        shown = [t.plain if isinstance(t, Text) else t for t in told]
        end = flagship.clock.end.strftime("%H:%M")
        night = [line for line in shown if f" of {end}: the rest of the night" in line]
        assert len(night) > 10 and all(line.startswith("Scoring… ") for line in night)
        assert shown[-1] == ("Scoring… the night is over: replaying the race on a copy of your "
                             "world, to judge your guards")
