"""The team screens with Pilot: a seat plays through the host, the projector view and the
facilitator console show the session, and only the console shows the answer key."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import pytest
from team_fixtures import TOKENS, joined, send, until
from textual.binding import Binding
from textual.widgets import Static

from raceday.team.client import Client, View
from raceday.team.host import Host
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events
from raceday.tui.team.console import ConsoleScreen
from raceday.tui.team.console_app import ConsoleApp
from raceday.tui.team.inject_list import InjectListScreen
from raceday.tui.team.seat_screen import SeatScreen
from raceday.tui.team.start_team import SeatApp, seat_settings
from raceday.tui.team.watch import WatchApp, WatchScreen
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.results import ResultsView

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
pytestmark = pytest.mark.tui






def text_of(widget: Static) -> str:
    return str(widget.render())


async def test_a_seat_runs_sql_on_the_host_and_sees_its_rows(running: Host) -> None:
    client = Client(running.folder, TOKENS["responder"], "Rita")
    app = SeatApp(client, seat_settings(client), live_ticks=False)
    async with app.run_test(size=(130, 42)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SeatScreen)
                    and app.screen.snapshot is not None)
        screen = app.screen
        assert isinstance(screen, SeatScreen)
        screen.query_one(SqlEditor).text = "SELECT name FROM endpoint;"
        await pilot.press("f5")
        results = screen.query_one(ResultsView)
        await until(pilot, lambda: results.table.row_count == 4)
        events = read_events(running.folder).events
        [command] = of_kind(events, ev.SeatCommand)
        assert command.player == "Rita" and command.role == "responder"
        assert not screen.check_action("pause", ())  # the facilitator's
        minute = screen.snapshot.minute if screen.snapshot else None
        notes: list[str] = []
        screen.notify = lambda message, **_: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("ctrl+n")  # says whose key it is, and the clock stays
        await pilot.pause()
        assert notes and "facilitator" in notes[-1]
        assert screen.snapshot is not None and screen.snapshot.minute == minute


async def test_a_seat_sees_what_another_seat_does(running: Host) -> None:
    client = Client(running.folder, TOKENS["responder"], "Rita")
    app = SeatApp(client, seat_settings(client), live_ticks=False)
    async with app.run_test(size=(130, 42)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SeatScreen)
                    and app.screen.snapshot is not None)
        ana = Client(running.folder, TOKENS["enactor-a"], "Ana")
        ana.wait(ana.join())
        ana.wait(ana.submit("sql", {"sql": "SELECT 42 AS answer"}))
        screen = app.screen
        assert isinstance(screen, SeatScreen)
        runner = screen.runner
        from raceday.tui.team.seat_runner import SeatRunner

        assert isinstance(runner, SeatRunner)
        await until(pilot, lambda: any(isinstance(e, ev.Statement) and e.role == "enactor-a"
                                       and "42" in e.sql for e in runner.events))


async def test_the_projector_shows_the_clock_and_declarations_without_the_key(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    send(host, rita, "declare", finding="empty-dns-record")
    app = WatchApp(View(host.folder))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, WatchScreen)
                    and bool(app.screen.declarations))
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        shown = text_of(screen.query_one("#watch-declarations", Static))
        assert "responder" in shown and "✓" not in shown
        assert "Rita (responder)" in text_of(screen.query_one("#watch-header", Static))
        assert not screen.query("#editor")


async def test_the_console_shows_seats_the_key_and_sends_a_targeted_inject(running: Host) -> None:
    rita = Client(running.folder, TOKENS["responder"], "Rita")
    rita.wait(rita.join())
    app = ConsoleApp(running, run_host=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen)
                    and app.screen.seated["responder"][2] == "joined")
        screen = app.screen
        assert isinstance(screen, ConsoleScreen)
        key = text_of(screen.query_one("#console-key", Static))
        assert "empty-dns-record" in key and "Race steps" in key
        await pilot.press("i")
        await pilot.pause()
        for ch in "Page":
            await pilot.press(ch)
        await pilot.press("enter", "enter")  # the title, then the (empty) message sends it
        await pilot.pause()
        await pilot.press("down", "enter")  # to: the first role after "everyone"
        await pilot.pause()
        await pilot.press("enter")  # when: now
        await pilot.pause()
        await pilot.press("enter")  # kind: a message
        await until(pilot, lambda: any(isinstance(e, ev.Inject) and e.id == "adhoc"
                                       for e in read_events(running.folder).events))
        [inject] = [e for e in read_events(running.folder).events
                    if isinstance(e, ev.Inject) and e.id == "adhoc"]
        assert inject.title == "Page" and inject.to == (running.roles[0],)
        # an alarm in 15 minutes, to everyone: it waits in the master list, which cancels it
        await pilot.press("i")
        await pilot.pause()
        for ch in "Later":
            await pilot.press(ch)
        await pilot.press("enter", "enter")
        await pilot.pause()
        await pilot.press("enter")  # to everyone
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # in 15 minutes
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # an alarm
        await until(pilot, lambda: any(e.inject.title == "Later"
                                       for e in running.injects.entries))
        [later] = [e for e in running.injects.entries if e.inject.title == "Later"]
        assert later.inject.kind == "alarm" and later.inject.at == running.need().minute + 15
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, InjectListScreen))
        await pilot.press("home", "c")  # the first line: the earliest waiting one, ours
        await until(pilot, lambda: running.injects.get(later.key).state == "cancelled")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        for ch in "ok":
            await pilot.press(ch)
        await pilot.press("enter")
        await until(pilot, lambda: any(isinstance(e, ev.Note) for e in
                                       read_events(running.folder).events))
        await asyncio.sleep(0)


async def test_the_lobby_has_a_ready_check_and_the_console_asks_before_starting_without_it(
        flagship: Any, tmp_path: Any) -> None:
    """Seats say ready with F10 at their own screen; the console lists who is ready, who is
    not and who is missing, asks before a start without them, and everything is recorded."""
    from raceday.engine.clock import Pace
    from raceday.team.seats import seats_from_roles
    from raceday.tui.screens.dialogs import ConfirmDialog

    host = Host(flagship, seats_from_roles(("enactor-a", "enactor-b", "responder")),
                transcripts=tmp_path, pace=Pace.LIVE, speed=5.0, tokens=TOKENS, lobby=True)
    host.start()
    ana = joined(host, "enactor-a", "Ana")
    stop = threading.Event()
    thread = threading.Thread(target=host.run, args=(stop,), daemon=True)
    thread.start()
    rita = Client(host.folder, TOKENS["responder"], "Rita")
    seat_app = SeatApp(rita, seat_settings(rita), live_ticks=False)
    app = ConsoleApp(host, run_host=False)
    try:
        async with seat_app.run_test(size=(130, 42)) as seat_pilot:
            await until(seat_pilot, lambda: isinstance(seat_app.screen, SeatScreen)
                        and seat_app.screen.lobby)
            seat = seat_app.screen
            assert isinstance(seat, SeatScreen)
            assert "F10 (or ctrl+b) when you are ready" in str(seat.sub_title)
            assert "LOBBY" in text_of(seat.query_one("#play-header", Static))
            # F10 says ready in a terminal; a browser may keep F10 for its menu: ctrl+b too
            ready_keys = {k for b in SeatScreen.BINDINGS if isinstance(b, Binding)
                          and b.action == "ready" for k in b.key.split(",")}
            assert ready_keys == {"f10", "ctrl+b"}
            await seat_pilot.press("ctrl+b")
            await until(seat_pilot, lambda: seat.ready)
            assert "READY" in str(seat.sub_title)
            assert "✓ READY" in text_of(seat.query_one("#play-header", Static))
            assert host.seats["responder"].ready and not host.seats["enactor-a"].ready
            watch = WatchApp(View(host.folder))  # the room sees the ready check too
            async with watch.run_test(size=(140, 40)) as watch_pilot:
                await until(watch_pilot, lambda: isinstance(watch.screen, WatchScreen)
                            and "✓ ready" in text_of(watch.screen.query_one("#watch-header",
                                                                            Static)))
                header = text_of(watch.screen.query_one("#watch-header", Static))
                assert "Rita (responder) ✓ ready" in header
                assert "Ana (enactor-a) ✓" not in header and "Ana (enactor-a)" in header
            async with app.run_test(size=(140, 44)) as pilot:
                await until(pilot, lambda: isinstance(app.screen, ConsoleScreen)
                            and app.screen.clock.lobby)
                screen = app.screen
                assert isinstance(screen, ConsoleScreen)
                await until(pilot, lambda: "Rita" in text_of(screen.query_one("#console-seats",
                                                                               Static)))
                seats = text_of(screen.query_one("#console-seats", Static))
                assert "LOBBY" in seats and "Ready: Rita (responder)." in seats
                assert "Not ready: Ana (enactor-a)." in seats and "Missing: enactor-b." in seats
                assert "LOBBY" in text_of(screen.query_one("#console-header", Static))
                await pilot.press("s")  # not everyone is ready: it asks, and No keeps the lobby
                await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
                await pilot.press("n")
                await until(pilot, lambda: app.screen is screen)
                assert host.in_lobby
                await pilot.press("s")
                await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
                await pilot.press("y")
                await until(pilot, lambda: not screen.clock.lobby)
                assert not host.in_lobby
                await until(pilot, lambda: "▶ live" in text_of(seat.query_one("#play-header",
                                                                               Static)))
                refused = send(host, ana, "ready")  # no lobby to be ready in any more
                assert refused.status == "failed" and "has started" in (refused.error or "")
                await pilot.press("v")
                await pilot.pause()
                assert not screen.query_one("#console-private").display
                assert not screen.query_one("#console-feed").display
                assert "SCREEN SHARE" in text_of(screen.query_one("#console-header", Static))
                await until(pilot, lambda: [e.action for e in of_kind(
                    read_events(host.folder).events, ev.Facilitation)] == ["start", "screen"])
                await pilot.press("v")
                await pilot.pause()
                assert screen.query_one("#console-private").display
        events = read_events(host.folder).events
        [ready] = of_kind(events, ev.SeatReady)
        assert (ready.seat, ready.player, ready.ready) == ("responder", "Rita", True)
        [start] = [e for e in of_kind(events, ev.Facilitation) if e.action == "start"]
        assert start.detail.startswith("ready: Rita (responder); not ready: Ana (enactor-a)")
        assert "not ready: Ana (enactor-a)" in start.detail
        assert "missing: enactor-b" in start.detail
    finally:
        stop.set()
        thread.join(timeout=5)
        host.close()


async def test_the_projector_never_shows_a_players_sql_until_the_facilitator_lets_it(
        running: Host) -> None:
    from raceday.tui.widgets.feed import EventFeed

    rita = Client(running.folder, TOKENS["responder"], "Rita")
    rita.wait(rita.join())
    rita.wait(rita.submit("sql", {"sql": "SELECT 4242 AS marker_col"}))
    rita.wait(rita.submit("monitor", {"name": "watch-it",
                                      "sql": "SELECT name FROM endpoint WHERE 9191 = 9191"}))
    app = WatchApp(View(running.folder))

    def feed_text(screen: WatchScreen) -> str:
        return "\n".join(strip.text for strip in screen.query_one("#watch-feed", EventFeed).lines)

    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, WatchScreen)
                    and "ran a statement" in feed_text(app.screen))
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        shown = feed_text(screen) + text_of(screen.query_one("#watch-header", Static))
        assert "4242" not in shown and "9191" not in shown and "SELECT" not in shown
        assert "responder ran a statement" in shown and "watch-it" in shown
        assert "service normal" in text_of(screen.query_one("#watch-header", Static))
        running.call(lambda s: running.show_sql_on_projector(True)).result(5)
        await until(pilot, lambda: "4242" in feed_text(screen))
        running.call(lambda s: running.show_sql_on_projector(False)).result(5)
        await until(pilot, lambda: "4242" not in feed_text(screen))
    actions = [e.detail for e in of_kind(read_events(running.folder).events, ev.Facilitation)]
    assert actions == ["players' SQL shown on the projector",
                       "players' SQL hidden from the projector"]


async def test_the_console_hands_a_seat_to_the_automation_and_back(running: Host) -> None:
    app = ConsoleApp(running, run_host=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        screen = app.screen
        assert isinstance(screen, ConsoleScreen)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("enter")  # the first seat: enactor-a
        await until(pilot, lambda: "enactor-a" in screen.handed)
        assert "AUTO routine" in text_of(screen.query_one("#console-seats", Static))
        assert running.need().handed == {"enactor-a"}
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: not screen.handed)
        assert running.need().handed == set()
    details = [e.detail for e in of_kind(read_events(running.folder).events, ev.Facilitation)
               if e.action == "handover"]
    assert details == ["routine tasks to the automation", "back to the player"]


async def test_the_projector_draws_the_customers_harm_minute_by_minute_without_naming_it(
        flagship: Any, tmp_path: Any) -> None:
    """The harm's minutes are on the projector (a strip, when it began, how long); its words
    (what to look for) only in the hot wash; the players' SQL never."""
    from raceday.team.seats import seats_from_roles

    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path,
                tokens=TOKENS)  # the automation plays the Enactors: the night's fault comes
    host.start()
    stop = threading.Event()
    thread = threading.Thread(target=host.run, args=(stop,), daemon=True)
    thread.start()
    try:
        await _harms_on_the_projector(host)
    finally:
        stop.set()
        thread.join(timeout=5)
        host.close()


