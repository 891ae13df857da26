"""The flagship's key moments, played from the keyboard with Pilot."""

from __future__ import annotations

import io
import sys
from typing import Any, TypeVar

import pytest
from rich.console import Console
from textual.widgets import DataTable, OptionList, Static
from tui_fixtures import FakeWall, MakeApp, calls_to, settle, start_play, type_text, wait_until

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind
from raceday.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, MonitorDialog
from raceday.tui.screens.end import EndScreen
from raceday.tui.screens.help import HelpScreen, TooSmallScreen
from raceday.tui.screens.play import PlayScreen, hint_sql
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.results import ResultsView
from raceday.tui.widgets.world import WorldPanel, render_world

pytestmark = pytest.mark.tui
E = TypeVar("E", bound=ev.Event)


def play_screen(app: Any) -> PlayScreen:
    screen = app.screen
    assert isinstance(screen, PlayScreen), type(screen).__name__
    return screen


def events_of(screen: PlayScreen, kind: type[E]) -> list[E]:
    assert screen.runner is not None and screen.runner.session is not None
    return list(of_kind(screen.runner.session.events, kind))


def played(screen: PlayScreen) -> list[ev.Statement]:
    return [e for e in events_of(screen, ev.Statement) if not e.automated]


def status_text(screen: PlayScreen) -> str:
    return str(screen.query_one(ResultsView).status.render())


async def next_event(pilot: Any, times: int = 1) -> None:
    for _ in range(times):
        await pilot.press("ctrl+n")
        await settle(pilot)


