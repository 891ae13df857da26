"""What a facilitator's game day needs from the play screen: the editor, feed, results and
keys that were seen to fail, the hot seat, the pace, the facilitator's controls."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Footer, TabbedContent
from tui_fixtures import MakeApp, end_play, settle, start_play, type_text

from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.screens.dialogs import ChoiceDialog
from raceday.tui.screens.end import end_markdown
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.results import ResultsView

pytestmark = pytest.mark.tui


def play_screen(app: Any) -> PlayScreen:
    screen = app.screen
    assert isinstance(screen, PlayScreen), type(screen).__name__
    return screen


def columns(results: ResultsView) -> tuple[str, ...]:
    return results.table.columns


async def cast_two(pilot: Any) -> None:
    """Team mode: Ana plays the planner, Bo enactor-a."""
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    await type_text(pilot, "Ana")
    await pilot.press("enter")
    await type_text(pilot, "Bo")
    await pilot.press("ctrl+s")
    await settle(pilot)


async def test_select_all_then_typing_replaces_and_ctrl_l_clears(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        editor = play_screen(app).query_one(SqlEditor)
        editor.text = "SELECT * FROM plan ORDER BY id;"
        await pilot.press("ctrl+a")
        assert editor.selected_text == editor.text
        await type_text(pilot, "SELECT 1;")
        assert editor.text == "SELECT 1;"  # never glued onto the old statement
        await pilot.press("ctrl+l")
        assert editor.text == ""
        await pilot.press("ctrl+z")
        assert editor.text == "SELECT 1;"
        await pilot.press("home")
        assert editor.cursor_location == (0, 0)


async def test_feed_lines_wrap_to_the_feed_and_leave_tasks_out(
        make_app: MakeApp, flagship: Exercise) -> None:
    for size in ((120, 40), (80, 24)):
        app = make_app(flagship, mode="team")
        async with app.run_test(size=size) as pilot:
            await cast_two(pilot)
            screen = play_screen(app)
            feed = screen.query_one(EventFeed)
            width = feed.scrollable_content_region.width
            text = [strip.text for strip in feed.lines]
            assert all(len(line.rstrip()) <= width for line in text)
            joined = " ".join(" ".join(t.split()) for t in text)
            assert "Nothing is alarming." in joined  # the whole inject, wrapped, not cut
            assert not any("TASK for" in t for t in text)  # tasks: the task panel
            assert "Write the next plan generation" in str(screen.query_one("#tasks").render())


async def test_f6_shows_every_grid_and_alt_keys_scroll_from_the_editor(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        screen.query_one(SqlEditor).text = (
            "SELECT name FROM endpoint;\nSELECT 1 AS one, 2 AS two;\n"
            "SELECT * FROM plan_record;")
        await pilot.press("f6")
        await settle(pilot)
        results = screen.query_one(ResultsView)
        assert len(results.grids) == 3 and results.table.columns[0] == "plan_id"
        assert "grid 3 of 3" in str(results.status.render())
        await pilot.press("alt+pageup")
        assert columns(results) == ("one", "two")
        await pilot.press("alt+pageup")
        assert columns(results) == ("name",) and results.table.row_count == 4
        await pilot.press("alt+pagedown", "alt+pagedown")
        assert columns(results)[0] == "plan_id"
        assert isinstance(app.focused, SqlEditor)
        await pilot.press("alt+down", "alt+down")
        assert results.table.cursor_row == 2
        await pilot.press("alt+right")
        assert isinstance(app.focused, SqlEditor)


async def test_hot_seat_results_belong_to_their_seat(make_app: MakeApp,
                                                    flagship: Exercise) -> None:
    app = make_app(flagship, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await cast_two(pilot)
        screen = play_screen(app)
        results = screen.query_one(ResultsView)
        screen.query_one(SqlEditor).text = "SELECT id FROM plan;"
        await pilot.press("f5")
        await settle(pilot)
        assert results.table.row_count > 0
        await pilot.press("f2")
        assert screen.role == "enactor-a"
        assert results.table.row_count == 0 and not results.results
        assert "Keyboard passed to enactor-a" in str(results.status.render())
        await pilot.press("f2")
        assert screen.role == "planner" and results.table.columns == ("id",)


async def test_f3_steps_through_the_side_tabs_and_focus_comes_back(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        tabs = screen.query_one("#side-tabs", TabbedContent)
        seen = []
        for _ in range(3):
            await pilot.press("f3")
            await pilot.pause()
            seen.append(tabs.active)
            assert isinstance(app.focused, SqlEditor)
        assert seen == ["tab-schema", "tab-monitors", "tab-tasks"]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.press("f3")  # opens the panel over the results
        await pilot.pause()
        assert screen.has_class("-side-open") and tabs.active == "tab-tasks"
        await pilot.press("f3", "f3", "f3")  # schema, monitors, closed
        await pilot.pause()
        await pilot.pause()
        assert not screen.has_class("-side-open")
        assert isinstance(app.focused, SqlEditor)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        await pilot.press("x")
        assert screen.query_one(SqlEditor).text.startswith("x")


async def test_the_footer_keeps_f1_at_80_columns(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_play(pilot)
        footer = play_screen(app).query_one(Footer)
        first = footer.children[0]
        assert "f1" in str(first.render()).lower() or "help" in str(first.render()).lower()


async def test_ctrl_q_on_the_end_screen_goes_back_to_the_launcher(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        end = await end_play(pilot)
        assert "transcripts/" in str(end.query_one("#end-bar").render())
        text = end_markdown(end.exercise, end.score, end.folder, end.events)
        assert "Transcript saved in" in text
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("enter")  # the first choice: the launcher
        await settle(pilot)
        assert isinstance(app.screen, LauncherScreen)


def test_a_refusal_is_said_once() -> None:
    from raceday.store.results import StatementResult
    from raceday.tui.widgets.results import describe_result

    result = StatementResult(sql="SELECT printf('x')", error="refused: function printf is "
                             "not allowed", error_kind="refused")
    assert describe_result(result).plain.startswith(" Refused  function printf")


def test_replay_line_never_says_happened_nothing() -> None:
    from raceday.transcript.render import describe

    result = ev.ReplayResult(steps=(ev.StepReplay(id="stale-apply", title="S",
                                                  status="prevented", at="23:48"),))
    line = describe(ev.Replay(available=True, result=result))
    assert "happened nothing" not in line and "no race step happened" in line


def test_speed_choices_fit_a_game_day_and_keep_the_speed_in_use() -> None:
    from raceday.engine.clock import real_minutes, speed_choices, speed_for

    night = 225  # 23:00-02:45
    choices = speed_choices(night, 3.3)
    targets = {c.target: c for c in choices if c.target is not None}
    assert targets[60].speed == 3.75 and round(targets[60].real_minutes) == 60
    assert targets[90].speed == 2.5
    assert any(c.speed == 3.3 for c in choices)  # chosen once, can be chosen again
    assert [c.speed for c in choices] == sorted(c.speed for c in choices)
    assert "60 min game day: 3.75x" in targets[60].label()
    assert speed_for(night, 75) == 3.0 and real_minutes(night, 3.0) == 75


async def test_the_speed_dialog_offers_game_day_lengths_and_the_current_speed(
        make_app: MakeApp, flagship: Exercise) -> None:
    from raceday.engine.clock import Pace

    app = make_app(flagship, pace=Pace.LIVE, speed=3.3)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        labels = [label for _, label in dialog.options]
        assert any("60 min game day: 3.75x" in label for label in labels)
        assert any(label.startswith("3.3x") and "now" in label for label in labels)
        await pilot.press("escape")


async def test_no_freeze_after_a_skip_while_paused(make_app: MakeApp, flagship: Exercise) -> None:
    from tui_fixtures import FakeWall

    from raceday.engine.clock import Pace

    wall = FakeWall()
    app = make_app(flagship, pace=Pace.LIVE, speed=3.0, wall=wall)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        await pilot.press("ctrl+t")  # pause
        await pilot.press("ctrl+n")  # skip to the next inject (23:40)
        await settle(pilot)
        assert screen.snapshot is not None and screen.snapshot.clock_face == "23:40"
        await pilot.press("ctrl+t")  # resume
        wall.now += 20  # 20 s at 3x: one simulated minute
        screen.tick()
        await settle(pilot)
        assert screen.snapshot.clock_face == "23:41"


async def test_a_person_in_the_planner_seat_sees_one_task_its_sql_and_can_finish_it(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await cast_two(pilot)
        screen = play_screen(app)
        await pilot.press("ctrl+n")  # stops at 23:01, when the planner's task falls due
        await settle(pilot)
        assert screen.snapshot is not None and screen.snapshot.clock_face == "23:01"
        tasks = str(screen.query_one("#tasks").render())
        assert "NOW · due 23:01" in tasks and "Write the next plan generation" in tasks
        assert "INSERT INTO plan" in tasks  # the SQL the automation would have run
        assert "due: planner 1" in str(screen.query_one("#play-header").render())
        screen.query_one(SqlEditor).text = (
            "INSERT INTO plan (id, created_at) SELECT max(id) + 1, '23:01' FROM plan;")
        await pilot.press("f5")
        await settle(pilot)
        tasks = str(screen.query_one("#tasks").render())
        assert "NOW" not in tasks  # written: it leaves the panel until it falls due again
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert screen.snapshot.clock_face == "23:03"
        assert "NOW · due 23:03" in str(screen.query_one("#tasks").render())
        # with the task due, ctrl+n never passes it unasked: nobody else will write the plan
        await pilot.press("ctrl+n")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        assert "planner: Write the next plan generation" in dialog.note
        await pilot.press("enter")  # "Stay and do it" is the one highlighted
        await settle(pilot)
        assert screen.snapshot.clock_face == "23:03"
        await pilot.press("ctrl+n", "down", "enter")  # leave it undone, on purpose
        await settle(pilot)
        faces = [screen.snapshot.clock_face]
        await pilot.press("ctrl+n")  # told once: the same overdue task is not asked again
        await settle(pilot)
        faces.append(screen.snapshot.clock_face)
        assert not isinstance(app.screen, ChoiceDialog)
        assert "23:03" < faces[0] < faces[1]  # each press moved on (held roles' next task)


async def test_onboarding_tasks_come_one_at_a_time(make_app: MakeApp) -> None:
    from raceday.engine.load import load_named_exercise

    lost_update = load_named_exercise("lost-update-basics")
    app = make_app(lost_update, mode="onboarding")
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        for _ in range(10):  # to 09:08, when every task has fallen due (looks are free here)
            if screen.snapshot is not None and screen.snapshot.clock_face >= "09:08":
                break
            await pilot.press("ctrl+n")
            await settle(pilot)
        assert screen.snapshot is not None and screen.snapshot.clock_face >= "09:08"
        tasks = str(screen.query_one("#tasks").render())
        assert tasks.count("NOW") == 1 and "then ·" in tasks


async def test_names_clock_injects_and_notes_go_into_the_transcript(
        make_app: MakeApp, flagship: Exercise) -> None:
    from tui_fixtures import FakeWall

    from raceday.engine.clock import Pace
    from raceday.transcript.log import read_events
    from raceday.tui.screens.dialogs import InjectDialog, NoteDialog

    wall = FakeWall()
    app = make_app(flagship, mode="team", pace=Pace.LIVE, speed=3.75, wall=wall)
    async with app.run_test(size=(120, 40)) as pilot:
        await cast_two(pilot)
        screen = play_screen(app)
        await pilot.press("ctrl+t")  # pause
        await settle(pilot)
        await pilot.press("ctrl+t")  # resume
        await settle(pilot)
        screen.set_speed(2.5)
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert isinstance(app.screen, NoteDialog)
        await type_text(pilot, "Dee")
        await pilot.press("enter")
        await type_text(pilot, "Ana read the plan table first")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press("enter")  # the first choice: send an inject
        await pilot.pause()
        assert isinstance(app.screen, InjectDialog)
        await type_text(pilot, "VP asks for status")
        await pilot.press("enter", "enter")  # no message
        await type_text(pilot, "enactor-a")
        await pilot.press("enter")
        await type_text(pilot, "+5m")
        await pilot.press("enter")
        await settle(pilot)
        assert screen.runner is not None and screen.runner.session is not None
        folder = screen.runner.session.folder
    events = read_events(folder).events
    cast = next(e for e in events if isinstance(e, ev.Cast))
    assert dict(cast.names) == {"planner": "Ana", "enactor-a": "Bo"}
    actions = [e.action for e in events if isinstance(e, ev.Facilitation)]
    assert actions == ["pause", "resume", "speed", "schedule"]
    planned = [e for e in events if isinstance(e, ev.Facilitation)][-1]
    assert planned.at == "23:05" and planned.to == ("enactor-a",)
    note = next(e for e in events if isinstance(e, ev.Note))
    assert note.author == "Dee" and note.text == "Ana read the plan table first"


async def test_a_person_as_enactor_a_skips_to_its_story_task_not_the_normal_nights(
        make_app: MakeApp, flagship: Exercise) -> None:
    """ctrl+n as Enactor A stops when its story task falls due (23:31), not every two
    minutes at the on-time Enactor's times, which only the normal night plays."""
    app = make_app(flagship, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # briefing -> cast
        await settle(pilot)
        await pilot.press("enter")  # the planner: nobody (the automation plays it)
        await type_text(pilot, "Bo")  # enactor-a
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen = play_screen(app)
        assert [s.role for s in screen.seats] == ["enactor-a"]
        assert "at once" not in str(screen.query_one("#tasks").render())
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert screen.snapshot is not None and screen.snapshot.clock_face == "23:31"
        assert "NOW · due 23:31" in str(screen.query_one("#tasks").render())


async def test_f9_lists_the_seats_own_hints_and_says_whose_task_an_automation_hint_is(
        make_app: MakeApp, flagship: Exercise) -> None:
    """At the hot seat the planner was offered the Enactor's hint as if it were its own."""
    app = make_app(flagship, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await cast_two(pilot)
        screen = play_screen(app)
        assert screen.role == "planner"
        await pilot.press("f9")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        assert "recheck-at-write" not in [k for k, _ in dialog.options]  # enactor-a's, Bo's
        await pilot.press("escape", "f2")  # the keyboard to Bo, enactor-a
        await settle(pilot)
        assert screen.role == "enactor-a"
        await pilot.press("f9")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        label = dict(dialog.options)["recheck-at-write"]
        assert "task:" not in label  # its own task, named plainly


async def test_solo_f9_says_whose_task_an_automation_hint_is(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await pilot.press("f9")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        name = flagship.role("enactor-a").name
        assert f"{name}'s task: " in dict(dialog.options)["recheck-at-write"]