async def _harms_on_the_projector(running: Host) -> None:
    rita = Client(running.folder, TOKENS["responder"], "Rita")
    rita.wait(rita.join())
    rita.wait(rita.submit("sql", {"sql": "SELECT 4242 AS marker_col FROM dns_answer"}))
    running.call(lambda s: running.advance_to(120)).result(30)
    events = read_events(running.folder).events
    fault = next(e for e in of_kind(events, ev.Fault) if e.invariant == "empty-answer")
    app = WatchApp(View(running.folder))
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, WatchScreen)
                    and "Customers hurt" in text_of(app.screen.query_one("#watch-harms",
                                                                         Static)))
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        # the host's live clock may tick on past 120 meanwhile: the strip follows the minute
        def says_minutes() -> bool:
            snap = screen.snapshot
            return snap is not None and snap.minute >= 120 and (
                f"{snap.minute - fault.minute} min: since {fault.sim_time}"
                in text_of(screen.query_one("#watch-harms", Static)))

        await until(pilot, says_minutes)
        harms = text_of(screen.query_one("#watch-harms", Static))
        strip = next(line for line in harms.splitlines() if line.startswith("▕"))
        cells = strip.strip("▕▏")
        assert "·" in cells and "█" in cells and cells.rstrip().endswith("█")
        assert cells.index("█") > cells.index("·")  # served first, then hurt
        assert "23:00" in harms and "02:45" in harms
        assert fault.fault not in harms  # its words would tell the players where to look
        room = harms + text_of(screen.query_one("#watch-header", Static))
        assert "4242" not in room and "SELECT" not in room
        running.call(lambda s: running.show_sql_on_projector(True)).result(5)
        await until(pilot, lambda: fault.fault in text_of(screen.query_one("#watch-harms",
                                                                          Static)))
        running.call(lambda s: running.end()).result(60)  # the night plays itself out
        end = running.need().end_minute
        await until(pilot, lambda: f"{end - fault.minute} min: since {fault.sim_time}"
                    in text_of(screen.query_one("#watch-harms", Static)), timeout=30)


