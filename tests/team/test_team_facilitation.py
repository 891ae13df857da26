"""The facilitator steers the night: a lobby holds the clock, every action is recorded, skip
stops where a seat's task falls due."""

from __future__ import annotations

from pathlib import Path

from team_fixtures import TOKENS, joined

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.team.client import View
from raceday.team.due_work import OVERDUE_MINUTES, due_work
from raceday.team.group import Teams, TeamSpec
from raceday.team.host import Host
from raceday.team.seats import SeatSpec, seats_from_roles
from raceday.team.start_host import game_day_speed
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.transcript.render import describe

SEATS = ("enactor-a", "enactor-b", "responder")


def _live_host(flagship: Exercise, tmp_path: Path, wall: list[float], *,
               lobby: bool = True) -> Host:
    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path, pace=Pace.LIVE,
                speed=60.0, wall=lambda: wall[0], tokens=TOKENS, lobby=lobby)
    host.grace = None  # nobody has joined: the seats' due work waits for the facilitator
    host.start()
    return host


def _facilitation(host: Host) -> list[ev.Facilitation]:
    return [e for e in read_events(host.folder).events if isinstance(e, ev.Facilitation)]


def test_the_lobby_holds_the_clock_until_the_facilitator_starts_it(
        flagship: Exercise, tmp_path: Path) -> None:
    wall = [100.0]
    host = _live_host(flagship, tmp_path, wall)
    joined(host, "responder", "Rita")
    wall[0] += 600  # ten real minutes in the lobby: the night has not begun
    host.pump()
    assert host.need().minute == 0
    clock = View(host.folder).clock()
    assert clock.lobby and clock.paused
    host.pause()  # nothing to pause in the lobby: nothing recorded
    host.resume()  # space in the lobby starts the night
    wall[0] += 3
    host.pump()
    assert host.need().minute == 3 and not View(host.folder).clock().lobby
    [start] = _facilitation(host)
    assert start.action == "start" and start.sim_time == "23:00"
    assert "Rita (responder)" in start.detail and "missing: enactor-a, enactor-b" in start.detail
    host.end()
    host.close()


def test_pause_resume_speed_skip_hint_and_screen_sharing_are_each_an_event(
        flagship: Exercise, tmp_path: Path) -> None:
    wall = [100.0]
    host = _live_host(flagship, tmp_path, wall, lobby=False)
    host.pause()
    host.pause()  # already paused: one event, not two
    host.resume()
    host.set_speed(5)
    host.skip()
    host.give_hint(flagship.hints[0].id)
    host.screen_share(True)
    host.need().send_inject("Status page", "Customers report errors")
    actions = [e.action for e in _facilitation(host)]
    assert actions == ["pause", "resume", "speed", "skip", "hint", "screen"]
    words = [describe(e) for e in _facilitation(host)]
    assert words[2].startswith("facilitator: speed set to 5x (the rest of the night lasts 45 min")
    assert words[4] == f"facilitator: hint {flagship.hints[0].id} given"
    events = read_events(host.folder).events
    assert any(isinstance(e, ev.Hint) and e.id == flagship.hints[0].id for e in events)
    assert any(isinstance(e, ev.Inject) and e.source == "facilitator" for e in events)
    host.end()
    host.close()


def test_skip_stops_where_a_seats_task_falls_due_before_the_next_inject(
        flagship: Exercise, tmp_path: Path) -> None:
    wall = [100.0]
    host = _live_host(flagship, tmp_path, wall, lobby=False)
    session = host.need()
    for _ in range(6):
        before = session.minute
        task_at, task = session.next_task_due(host.roles)
        inject_at = session.next_inject_minute()
        host.skip()
        assert task_at is not None and task is not None
        if inject_at is None or task_at < inject_at:
            assert session.minute == task_at, (before, task.id)
            assert any(p.task.id == task.id for p in session.pending.values())
        else:
            assert session.minute <= inject_at
    skips = [e for e in _facilitation(host) if e.action == "skip"]
    assert len(skips) == 6
    assert any("task falls due" in e.detail for e in skips)
    host.end()
    host.close()