async def test_type_sql_run_it_and_see_the_rows(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        editor = screen.query_one(SqlEditor)
        assert "FROM endpoint" in editor.text  # the role's example query is waiting
        editor.text = ""
        await type_text(pilot, "SELECT name FROM endpoint;")
        await pilot.press("f5")
        await settle(pilot)
        results = screen.query_one(ResultsView)
        assert results.table.row_count == 4
        assert "4 rows" in status_text(screen)
        [statement] = played(screen)
        assert statement.role == "responder" and statement.sql == "SELECT name FROM endpoint;"
        assert screen.snapshot is not None and screen.snapshot.clock_face == "23:01"


async def test_statement_under_cursor_and_zero_rows_changed(make_app: MakeApp,
                                                            flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        editor = screen.query_one(SqlEditor)
        editor.text = ("SELECT 1;\n"
                       "UPDATE automation SET enabled = 0 WHERE name = 'no-such-switch';\n")
        editor.move_cursor((1, 5))
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert "0 rows changed" in status_text(screen)
        assert played(screen)[-1].sql.startswith("UPDATE automation")
        await pilot.press("f6")  # everything: two statements
        await settle(pilot)
        assert [e.sql[:6] for e in played(screen)[-2:]] == ["SELECT", "UPDATE"]


async def test_errors_are_plain_words(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        screen.query_one(SqlEditor).text = "SELEC * FROM plan"
        await pilot.press("f5")
        await settle(pilot)
        assert "SQL error" in status_text(screen)
        screen.query_one(SqlEditor).text = "ATTACH DATABASE 'x.db' AS x"
        await pilot.press("f5")
        await settle(pilot)
        assert "Refused" in status_text(screen)


async def test_onboarding_shows_the_empty_answer_in_the_world_panel(
        make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship, mode="onboarding")
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        await next_event(pilot, 4)  # 23:40, 23:47, 23:48, 23:49
        snap = screen.snapshot
        assert snap is not None and snap.world.answers is not None
        empty = [a.endpoint for a in snap.world.answers if not a.addresses]
        assert empty == ["dynamodb.us-east-1.amazonaws.com"]
        panel = screen.query_one("#world", WorldPanel)
        console = Console(width=60, record=True, file=io.StringIO())
        console.print(render_world(panel.world, panel.alarms))
        text = console.export_text()
        assert "DNS answers now" in text and "EMPTY" in text  # the exercise's label
        strip = screen.query_one("#world-strip", WorldPanel)
        assert "dynamodb.us-east-1.amazonaws.com: EMPTY" in str(strip.render())
        assert events_of(screen, ev.Fault)


async def test_solo_finds_the_empty_answer_by_query_not_in_the_panel(
        make_app: MakeApp, flagship: Exercise) -> None:
    """Outside onboarding the panel shows what that night's dashboards showed: switches,
    alarms and the team's own monitors, not which endpoint is empty."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        await next_event(pilot, 4)
        snap = screen.snapshot
        assert snap is not None and snap.world.answers is None
        assert snap.world.switches_label == "Automation" and snap.world.switches
        panel = screen.query_one("#world", WorldPanel)
        console = Console(width=60, record=True, file=io.StringIO())
        console.print(render_world(panel.world, panel.alarms))
        assert "dynamodb.us-east-1.amazonaws.com" not in console.export_text()
        assert events_of(screen, ev.Fault)


async def test_switch_role_keeps_each_roles_editor(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # briefing -> cast
        await settle(pilot)
        await type_text(pilot, "Ana")
        await pilot.press("enter")  # planner -> enactor-a
        await type_text(pilot, "Bo")
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen = play_screen(app)
        assert [s.role for s in screen.seats] == ["planner", "enactor-a"]
        # issue 59: F2 worked but the footer never said so
        shown = {b.binding.key: b.binding.description
                 for b in app.active_bindings.values() if b.binding.show}
        assert shown.get("f2") == "Pass", shown
        editor = screen.query_one(SqlEditor)
        editor.text = "SELECT max(id) FROM plan;"
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("f2")
        assert screen.role == "enactor-a"
        assert "active_plan_id" in editor.text  # enactor-a's own example
        await pilot.press("f5")
        await settle(pilot)
        roles = [e.role for e in played(screen)]
        assert roles == ["planner", "enactor-a"]
        await pilot.press("f2")
        assert screen.role == "planner" and editor.text == "SELECT max(id) FROM plan;"
        await pilot.press("ctrl+up")
        assert editor.text == "SELECT max(id) FROM plan;"


async def test_save_a_monitor_and_it_alerts(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        screen.query_one(SqlEditor).text = (
            "SELECT e.name FROM endpoint AS e WHERE NOT EXISTS "
            "(SELECT 1 FROM dns_answer AS d WHERE d.endpoint = e.name)")
        await pilot.press("f7")
        await pilot.pause()
        assert isinstance(app.screen, MonitorDialog)
        await type_text(pilot, "empty-endpoints")
        await pilot.press("enter", "ctrl+s")
        await settle(pilot)
        assert events_of(screen, ev.MonitorSaved)[0].name == "empty-endpoints"
        await next_event(pilot, 3)
        [alert] = events_of(screen, ev.Alert)
        assert alert.matched and alert.sim_time == "23:48"
        assert events_of(screen, ev.Detected)
        assert "empty-endpoints" in screen.alarms.alerting


async def test_declare_a_finding(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        await next_event(pilot, 3)
        await pilot.press("f8")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        # solo, nobody could rule on a finding in the player's own words: none is offered
        assert [i for i, _ in dialog.options] == sorted(
            (f.id for f in flagship.findings),
            key=lambda i: next(f.text for f in flagship.findings if f.id == i).casefold())
        assert "own words" not in dialog.note
        await pilot.press("up", "enter")  # the first finding: the menu is alphabetical
        await pilot.pause()
        # a wrong finding costs: the first Enter names it, and nothing is declared yet
        choice = dialog  # the dialog as itself (`app.screen is dialog` widens its type)
        assert app.screen is choice and not events_of(screen, ev.Declaration)
        first = min(flagship.findings, key=lambda f: f.text.casefold())
        asked = str(choice.query_one("#choice-confirm", Static).content)
        assert asked.startswith(f"Declare “{first.text}”? Enter again to declare it")
        await pilot.press("escape")  # Escape chooses again, and the menu stays
        assert app.screen is choice and choice.pending is None
        await pilot.press("enter", "down")  # so does moving to another finding
        assert app.screen is choice and choice.pending is None
        await pilot.press("end", "down", "down")  # the list stops at its last finding
        last = max(flagship.findings, key=lambda f: f.text.casefold())
        assert choice.options[choice.query_one("#choices", OptionList).highlighted or 0][0] \
            == last.id
        await pilot.press("home", "enter", "enter")
        await settle(pilot)
        [declared] = events_of(screen, ev.Declaration)
        first = min(flagship.findings, key=lambda f: f.text.casefold())
        assert declared.finding == first.id
        # judged against the world at that moment: nothing is wrong yet
        assert declared.verdict in {"wrong", "false_alarm"}
        assert not events_of(screen, ev.Detected)
        # and the toast says so at once, with why
        toasts = [(str(n.message), n.title, n.severity) for n in app._notifications]
        said = [t for t in toasts if t[0].startswith(f"Declared: {declared.text}")]
        assert said, toasts
        message, title, severity = said[-1]
        assert "It does not count" in message and declared.why in message
        assert title == "Declared: it does not count now" and severity == "warning"


async def test_pause_and_resume_the_live_clock(make_app: MakeApp, flagship: Exercise) -> None:
    wall = FakeWall()
    app = make_app(flagship, pace=Pace.LIVE, speed=60.0, wall=wall)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        wall.now += 5  # 5 s at 60x: 5 simulated minutes
        screen.tick()
        await settle(pilot)
        assert screen.snapshot is not None and screen.snapshot.clock_face == "23:05"
        await pilot.press("ctrl+t")
        assert screen.live.paused
        assert "PAUSED" in str(screen.query_one("#play-header").render())
        wall.now += 30
        screen.tick()
        await settle(pilot)
        assert screen.snapshot.clock_face == "23:05"
        await pilot.press("ctrl+t")
        wall.now += 2
        screen.tick()
        await settle(pilot)
        assert screen.snapshot.clock_face == "23:07"
        screen.set_speed(120.0)
        wall.now += 1
        screen.tick()
        await settle(pilot)
        assert screen.snapshot.clock_face == "23:09"


async def test_escape_cancels_a_long_statement(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        screen.query_one(SqlEditor).text = (
            "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
            "SELECT count(*) FROM n;")
        await pilot.press("f5")
        runner = screen.runner
        assert runner is not None
        await wait_until(pilot, lambda: runner.statement_running)
        await pilot.press("escape")
        await settle(pilot)
        last = played(screen)[-1]
        assert not last.ok and "cancelled" in (last.error or "")
        assert last.elapsed_ms < 4000
        assert "Stopped" in status_text(screen)


async def test_the_end_screen_and_the_debrief_are_imported_while_the_players_read(
        make_app: MakeApp, flagship: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    # what the end needs is imported once the play screen is up, not after the players
    # confirm the end (it took the end 60-170 ms longer than the same night headless)
    ahead = ("raceday.tui.screens.end", "raceday.transcript.debrief")
    for name in ahead:
        monkeypatch.delitem(sys.modules, name, raising=False)  # put back after the test
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        assert isinstance(app.screen, PlayScreen)
        await wait_until(pilot, lambda: all(name in sys.modules for name in ahead))


async def test_onboarding_guides_and_hints_cost(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship, mode="onboarding")
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        guide = screen.query_one("#guide")
        assert "Step 1 of 5" in str(guide.render())
        await pilot.press("f5")
        await settle(pilot)
        assert "Step 2 of 5" in str(guide.render())
        await pilot.press("f9")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)  # which hint, at what cost, before reading
        assert all(label.startswith("-") and "point" in label for _, label in dialog.options)
        await pilot.press("enter")
        await settle(pilot)
        [hint] = events_of(screen, ev.Hint)
        assert hint.cost > 0 and hint.id == dialog.selected
        await pilot.press("f9")  # again: the same list in the same places, the one taken greyed
        await pilot.pause()
        again = app.screen
        assert isinstance(again, ChoiceDialog)
        assert [k for k, _ in again.options] == [k for k, _ in dialog.options]
        assert hint.id in again.closed and again.selected != hint.id
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+y")  # the hint taken, into the editor in one key
        await pilot.pause()
        taken = next(h for h in flagship.hints if h.id == hint.id)
        assert screen.editor.text.split()[:2] == hint_sql(taken.text).split()[:2]


async def test_end_with_confirmation_shows_the_score(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")
        await pilot.pause()
        play = app.screen
        assert isinstance(play, PlayScreen)
        fed: list[ev.Event] = calls_to(play.feed, "add")
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EndScreen)
        assert app.screen.score.max == 100
        # the rest of the night played itself out for the score, without feeding the play
        # screen the end screen replaced (it made the score wait a second on the flagship)
        rest = [e for e in app.screen.events if e.after_team_left]
        assert len(rest) > 100
        assert not [e for e in fed if e.after_team_left]
        assert (app.screen.folder / "events.jsonl").exists()
        await pilot.press("ctrl+q")  # the score screen: one press quits (it is all saved)
        await pilot.pause()
        assert app.return_code == 0


async def test_help_and_palette(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "jump to the next")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert events_of(screen, ev.Wait)


async def test_too_small_shows_a_notice(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(70, 20)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TooSmallScreen)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not isinstance(app.screen, TooSmallScreen)


async def test_help_opened_while_too_small_leaves_no_notice_behind(
        make_app: MakeApp, flagship: Exercise) -> None:
    """Issue 59: F1 at 60x20, the terminal made 120x40 while help was open, Esc: "This one is
    60x20: make it bigger" stayed until another resize."""
    app = make_app(flagship)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TooSmallScreen)
        await pilot.press("f1")
        await pilot.pause()
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, (TooSmallScreen, HelpScreen)), app.screen


async def test_usable_at_80x24(make_app: MakeApp, flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_play(pilot)
        screen = play_screen(app)
        assert screen.has_class("-narrow")
        assert screen.query_one("#world-strip").display
        await pilot.press("f5")
        await settle(pilot)
        assert screen.query_one(ResultsView).table.row_count == 4
        await pilot.press("f3")
        assert screen.query_one("#side").display


async def test_launcher_lists_and_opens_an_exercise(make_app: MakeApp) -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        from raceday.tui.screens.briefing import BriefingScreen
        from raceday.tui.screens.launcher import LauncherScreen

        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        ids = [e.id for e in launcher.entries]
        assert "dynamodb-dns-race" in ids
        assert app.settings.mode == "onboarding"  # the first run: nothing played yet
        await pilot.press("m", "m")
        assert app.settings.mode == "team"
        table = launcher.query_one("#exercises", DataTable)
        target = ids.index("dynamodb-dns-race")
        for _ in range(len(ids)):  # the first run starts on the easiest exercise, not row 0
            if table.cursor_row == target:
                break
            await pilot.press("down" if table.cursor_row < target else "up")
        assert launcher.entries[table.cursor_row].id == "dynamodb-dns-race"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        exercise = app.screen.exercise
        assert exercise is not None and exercise.id == "dynamodb-dns-race"


def test_only_onboarding_names_the_fault() -> None:
    """Solo and team see the symptom (the empty answer), not the scorer's diagnosis."""
    from raceday.engine.snapshot import Answer, WorldView
    from raceday.tui.widgets.feed import feed_text
    from raceday.tui.widgets.world import Alarms, render_compact

    fault = ev.Fault(invariant="empty-answer", sim_time="23:48",
                     fault="An endpoint's DNS answer is empty", rows=(("regional.example",),))
    world = WorldView(answers=(Answer("regional.example", ()),), answers_label="DNS answers")
    for onboarding in (False, True):
        alarms = Alarms(show_faults=onboarding)
        alarms.note(fault)
        console = Console(width=60, record=True, file=io.StringIO())
        console.print(render_world(world, alarms))
        text = console.export_text()
        assert "EMPTY" in text  # the symptom, always
        assert ("Faults" in text) is onboarding
        assert ("1 fault" in render_compact(world, alarms).plain) is onboarding
        assert (feed_text(fault, judge=onboarding) is not None) is onboarding


async def test_the_replays_nights_are_started_ahead_once_the_play_screen_says_open(
        make_app: MakeApp, flagship: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    """The original nights every replay needs are started ahead (a forked child) by the
    runner after the opened screen is drawn, not while the world opens: the first statement
    waits for none of it, and the final replay still finds them begun."""
    from raceday.engine import replay

    said: list[str] = []
    app = make_app(flagship)

    def ahead(session: object) -> None:
        said.append(app.call_from_thread(lambda: status_text(play_screen(app))))

    monkeypatch.setattr(replay, "prepare_ahead", ahead)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        await wait_until(pilot, lambda: bool(said))
        assert len(said) == 1 and "Run a statement (F5)" in said[0]


async def test_a_burst_of_notices_shows_two_at_most(make_app: MakeApp, flagship: Exercise) -> None:
    """Declared toasts piled over the editor for seconds: a newer notice takes the oldest's
    place (what each says is in the feed too)."""
    app = make_app(flagship)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_play(pilot)
        for n in range(5):
            app.notify(f"notice {n}", timeout=30)
        await pilot.pause()
        assert [str(n.message) for n in app._notifications] == ["notice 3", "notice 4"]


async def test_ctrl_q_over_a_dialog_asks_to_end_as_it_does_without_it(
        make_app: MakeApp, flagship: Exercise) -> None:
    """Over F9 (or any dialog) ctrl+q quit at once, with no score: it closes the dialog and
    asks, as the help says; the question it asks is the one a second ctrl+q leaves by."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = play_screen(app)
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert app.screen.yes == "End and score"
        assert not play.revealed  # closing the list took no hint
        assert app.return_code is None
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, EndScreen), timeout=60)


async def test_ctrl_q_when_the_night_is_over_shows_the_score(
        make_app: MakeApp, mini: Exercise) -> None:
    """The night-is-over question, answered with ctrl+q: the score, not an unscored exit."""
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        for _ in range(60):
            if isinstance(app.screen, ConfirmDialog):
                break
            await pilot.press("ctrl+n")
            await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog) and dialog.yes == "See the score"
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, EndScreen), timeout=60)
        assert app.return_code is None