async def test_down_down_enter_at_once_sends_the_inject_the_cursor_reached(running: Host) -> None:
    """Enter is a priority key on the master list: it used to read the highlighted line
    before the arrows pressed just ahead of it had moved it, and sent the inject it had
    left (a facilitator's quick Down, Down, Enter sent the wrong page)."""
    from textual import events
    from textual.widgets import OptionList

    from raceday.team.inject_file import PreparedInject
    from raceday.team.inject_plan import PLANNED, SENT

    start = running.need().minute
    mine = tuple(PreparedInject(id=f"drill-{i}", title=f"Drill {i}", at=start + 100 + i)
                 for i in range(3))
    running.call(lambda s: running.plan_injects(mine, "the test")).result(timeout=10)
    app = ConsoleApp(running, run_host=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, InjectListScreen))
        screen = app.screen
        assert isinstance(screen, InjectListScreen)
        ids = {e.key: e.inject.id for e in running.injects.entries}
        order = [ids[k] for k in screen.keys]
        first = order.index("drill-0")
        assert order[first:first + 3] == ["drill-0", "drill-1", "drill-2"]
        screen.query_one(OptionList).highlighted = first
        await pilot.pause()
        for key in ("down", "down", "enter"):  # at once, as a quick hand sends them
            app.post_message(events.Key(key, None))

        def states() -> dict[str, str]:
            return {e.inject.id: e.state for e in running.injects.entries}

        await until(pilot, lambda: any(states()[i.id] != PLANNED for i in mine))
        assert states()["drill-2"] == SENT
        assert states()["drill-0"] == states()["drill-1"] == PLANNED