def test_a_groups_lobby_starts_every_team_at_once_and_records_it_in_each(
        flagship: Exercise, tmp_path: Path) -> None:
    wall = [100.0]
    seats = (SeatSpec("responder", "responder"),)
    group = Teams(flagship, [TeamSpec("red", seats), TeamSpec("blue", seats)],
                  transcripts=tmp_path, pace=Pace.LIVE, speed=60.0, wall=lambda: wall[0],
                  lobby=True)
    group.start()
    wall[0] += 30
    group.pump()
    assert all(h.need().minute == 0 for h in group.hosts.values())
    assert group.start_clock() and not group.start_clock()
    group.pause()
    group.set_speed(10)
    group.resume()
    wall[0] += 6
    group.pump()
    assert all(h.need().minute == 1 for h in group.hosts.values())
    for host in group.hosts.values():
        assert [e.action for e in _facilitation(host)] == ["start", "pause", "speed", "resume"]
    group.end()
    group.close()


def test_the_game_days_speed_follows_the_exercises_length_unless_told(
        flagship: Exercise) -> None:
    assert flagship.length == 45 and flagship.clock.length_minutes == 225
    assert game_day_speed(flagship, None, None) == 5.0
    assert game_day_speed(flagship, None, 90) == 2.5
    assert game_day_speed(flagship, 60.0, 90) == 60.0


def test_the_console_lists_each_seats_due_and_overdue_work(
        flagship: Exercise, tmp_path: Path) -> None:
    wall = [100.0]
    host = _live_host(flagship, tmp_path, wall, lobby=False)
    host.skip()  # to the first time a seat's task falls due
    due_at = host.need().minute
    host.pump()
    assert host.snapshot is not None
    roles = {name: seat.role for name, seat in host.seats.items()}
    work = due_work(host.snapshot, flagship, roles)
    fresh = [p for p in host.need().pending.values() if p.due == due_at]
    assert fresh, "the skip stopped where a task fell due"
    [(seat, first)] = [(s, w) for s, ws in work.items() for w in ws
                       if w.task == fresh[0].task.id]
    assert first.due == host.need().clock_face
    host.advance_to(due_at + OVERDUE_MINUTES + 10)
    host.pump()
    assert host.snapshot is not None
    late = due_work(host.snapshot, flagship, roles)[seat]
    mine = next(w for w in late if w.task == first.task)
    assert mine.overdue and mine.late >= OVERDUE_MINUTES + 10
    assert mine.words().startswith(f"OVERDUE since {host.need().time_of(fresh[0].since)} ")
    assert late[0].late >= late[-1].late
    host.end()
    host.close()


def test_join_lines_name_the_session_by_its_absolute_path_and_are_kept_in_join_txt(
        flagship: Exercise) -> None:
    from raceday.team.host_loop import join_text, save_join_text

    host = Host(flagship, seats_from_roles(SEATS), transcripts=Path("relative"),
                tokens=TOKENS)  # the tests stand in their own folder (conftest)
    host.start()
    lines = host.join_lines()
    assert len(lines) == len(SEATS)
    for line, seat in zip(lines, SEATS, strict=True):
        words = line.split()
        assert Path(words[2]).is_absolute() and Path(words[2]) == host.folder.resolve()
        assert words[words.index("--token") + 1] == TOKENS[seat]
    path = save_join_text(host.folder, join_text(host))
    assert path.name == "join.txt" and path.stat().st_mode & 0o777 == 0o600
    kept = path.read_text(encoding="utf-8").splitlines()
    assert all(line.strip() in [k.strip() for k in kept] for line in lines)
    host.end()
    host.close()


def test_a_handed_over_seats_routine_tasks_run_and_its_story_task_waits_for_the_player(
        flagship: Exercise, tmp_path: Path) -> None:
    from raceday.engine.resume import resume_session

    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path, pace=Pace.TURNS,
                tokens=TOKENS)
    host.start()
    session = host.need()
    host.hand_over("enactor-a", True)
    host.advance_to(40)  # 23:31 the check (a story task), from 23:34 the back-off every 3 min
    events = read_events(host.folder).events
    ran = {e.task for e in events if isinstance(e, ev.Automation) and e.role == "enactor-a"}
    assert "enactor-a-backoff" in ran and "enactor-a-check" not in ran
    assert "enactor-a-check" in session.pending  # the story task waits for the player
    assert "enactor-a-backoff" not in session.pending
    host.hand_over("enactor-a", False)
    host.advance_to(44)  # the back-off falls due again at 23:43: the player's now
    assert "enactor-a-backoff" in session.pending
    handovers = [describe(e) for e in _facilitation(host) if e.action == "handover"]
    assert handovers == ["facilitator: enactor-a: routine tasks to the automation",
                         "facilitator: enactor-a: back to the player"]
    host.close()
    session.close()
    # the resumed session hands the seat over at the same minute as the original did
    again = resume_session(host.folder, flagship).session
    assert again.handed == set() and "enactor-a-backoff" in again.pending
    assert again.minute == session.minute
    again.close()


