"""Hardening the automation's statements, replaying the race step by step, the debrief."""

from __future__ import annotations

import io
import threading
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Static
from tui_fixtures import DATA, MakeApp, end_play, settle, start_play, wait_until

from raceday.engine.load import load_exercise
from raceday.engine.replaywalk import ReplayWalk
from raceday.engine.session import Session, SessionError
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.harden import HardenScreen, StatementCard
from raceday.tui.screens.play import PlayScreen
from raceday.tui.screens.replay import ReplayScreen

pytestmark = pytest.mark.tui

GUARDED_APPLY = """UPDATE endpoint
SET rollback_plan_id = active_plan_id, active_plan_id = :plan,
    updated_by = 'enactor-a', updated_at = :now_hhmm
WHERE name = 'dynamodb.us-east-1.amazonaws.com' AND active_plan_id < :plan"""


def text_of(widget: Static) -> str:
    """The plain text a Static shows, whatever it holds (text or a Rich group)."""
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(widget.content)
    return out.getvalue()


def card(screen: HardenScreen, statement: str) -> StatementCard:
    found = screen.card_for(statement)
    assert found is not None
    return found


async def open_harden(pilot: Any) -> HardenScreen:
    await pilot.press("f4")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, HardenScreen), type(screen).__name__
    return screen


