"""Ending a session early says how far the end has got: the rest of recovery-under-load's
night takes 15 s and more, and "Scoring…" alone read as a hang."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from tui_fixtures import MakeApp, settle, start_play

from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui import runner as runner_module
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


def _ending(monkeypatch: pytest.MonkeyPatch, clock: list[float]) -> tuple[SessionRunner, _Target]:
    monkeypatch.setattr("raceday.tui.runner.time.monotonic", lambda: clock[0])
    target = _Target()
    runner = SessionRunner(app=None, target=target)  # type: ignore[arg-type]
    runner._ending = True
    return runner, target


def _rest(minute: int, face: str) -> ev.Event:
    return ev.stamped(ev.Inject(id="x", inject_kind="status", title="t"), after_team_left=True, minute=minute,
                      sim_time=face)


def test_the_night_playing_out_is_told_a_few_times_a_second_at_most(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    runner, target = _ending(monkeypatch, clock)
    runner._post_event(ev.stamped(ev.TeamLeft(until="14:20"), sim_time="02:30"))
    for minute in range(10):  # ten events in the same instant: one line
        clock[0] += 0.01
        runner._post_event(_rest(minute, f"02:{30 + minute}"))
    assert target.lines == ["02:30 of 14:20: the rest of the night plays itself out, with only "
                            "the automation"]
    clock[0] += runner_module.PROGRESS_EVERY_S
    runner._post_event(_rest(20, "02:50"))
    assert target.lines[-1].startswith("02:50 of 14:20: ")
    # past the night: said at once (whatever the time since), and once
    runner._post_event(ev.Chart(label="fleet"))
    runner._post_event(ev.Chart(label="knobs"))
    assert target.lines[2:] == ["the night is over: judging it"]


async def test_ending_early_shows_how_far_the_end_has_got(
        make_app: MakeApp, flagship: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "PROGRESS_EVERY_S", 0.0)  # every event told
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        shown: list[str] = []
        show = play.results.show_text

        def show_text(text: str | Text) -> None:
            shown.append(text.plain if isinstance(text, Text) else text)
            show(text)

        play.results.show_text = show_text  # type: ignore[method-assign]
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EndScreen)
        end = flagship.clock.end.strftime("%H:%M")
        night = [line for line in shown if f" of {end}: the rest of the night" in line]
        assert len(night) > 10 and all(line.startswith("Scoring… ") for line in night)
        assert shown[-1] == ("Scoring… the night is over: replaying the race on a copy of your "
                             "world, to judge your guards")