def test_an_inject_planned_on_a_harm_arrives_only_when_the_harm_holds(
        flagship: Exercise, tmp_path: Path) -> None:
    import pytest

    from raceday.engine.session import SessionError

    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path,
                pace=Pace.TURNS)
    host.start()
    session = host.need()
    session.schedule_on_fault("Customer escalation", "A large customer calls the TAM",
                              "empty-answer", after=2, to=("responder",), kind="status")
    with pytest.raises(SessionError, match="unknown harm 'nope'; harms are empty-answer"):
        session.schedule_on_fault("x", "", "nope")

    def sent() -> list[ev.Inject]:
        return [e for e in read_events(host.folder).events
                if isinstance(e, ev.Inject) and e.title == "Customer escalation"]

    host.advance_to(40)
    assert session.healthy and not sent()  # the harm does not hold: nothing arrives
    host.advance_to(120)
    fault = next(e for e in read_events(host.folder).events if isinstance(e, ev.Fault)
                 and e.invariant == "empty-answer")
    [inject] = sent()
    assert inject.minute == fault.minute + 2 and inject.to == ("responder",)
    assert inject.inject_kind == "status" and inject.source == "facilitator"
    session.schedule_on_fault("Now", "", "empty-answer")  # it holds already: at once
    assert [e.title for e in read_events(host.folder).events
            if isinstance(e, ev.Inject)][-1] == "Now"
    [planned, _] = [e for e in _facilitation(host) if e.action == "schedule"]
    assert describe(planned) == ("facilitator: status planned for when empty-answer holds, "
                                 "2 min into it, to responder: Customer escalation")
    host.end()
    host.close()


def test_a_hint_given_to_one_seat_reaches_that_seat_alone_and_the_team_pays(
        flagship: Exercise, tmp_path: Path) -> None:
    from raceday.team.client import Client

    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path, pace=Pace.TURNS,
                tokens=TOKENS)
    host.start()
    hint = flagship.hints[0]
    host.give_hint(hint.id, "responder")
    host.pump()
    [given] = [e for e in read_events(host.folder).events if isinstance(e, ev.Hint)]
    assert given.to == ("responder",) and given.cost == hint.cost
    assert (hint.cost, hint.id) in host.need().facts.hints  # the team pays for it
    rita = Client(host.folder, TOKENS["responder"], "Rita")
    seen = [e for e in rita.new_events() if isinstance(e, ev.Hint)]
    assert seen and seen[0].to == ("responder",)
    from types import SimpleNamespace

    from raceday.tui.team.seat_runner import SeatRunner

    def shown_at(role: str) -> bool:
        return SeatRunner._shows(SimpleNamespace(client=SimpleNamespace(role=role)),  # type: ignore[arg-type]
                                 given)

    assert shown_at("responder") and not shown_at("enactor-a")
    rita.close()
    host.end()
    host.close()


def test_the_fault_step_held_waits_for_the_facilitators_release(
        flagship: Exercise, tmp_path: Path) -> None:
    """A human Enactor is late: the facilitator holds the night's fault step, and the story
    goes on when they release it; both are recorded."""
    host = Host(flagship, seats_from_roles(("responder",)), transcripts=tmp_path,
                pace=Pace.TURNS, tokens=TOKENS)
    host.start()
    task = host.fault_task()
    assert task == "enactor-a-apply"
    host.hold_fault(True)
    host.advance_to(70)  # 00:10: at 23:48 the stale apply would have run
    events = host.need().events
    assert not any(isinstance(e, ev.Statement) and e.role == "enactor-a"
                   and "SET rollback_plan_id = active_plan_id, active_plan_id" in e.sql
                   for e in events)
    assert not any(isinstance(e, ev.Fault) for e in events)
    host.hold_fault(False)
    host.advance_to(72)
    applied = [e for e in host.need().events if isinstance(e, ev.Statement)
               and e.role == "enactor-a" and e.automated and e.minute > 70
               and "rollback_plan_id = active_plan_id, active_plan_id" in e.sql]
    assert applied and applied[0].sim_time == "00:11"  # the next minute after the release
    host.pump()
    players, facilitator = View(host.folder).new_events(), View(host.folder).new_events(True)
    assert not any(isinstance(e, ev.Facilitation) for e in players)  # it would spoil the night
    assert [e.action for e in facilitator if isinstance(e, ev.Facilitation)] == [
        "hold", "release"]
    words = [describe(e) for e in _facilitation(host)]
    assert words == ["facilitator: held enactor-a's task 'Finish applying your plan to the "
                     "regional endpoint' (it runs when released)",
                     "facilitator: released enactor-a's task 'Finish applying your plan to the "
                     "regional endpoint'"]
    host.hold_fault(True)
    host.end()  # a hold left on is released: the rest of the night plays as written
    assert [e.action for e in _facilitation(host)][-2:] == ["hold", "release"]
    host.close()


