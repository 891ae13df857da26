"""What a player still has to do, read off the session's events (engine.task_progress): the
play screen and a team seat both show it, so it is decided once, here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine_fixtures import tiny_exercise

from raceday.engine.session import Session
from raceday.engine.task_progress import TaskProgress, task_reads, task_writes
from raceday.exercise.model import Exercise, Task

PLAYERS = ("operator", "writer-b")


def _progress(session: Session) -> TaskProgress:
    progress = TaskProgress(session.exercise)
    for event in session.events:
        progress.observe(event)
    return progress


def _pending(session: Session, progress: TaskProgress) -> list[str]:
    from raceday.engine.snapshot import PendingView

    views = [PendingView(p.task.id, p.task.role, p.task.title, "", "", False)
             for p in session.pending.values()]
    return [p.task for p in progress.outstanding("writer-b", views)]


def test_a_task_that_writes_is_handled_by_a_write_to_its_table_after_it_fell_due(
        make_session: Callable[..., Session]) -> None:
    session = make_session(players=PLAYERS)
    session.start()
    session.execute("writer-b", "UPDATE config SET version = version WHERE key = 'limit'")
    session.advance_to(5)  # "write" falls due now: the write before it does not count
    assert "write" in _pending(session, _progress(session))

    session.execute("writer-b", "SELECT value FROM config")  # a read is not its write
    assert "write" in _pending(session, _progress(session))

    session.execute("operator", "UPDATE config SET version = version WHERE key = 'limit'")
    assert "write" in _pending(session, _progress(session))  # another role's write

    session.execute("writer-b", "UPDATE config SET version = version WHERE key = 'nothing'")
    progress = _progress(session)  # 0 rows changed still counts: it wrote config
    assert "write" in progress.handled()
    assert "write" not in _pending(session, progress)


def test_a_task_that_only_reads_is_handled_by_its_role_reading_what_it_reads(
        make_session: Callable[..., Session]) -> None:
    session = make_session(players=PLAYERS)
    session.start()
    session.advance_to(1)
    assert _pending(session, _progress(session)) == ["read"]
    session.execute("writer-b", "SELECT 1")  # looks at nothing: the hot seat's lock task
    assert _pending(session, _progress(session)) == ["read"]  # was ticked by this
    session.execute("operator", "SELECT value FROM config")  # another role's look
    assert _pending(session, _progress(session)) == ["read"]
    session.execute("writer-b", "SELECT c.value FROM automation a JOIN Config c ON 1")
    assert _pending(session, _progress(session)) == []


def test_a_task_that_falls_due_again_unhandled_counts_its_repeats(
        make_session: Callable[..., Session]) -> None:
    again = replace(tiny_exercise(), tasks=(
        Task("read", "writer-b", 1, "Read the limit", statements=("b-read",), every=2,
             until=9),))
    session = make_session(again, players=PLAYERS)
    session.start()
    session.advance_to(5)  # due at 1, 3 and 5, never handled
    assert _progress(session).repeats == {"read": 3}
    session.execute("writer-b", "SELECT value FROM config")
    session.advance_to(7)  # handled since: it counts afresh
    assert _progress(session).repeats == {"read": 1}


def test_a_guard_task_closes_once_when_its_steps_are_shown_stopped_and_opens_again() -> None:
    exercise = _with_guard_task(tiny_exercise())
    progress = TaskProgress(exercise)
    assert progress.guards_shown(["other-step"]) == []
    closed = progress.guards_shown(["stale-write"])
    assert [t.id for t in closed] == ["guard"]
    assert "guard" in progress.handled()
    assert progress.guards_shown(["stale-write"]) == []  # said once, not on every check
    progress.guards_shown([])  # the guard was dropped: the task is open again
    assert "guard" not in progress.handled()


def test_the_tables_a_task_writes_are_read_off_its_automation_sql() -> None:
    task = Task("t", "writer-b", 1, "T", statements=("a", "b", "c"))
    sql = {"a": "UPDATE OR IGNORE Config SET value = 1",
           "b": "INSERT INTO \"job_run\" VALUES (1); DELETE FROM lease",
           "c": "SELECT * FROM host"}
    assert task_writes(task, sql) == {"config", "job_run", "lease"}
    assert task_writes(Task("r", "writer-b", 1, "R", statements=("c",)), sql) == set()
    assert task_reads(Task("r", "writer-b", 1, "R", statements=("c",)), sql) == {"host"}


def _with_guard_task(exercise: Exercise) -> Exercise:
    guard = Task("guard", "operator", 4, "Guard the write", proves=("stale-write",),
                 done_when="SELECT 1 FROM config WHERE version > 100")
    return replace(exercise, tasks=(*exercise.tasks, guard))
