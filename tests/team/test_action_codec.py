"""A seat's action crosses to its host as the action's own record (`action_to_record`), read
back as the seat's role whatever the record says; its results come back whole."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from team_fixtures import TOKENS, joined, send

from raceday.engine.actions import (
    Declare,
    RemoveMonitor,
    RevealHint,
    RunSql,
    SaveMonitor,
    Wait,
    action_to_record,
)
from raceday.exercise.model import Exercise
from raceday.store.results import StatementResult
from raceday.team import wire
from raceday.team.client import Client, results_of
from raceday.team.host import Host
from raceday.team.seats import sign
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events
from raceday.tui.messages import ActionDone, JobFailed, StatementsRan
from raceday.tui.team.seat_runner import SeatRunner


def forged(host: Host, client: Client, kind: str, record: dict[str, Any]) -> int:
    """A command signed with the seat's own token, its record written by hand (a player who
    holds the token and not our client)."""
    body = json.dumps(record)
    nonce = time.time_ns() // 1000
    mac = sign(TOKENS[client.seat], client.seat, nonce, kind, body, "")
    command = client.db.submit(client.seat, nonce, kind, body, mac, time.time())
    host.pump()
    return command


def players_statements(host: Host) -> list[ev.Statement]:
    return [e for e in of_kind(read_events(host.folder).events, ev.Statement) if not e.automated]


def test_a_seat_that_forges_another_role_in_its_action_s_record_never_acts_as_it(
        host: Host) -> None:
    ana = joined(host, "enactor-a", "Ana")
    record = action_to_record(RunSql(role="responder", sql="DELETE FROM plan"))
    row = ana.wait(forged(host, ana, "sql", record))
    assert row.status == "refused" and "given role enactor-a, not responder" in (row.error or "")
    [refused] = of_kind(read_events(host.folder).events, ev.CommandRefused)
    assert (refused.seat, refused.role, refused.action) == ("enactor-a", "enactor-a", "sql")
    assert players_statements(host) == []
    # a record that names no role is the seat's own: done as enactor-a, never as another
    row = ana.wait(forged(host, ana, "sql", {"kind": "sql", "sql": "SELECT 1"}))
    assert row.status == "done"
    assert [s.role for s in players_statements(host)] == ["enactor-a"]


@pytest.mark.parametrize("kind, record, words", [
    ("monitor", action_to_record(RunSql(role="enactor-a", sql="SELECT 1")),
     "the command is 'monitor' but its action is 'sql'"),
    ("sql", {"kind": "sql", "role": "enactor-a", "sql": 7},
     "the action cannot be read: sql.sql: expected text"),
    ("declare", {"kind": "declare", "role": "enactor-a", "finding": "x", "as": "root"},
     "declare: unknown field 'as'"),
    ("hint", action_to_record(RevealHint(role="enactor-a", to=("responder",))),
     "only the facilitator gives a hint to chosen roles"),
    ("wait", action_to_record(Wait(until=30)), "a seat may not 'wait'"),
])
def test_a_record_the_seat_s_client_would_not_send_is_refused_in_one_line(
        host: Host, kind: str, record: dict[str, Any], words: str) -> None:
    ana = joined(host, "enactor-a", "Ana")
    row = ana.wait(forged(host, ana, kind, record))
    assert row.status == "refused" and words in (row.error or "")
    assert "\n" not in (row.error or "")
    assert players_statements(host) == []


def test_a_command_in_the_form_seats_sent_before_the_codec_still_runs(host: Host) -> None:
    """A session resumed from before (or a seat of an older raceday) sends the action's
    fields with the seat's role and no `kind`: the command's own kind says which."""
    rita = joined(host, "responder", "Rita")
    assert send(host, rita, "sql", sql="SELECT 1").status == "done"
    assert send(host, rita, "monitor", name="m", sql="SELECT 1").status == "done"
    assert send(host, rita, "remove_monitor", name="m").status == "done"
    assert send(host, rita, "hint", hint=None).status == "done"
    assert rita.history() == ["SELECT 1"]


def test_reads_kept_in_and_a_blob_survive_the_wire(host: Host) -> None:
    rita = joined(host, "responder", "Rita")

    def ran(sql: str) -> StatementResult:
        command = rita.send(RunSql(role="responder", sql=sql))
        host.pump()
        [result] = results_of(rita.wait(command))
        return result

    assert ran("SELECT name FROM endpoint LIMIT 1").reads == ("endpoint",)
    assert ran("SELECT x'00ff' AS b").rows == ((b"\x00\xff",),)
    assert ran("INSERT INTO endpoint(name) VALUES ('dup.example')").ok
    again = ran("INSERT INTO endpoint(name) VALUES ('dup.example')")
    assert again.error_kind == "constraint" and again.kept_in == ("endpoint",)


def test_every_field_of_a_result_crosses_the_wire() -> None:
    result = StatementResult(
        sql="UPDATE plan SET x = 1", columns=("a", "b"), rows=((1, b"\x00"), (2.5, None)),
        rowcount=2, truncated=True, elapsed_ms=1.5, error="boom", error_kind="constraint",
        writes=("plan",), schema_changed=True, break_glass=("plan",), reads=("endpoint",),
        made_writes=(("t1", "plan"),), kept_in=("plan",))
    assert wire.results_from_json(wire.results_to_json([result])) == [result]


class _App:
    def run_worker(self, job: Any, **_: Any) -> None:
        job()  # the seat's worker thread, here at once


class _Screen:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def post_message(self, message: Any) -> bool:
        self.messages.append(message)
        return True


def test_the_seat_runner_sends_the_play_screen_s_action_as_its_record(
        host: Host, flagship: Exercise) -> None:
    ana = joined(host, "enactor-a", "Ana")
    screen = _Screen()
    runner = SeatRunner(_App(), screen, ana, flagship)  # type: ignore[arg-type]

    def answered(label: str, action: Any) -> Any:
        runner.perform(label, action)
        host.pump()
        runner._answer()
        return screen.messages[-1]

    saved = answered("monitor", SaveMonitor(role="enactor-a", name="m", sql="SELECT 1"))
    assert isinstance(saved, ActionDone) and isinstance(saved.event, ev.MonitorSaved)
    removed = answered("remove monitor", RemoveMonitor(name="m"))  # as the screen asks it
    assert isinstance(removed, ActionDone) and isinstance(removed.event, ev.MonitorRemoved)
    [row] = ana.db.commands_of("enactor-a", "remove_monitor")  # the action's record, as it is
    assert json.loads(row.payload) == action_to_record(RemoveMonitor(name="m"))
    [command] = [e for e in of_kind(read_events(host.folder).events, ev.SeatCommand)
                 if e.action == "remove_monitor"]
    assert command.role == "enactor-a"  # read as the seat's role: its own monitor, removed
    declared = answered("declare", Declare(role="enactor-a", finding="nope"))
    assert isinstance(declared, ActionDone)
    ran = answered("run", RunSql(role="enactor-a", sql="SELECT 1 AS one"))
    assert isinstance(ran, StatementsRan) and ran.results[0].rows == ((1,),)
    runner.perform("wait", Wait(until=30))
    assert isinstance(screen.messages[-1], JobFailed)
    assert "the facilitator runs the clock" in screen.messages[-1].error
    runner.act("inject", lambda s: None)
    assert isinstance(screen.messages[-1], JobFailed)
    count = len(screen.messages)
    runner.act("cast", lambda s: None)  # the host records who sits where
    assert len(screen.messages) == count
