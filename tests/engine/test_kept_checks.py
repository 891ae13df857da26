"""The world's checks keep their answer while the tables they read are not written: what
the players see must be what running every check after every write would show."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from engine_fixtures import tiny_exercise

from raceday.engine.session import Session
from raceday.exercise.model import Invariant, Statement, Task
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind

MakeSession = Callable[..., Session]
E = TypeVar("E", bound=ev.Event)

LOST = "SELECT 1 FROM config WHERE key = 'limit' AND value = 10 AND version > 1"


def kinds(session: Session, kind: type[E]) -> list[E]:
    return list(of_kind(session.events, kind))


def automation(*steps: tuple[str, int, str]) -> dict[str, object]:
    """Writer B's tasks: (id, minute, sql) each, one statement, in this order."""
    return {
        "statements": tuple(Statement(i, "writer-b", sql) for i, _m, sql in steps),
        "tasks": tuple(Task(i, "writer-b", m, i, statements=(i,)) for i, m, _sql in steps),
    }


def test_a_fault_that_appears_and_clears_in_one_minute_is_recorded(
        make_session: MakeSession) -> None:
    session = make_session(tiny_exercise(**automation(
        ("break", 2, "UPDATE config SET value = 10, version = 2 WHERE key = 'limit'"),
        ("aside", 2, "UPDATE automation SET enabled = 1"),  # a table no check of it reads
        ("mend", 2, "UPDATE config SET value = 11 WHERE key = 'limit'"),
        ("again", 2, "UPDATE config SET value = 10 WHERE key = 'limit'"))))
    session.advance_to(3)
    faults, clears = kinds(session, ev.Fault), kinds(session, ev.InvariantClear)
    assert [(f.invariant, f.sim_time, f.relapse) for f in faults] == [
        ("lost", "00:02", False), ("lost", "00:02", True)]
    assert [(c.invariant, c.sim_time) for c in clears] == [("lost", "00:02")]
    order = [e.seq for e in session.events if isinstance(e, (ev.Fault, ev.InvariantClear))]
    assert order == sorted(order) and len(order) == 3


def test_a_players_write_to_a_table_a_check_reads_is_checked_at_once(
        make_session: MakeSession) -> None:
    session = make_session()
    session.execute("operator", "SELECT * FROM config")  # the check's answer is kept now
    session.execute("operator", "UPDATE automation SET enabled = 1")
    assert not kinds(session, ev.Fault)
    session.execute("operator", "UPDATE config SET value = 10, version = 2 WHERE key = 'limit'")
    fault = kinds(session, ev.Fault)[0]
    assert (fault.invariant, fault.sim_time) == ("lost", "00:02")
    assert session.facts.caused_by == ("operator", "UPDATE config SET value = 10, version = 2 "
                                                   "WHERE key = 'limit'")


def test_a_check_through_a_view_sees_writes_to_the_views_table(
        make_session: MakeSession) -> None:
    world = tiny_exercise().world_sql + "CREATE VIEW limits AS SELECT * FROM config;\n"
    session = make_session(tiny_exercise(world_sql=world, invariants=(
        Invariant("lost", "The limit went back to 10",
                  "SELECT 1 FROM limits WHERE value = 10 AND version > 1"),)))
    session.execute("operator", "UPDATE automation SET enabled = 1")
    assert not kinds(session, ev.Fault)
    session.execute("operator", "UPDATE config SET value = 10, version = 2 WHERE key = 'limit'")
    assert [f.sim_time for f in kinds(session, ev.Fault)] == ["00:01"]


def test_a_view_the_team_redefines_is_read_anew(make_session: MakeSession) -> None:
    world = tiny_exercise().world_sql + "CREATE VIEW limits AS SELECT * FROM config;\n"
    session = make_session(tiny_exercise(world_sql=world, invariants=(
        Invariant("lost", "The limit went back to 10",
                  "SELECT 1 FROM limits WHERE value = 20"),)))
    assert not kinds(session, ev.Fault)
    # the same tables, another answer: only the schema changed
    session.execute("operator", "DROP VIEW limits; CREATE VIEW limits AS "
                                "SELECT key, 20 AS value, version FROM config")
    assert [f.invariant for f in kinds(session, ev.Fault)] == ["lost"]