async def test_the_consoles_skip_never_passes_a_story_task_a_seat_left_due(
        running: Host) -> None:
    """n jumped from 23:48 to 00:03 past Enactor A's overdue apply; the night waited on one
    quiet player. Now n asks, and its first answer has the automation do the task."""
    from raceday.tui.screens.dialogs import ChoiceDialog

    running.call(lambda s: running.advance_to(31)).result(timeout=60)  # 23:31: A's check
    assert "enactor-a-check" in running.need().pending
    app = ConsoleApp(running, run_host=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        screen = app.screen
        assert isinstance(screen, ConsoleScreen)
        await until(pilot, lambda: screen.snapshot is not None and any(
            p.task == "enactor-a-check" for p in screen.snapshot.pending))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        assert "enactor-a: Pick up a plan" in dialog.note
        assert running.need().minute == 31  # nothing skipped yet
        await pilot.press("enter")  # the automation does it, then the skip
        await until(pilot, lambda: "enactor-a-check" not in running.need().pending
                    and running.need().minute > 31)
    actions = [e.action for e in of_kind(read_events(running.folder).events, ev.Facilitation)]
    assert actions[-2:] == ["automate", "skip"]


async def test_the_consoles_skip_may_leave_a_step_unplayed_and_says_so(running: Host) -> None:
    """Its last answer lets the night go on without the step: recorded as not played, so the
    judge never charges the team for the fault it would have brought."""
    from raceday.tui.screens.dialogs import ChoiceDialog

    running.call(lambda s: running.advance_to(31)).result(timeout=60)  # 23:31: A's check
    app = ConsoleApp(running, run_host=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        screen = app.screen
        assert isinstance(screen, ConsoleScreen)
        await until(pilot, lambda: screen.snapshot is not None and any(
            p.task == "enactor-a-check" for p in screen.snapshot.pending))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        await pilot.press("end", "enter")  # the last choice: skip, not played tonight
        await until(pilot, lambda: "enactor-a-check" not in running.need().pending
                    and running.need().minute > 31)
    skipped = [e for e in of_kind(read_events(running.folder).events, ev.Facilitation)
               if e.action == "skip-step"]
    assert [e.detail for e in skipped] == ["enactor-a-check"]
    assert running.need().facts.skipped_steps == ["enactor-a-check"]