async def test_edit_an_automation_statement_and_put_it_back(make_app: MakeApp,
                                                            flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        harden = await open_harden(pilot)
        assert [c.statement.id for c in harden.cards] == [s.id for s in flagship.statements]
        apply = card(harden, "enactor-a-apply")
        assert "run by enactor-a" in text_of(apply.query_one(".harden-head", Static))
        assert "EDITED" not in text_of(apply.query_one(".harden-head", Static))
        apply.editor.focus()
        apply.editor.text = GUARDED_APPLY
        await pilot.pause()
        assert "unsaved" in text_of(apply.query_one(".harden-head", Static))
        await pilot.press("ctrl+s")
        await settle(pilot)
        session = play.runner.session if play.runner else None
        assert session is not None
        assert session.statement_sql["enactor-a-apply"] == GUARDED_APPLY
        assert "EDITED" in text_of(apply.query_one(".harden-head", Static))
        assert "Saved" in text_of(apply.query_one(".harden-status", Static))
        assert "1 edited" in text_of(harden.query_one("#harden-bar", Static))
        [edit] = [e for e in session.events if isinstance(e, ev.Edit)]
        assert edit.statement == "enactor-a-apply" and edit.role == "responder"

        await pilot.press("ctrl+o")  # the exercise's original again
        await settle(pilot)
        original = next(s.sql for s in flagship.statements if s.id == "enactor-a-apply")
        assert session.statement_sql["enactor-a-apply"] == original
        assert "EDITED" not in text_of(apply.query_one(".harden-head", Static))
        assert "Original" in text_of(apply.query_one(".harden-status", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert play.hardening is None and app.screen is play


async def test_a_role_that_may_not_edit_is_told_so(make_app: MakeApp) -> None:
    mini = load_exercise(DATA / "mini-race")
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.start_play(mini, {"enactor": "Eve"})
        await settle(pilot)
        harden = await open_harden(pilot)
        assert "may not change the schema" in text_of(harden.query_one("#harden-warning",
                                                                       Static))
        cleanup = card(harden, "cleanup")
        cleanup.editor.focus()
        cleanup.editor.text = "DELETE FROM plan WHERE id < 2 AND id NOT IN " \
                              "(SELECT active_plan_id FROM endpoint)"
        await pilot.press("ctrl+s")
        await settle(pilot)
        status = text_of(cleanup.query_one(".harden-status", Static))
        assert "Refused" in status and "role enactor may not edit the automation" in status
        assert "EDITED" not in text_of(cleanup.query_one(".harden-head", Static))


async def replay_walk(pilot: Any) -> ReplayScreen:
    await pilot.press("ctrl+r")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_until(pilot, lambda: screen.walk is not None, timeout=30)
    await pilot.pause()
    return screen


async def test_replay_steps_through_the_race_and_names_the_guard(make_app: MakeApp,
                                                                 flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        harden = await open_harden(pilot)
        apply = card(harden, "enactor-a-apply")
        apply.editor.focus()
        apply.editor.text = GUARDED_APPLY
        await pilot.press("ctrl+s")
        await settle(pilot)
        replay = await replay_walk(pilot)  # ctrl+r works from the harden screen too
        walk = replay.walk
        assert walk is not None and walk.error is None
        assert replay.index == 0 and "The replay begins" in text_of(replay.query_one(
            "#replay-detail", Static))
        assert walk.edits == ("enactor-a-apply",)
        assert set(walk.prevented) == {"stale-apply", "active-plan-delete", "empty-answer",
                                       "wedged-automation"}
        # step to the run where the guard spoke
        while replay.step is not None and not replay.step.guards:
            before = replay.index
            await pilot.press("n")
            assert replay.index == before + 1
        step = replay.step
        assert step is not None and step.time == "23:48"
        assert "stale-apply prevented here: 0 rows changed" in step.guards[0]
        world = text_of(replay.query_one("#replay-world", Static))
        assert "4 of 4 endpoints answer" in world
        await pilot.press("p")
        assert replay.step is not None and not replay.step.guards
        await pilot.press("end")
        assert replay.step is not None and replay.step.kind == "verdict"
        detail = text_of(replay.query_one("#replay-detail", Static))
        # the race's 25: a conditional apply keeps no practice night's empty answer away
        assert "PREVENTED" in detail and "guards 25/40" in detail
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HardenScreen)


async def test_replay_without_guards_shows_the_empty_answer(make_app: MakeApp) -> None:
    mini = load_exercise(DATA / "mini-race")
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        replay = await replay_walk(pilot)
        walk = replay.walk
        assert walk is not None and walk.happened == ("stale-apply", "empty-answer")
        kinds = [s.kind for s in walk.steps]
        assert kinds[0] == "intro" and kinds[-1] == "verdict"
        cleanup = next(s for s in walk.steps if s.empty)
        assert cleanup.empty == ("regional.example",)
        assert "The regional endpoint's answer is empty" in cleanup.happened
        replay.show(walk.steps.index(cleanup))
        await pilot.pause()
        world = text_of(replay.query_one("#replay-world", Static))
        assert "1 of 2 endpoints answer" in world and "EMPTY ANSWER" in world
        await pilot.press("end")
        detail = text_of(replay.query_one("#replay-detail", Static))
        assert "HAPPENED" in detail and "guards 0/40" in detail


async def test_the_end_screen_opens_the_debrief(make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_play(pilot)
        end = await end_play(pilot)
        assert (end.folder / "debrief.md").exists()
        await pilot.press("d")
        await settle(pilot)
        from raceday.tui.screens.review import DebriefScreen

        debrief = app.screen
        assert isinstance(debrief, DebriefScreen)
        shown = debrief.query_one("#debrief-text", Static)
        assert "Debrief: Mini DNS race" in text_of(shown)
        # rendered while the score was read: d showed it as it was, not rendered again
        assert end._ready is not None and shown.content is end._ready[2]
        assert "Mini DNS race" in (end.folder / "debrief.md").read_text(encoding="utf-8")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is end


async def test_the_end_screens_debrief_is_the_one_the_end_built_with_the_rooms_edits(
        make_app: MakeApp, mini: Exercise) -> None:
    """d shows the debrief the session's end built from its own events (a 20,000-event
    transcript took a second to read back): it opens with the transcript file gone, and
    with what the room has written into the after-action report since."""
    from raceday.transcript.debrief.aar import AarEdits, aar_path
    from raceday.tui.screens.review import DebriefScreen

    app = make_app(mini)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_play(pilot)
        end = await end_play(pilot)
        (end.folder / "events.jsonl").rename(end.folder / "moved.jsonl")
        aar_path(end.folder).write_text(
            AarEdits(evaluators="Ada, the facilitator").to_json(), encoding="utf-8")
        await pilot.press("d")
        await settle(pilot)
        shown = app.screen
        assert isinstance(shown, DebriefScreen)
        assert shown.debrief.summary.title == "Mini DNS race"
        assert shown.debrief.after_action.evaluators == "Ada, the facilitator"
        # the text rendered while the score was read had no evaluators: rendered anew
        assert "Ada, the facilitator" in text_of(shown.query_one("#debrief-text", Static))


async def test_the_replay_bar_counts_the_steps_the_intro_promises(make_app: MakeApp,
                                                                 flagship: Exercise) -> None:
    """The intro says "N steps to the verdict": the bar counts those N (step 1/N to N/N),
    and names the two pages that are not steps, the intro and the verdict."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        replay = await replay_walk(pilot)
        walk = replay.walk
        assert walk is not None and walk.error is None

        def bar() -> str:
            return text_of(replay.query_one("#replay-bar", Static))

        intro = text_of(replay.query_one("#replay-detail", Static))
        steps = len(walk.steps) - 2  # the intro and the verdict are pages, not steps
        assert f"{steps} steps to the verdict" in intro
        assert bar().startswith(" Replay   intro · ")
        seen = []
        for _ in range(steps):
            await pilot.press("n")
            seen.append(bar().split(" · ")[0].removeprefix(" Replay   "))
        assert seen == [f"step {n}/{steps}" for n in range(1, steps + 1)]
        await pilot.press("n")
        assert replay.step is not None and replay.step.kind == "verdict"
        assert bar().startswith(" Replay   verdict · ")
        await pilot.press("home")
        assert bar().startswith(" Replay   intro · ")


async def test_ctrl_r_again_shows_the_new_replay_not_the_last_one(make_app: MakeApp,
                                                                  flagship: Exercise) -> None:
    """The replay screen is kept between presses: what it showed last must not stay."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        replay = await replay_walk(pilot)
        assert replay.walk is not None and not replay.walk.prevented
        await pilot.press("end")
        assert "guards 0/40" in text_of(replay.query_one("#replay-detail", Static))
        await pilot.press("escape")
        await pilot.pause()
        harden = await open_harden(pilot)
        apply = card(harden, "enactor-a-apply")
        apply.editor.focus()
        apply.editor.text = GUARDED_APPLY
        await pilot.press("ctrl+s")
        await settle(pilot)
        again = await replay_walk(pilot)
        walk = again.walk
        assert walk is not None and "stale-apply" in walk.prevented
        assert again.index == 0 and "The replay begins" in text_of(again.query_one(
            "#replay-detail", Static))
        assert "Replay   intro · " in text_of(again.query_one("#replay-bar", Static))
        await pilot.press("end")
        detail = text_of(again.query_one("#replay-detail", Static))
        assert "guards 25/40" in detail and "guards 0/40" not in detail


async def test_after_a_replay_that_failed_the_next_one_shows_its_steps_and_world(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    mini = load_exercise(DATA / "mini-race")
    real = Session.replay
    calls: list[int] = []

    def once_broken(self: Session, **kwargs: bool) -> ev.Replay:
        calls.append(1)
        if len(calls) == 1:
            raise SessionError("the disk said no")
        return real(self, **kwargs)

    monkeypatch.setattr(Session, "replay", once_broken)
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        replay = await replay_walk(pilot)
        assert replay.walk is not None and replay.walk.error is not None
        assert "the disk said no" in text_of(replay.query_one("#replay-detail", Static))
        assert not replay.query_one("#replay-world-scroll").display
        await pilot.press("escape")
        await pilot.pause()
        again = await replay_walk(pilot)
        assert again.walk is not None and again.walk.error is None
        assert again.query_one("#replay-world-scroll").display
        assert "endpoints answer" in text_of(again.query_one("#replay-world", Static))
        assert "the disk said no" not in text_of(again.query_one("#replay-detail", Static))


async def test_a_replay_left_while_it_ran_does_not_answer_the_next_ctrl_r(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """Escape while the replay runs, ctrl+r again: the first replay's answer (older than
    what the second is replaying) is not shown as the second's."""
    mini = load_exercise(DATA / "mini-race")
    real = Session.replay
    gates = [threading.Event(), threading.Event()]
    finished: list[int] = []

    def gated(self: Session, **kwargs: bool) -> ev.Replay:
        n = len(finished)
        gates[min(n, 1)].wait(20)
        try:
            if n == 0:
                raise SessionError("the first replay's answer")
            return real(self, **kwargs)
        finally:
            finished.append(n)

    monkeypatch.setattr(Session, "replay", gated)
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        gates[0].set()
        await wait_until(pilot, lambda: finished == [0])
        for _ in range(5):
            await pilot.pause()
        assert replay.walk is None  # still waiting for the second
        assert "first replay" not in text_of(replay.query_one("#replay-detail", Static))
        gates[1].set()
        await wait_until(pilot, lambda: replay.walk is not None, timeout=30)
        assert replay.walk is not None and replay.walk.error is None


async def test_a_replay_answered_before_its_screen_is_drawn_is_shown(
        make_app: MakeApp) -> None:
    """ctrl+r starts the replay before the screen is pushed: a quick answer (a refusal)
    may come before the screen is composed, and is shown once it is."""
    app = make_app(load_exercise(DATA / "mini-race"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = ReplayScreen()
        screen.show_walk(ReplayWalk(error="nothing to replay yet"))
        app.push_screen(screen)
        await pilot.pause()
        assert "nothing to replay yet" in text_of(screen.query_one("#replay-detail", Static))
        assert "not available" in text_of(screen.query_one("#replay-bar", Static))


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 50)])
async def test_the_replay_holds_under_the_keys_a_person_presses(make_app: MakeApp,
                                                                size: tuple[int, int]) -> None:
    """Issue 59: ctrl+r, End, PageDown on the verdict ended the app (KeyError in the hidden
    step list's page move, its height 0). Every paging key, at every width (the step list is
    shown only when wide), leaves the replay open; PageDown and PageUp page the detail."""
    app = make_app(load_exercise(DATA / "mini-race"))
    async with app.run_test(size=size) as pilot:
        await start_play(pilot)
        replay = await replay_walk(pilot)
        for key in ("end", "pagedown", "pageup", "pagedown", "ctrl+end", "ctrl+home", "down",
                    "up", "tab", "pagedown", "shift+tab", "pageup", "home", "pagedown"):
            await pilot.press(key)
            await pilot.pause()
            assert app.is_running and app.screen is replay, key
        await pilot.press("end")
        assert replay.step is not None and replay.step.kind == "verdict"
        await pilot.press("pagedown")
        await pilot.pause()
        assert app.is_running and replay.step.kind == "verdict"