def test_a_held_transactions_writes_are_checked_when_it_commits(
        make_session: MakeSession) -> None:
    session = make_session(tiny_exercise(
        statements=(Statement("begin", "writer-b", "BEGIN IMMEDIATE"),
                    Statement("break", "writer-b",
                              "UPDATE config SET value = 10, version = 2 WHERE key = 'limit'"),
                    Statement("commit", "writer-b", "COMMIT")),
        tasks=(Task("open", "writer-b", 2, "Open and write", statements=("begin", "break")),
               Task("close", "writer-b", 4, "Commit", statements=("commit",)))))
    session.save_monitor("operator", "went-back",
                         "SELECT key FROM config WHERE value = 10 AND version > 1")
    session.advance_to(6)
    assert [f.sim_time for f in kinds(session, ev.Fault)] == ["00:04"]
    assert [a.sim_time for a in kinds(session, ev.Alert)] == ["00:04"]


def test_a_write_made_by_the_teams_trigger_is_checked(make_session: MakeSession) -> None:
    session = make_session()
    session.execute("operator", "CREATE TRIGGER flip AFTER UPDATE ON automation BEGIN "
                                "UPDATE config SET value = 10, version = 2; END")
    session.execute("operator", "SELECT * FROM config")
    assert not kinds(session, ev.Fault)
    session.execute("operator", "UPDATE automation SET enabled = 1")  # config, through it
    assert [f.sim_time for f in kinds(session, ev.Fault)] == ["00:02"]


def test_a_statement_that_failed_half_way_is_checked_where_it_kept_rows(
        make_session: MakeSession) -> None:
    """SQLite keeps the rows a statement changed before a RAISE(FAIL): the invariant reading
    them is asked again, and the harm they made is seen."""
    session = make_session()
    session.execute("operator", "INSERT INTO config VALUES ('zz', 1, 1)")
    session.execute("operator", "CREATE TRIGGER half BEFORE UPDATE ON config "
                                "WHEN old.key = 'zz' BEGIN SELECT RAISE(FAIL, 'not zz'); END")
    assert not kinds(session, ev.Fault)  # the invariant's answer is kept now
    session.execute("operator", "UPDATE config SET value = 10, version = 2")
    failed = kinds(session, ev.Statement)[-1]
    assert failed.error == "not zz"  # 'limit' was changed before 'zz' failed, and kept
    assert [f.invariant for f in kinds(session, ev.Fault)] == ["lost"]


def test_a_failed_statement_leaves_the_answers_that_read_elsewhere_kept(
        make_session: MakeSession) -> None:
    """A failure changes at most the tables its statement writes: a check of another table
    is not asked again (on PostgreSQL each ask is a round trip; the flagship's refused
    clean-ups had every check asked after each)."""
    session = make_session()
    asked: list[str] = []
    app_query = session.store.app_query

    def counted(sql: str, params: Mapping[str, Any] | None = None
                ) -> tuple[tuple[str, ...], list[Any]]:
        asked.append(sql)
        return app_query(sql, params)

    session.store.app_query = counted  # type: ignore[method-assign]
    stopped = next(m.sql for m in session.exercise.milestones if m.id == "stopped")
    session.execute("operator", "UPDATE config SET version = 3")
    asked.clear()
    result = session.execute("operator", "UPDATE config SET value = NULL")
    assert not result[-1].ok
    assert stopped not in asked  # it reads automation, which the failure could not change
    session.execute("operator", "UPDATE automation SET enabled = 0")
    assert stopped in asked
    assert [m.id for m in kinds(session, ev.Milestone)] == ["stopped"]