def test_skip_does_not_stop_for_routine_work_handed_to_the_automation(
        flagship: Exercise, tmp_path: Path) -> None:
    """Both Enactor seats handed to the automation: skip passes their routine tasks (the
    automation runs them every few minutes) and stops at the responder's injects and at
    Enactor A's story tasks instead."""
    wall = [100.0]
    host = _live_host(flagship, tmp_path, wall, lobby=False)
    for seat in ("enactor-a", "enactor-b"):
        host.hand_over(seat, True)
    routine = [t.title for t in flagship.tasks if t.every is not None
               and t.role in ("enactor-a", "enactor-b")]
    assert routine
    for _ in range(3):
        host.skip()
    skips = [e.detail for e in _facilitation(host) if e.action == "skip"]
    assert skips[0].startswith("23:31, when enactor-a's task falls due"), skips
    assert not any(title in detail for detail in skips for title in routine), skips
    assert host.need().minute > 20  # not two minutes at a time, as the routine tasks fall due
    host.end()
    host.close()


def test_the_console_leaves_out_a_task_the_seats_own_panel_has_ticked(
        flagship: Exercise, tmp_path: Path) -> None:
    """A task without done_when is handled, as the player's panel shows it, once the seat
    has run a read (a reading task) or written its table (a writing task) since it fell
    due: the console does not call it overdue any more."""
    from team_fixtures import send

    from raceday.engine.task_progress import TaskProgress

    wall = [100.0]
    host = _live_host(flagship, tmp_path, wall, lobby=False)
    ana = joined(host, "enactor-a", "Ana")
    roles = {name: seat.role for name, seat in host.seats.items()}

    def open_tasks() -> set[str]:
        host.pump()
        assert host.snapshot is not None
        handled = TaskProgress(flagship)
        for event in read_events(host.folder).events:
            handled.observe(event)
        return {w.task for w in due_work(host.snapshot, flagship, roles,
                                         handled.handled())["enactor-a"]}

    host.advance_to(41)  # 23:41: the 23:31 check is overdue
    assert "enactor-a-check" in open_tasks()
    assert send(host, ana, "sql", sql="SELECT id FROM plan ORDER BY id DESC LIMIT 1").status \
        == "done"
    assert "enactor-a-check" not in open_tasks()  # the check only reads: a read handles it
    host.advance_to(55)  # 23:55: the 23:48 apply is open, and a read does not handle it
    send(host, ana, "sql", sql="SELECT name FROM endpoint")
    assert "enactor-a-apply" in open_tasks()
    host.end()
    host.close()


def test_a_story_task_a_seat_left_due_is_done_by_the_automation_when_the_facilitator_says(
        flagship: Exercise, tmp_path: Path) -> None:
    """One quiet player stalled a game day: Enactor A's seat ran only a SELECT at 23:48, and
    no key could make the night go on. `automate_task` (the console's a, or its n) has the
    automation do it as it would have: the fault comes at 23:48, as that night."""
    from raceday.engine.resume import resume_session

    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path, pace=Pace.TURNS,
                tokens=TOKENS)
    host.start()
    session = host.need()
    for seat in ("enactor-a", "enactor-b"):
        host.hand_over(seat, True)  # their routine work is the automation's
    host.advance_to(31)
    host.automate_task("enactor-a-check")  # 23:31: the check, as the automation does it
    host.advance_to(48)
    assert list(session.pending) == ["enactor-a-apply"]  # the quiet seat's story task
    assert session.facts.fault_started is None
    host.automate_task("enactor-a-apply")
    assert "enactor-a-apply" not in session.pending
    applied = [e for e in read_events(host.folder).events
               if isinstance(e, ev.Automation) and e.task == "enactor-a-apply"]
    assert [a.outcome for a in applied] == ["applied"]
    host.advance_to(49)
    assert session.facts.fault_started == 48  # 23:48, as that night
    said = [describe(e) for e in _facilitation(host) if e.action == "automate"]
    assert said[-1] == ("facilitator: the automation did enactor-a's task 'enactor-a-apply', "
                        "left due by the seat"), said
    host.close()
    session.close()
    again = resume_session(host.folder, flagship).session
    assert again.facts.fault_started == 48 and "enactor-a-apply" not in again.pending
    again.close()
