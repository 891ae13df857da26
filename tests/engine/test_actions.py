"""A player's actions are values: one vocabulary, written and read by the events codec, done by
`Session.perform` exactly as the session's own methods do them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from raceday.engine.actions import (
    BY_KIND,
    Action,
    AskReplay,
    Declare,
    EditStatement,
    RemoveMonitor,
    RevealHint,
    RunSql,
    SaveMonitor,
    Wait,
    action_from_record,
    action_to_record,
)
from raceday.engine.session import Session
from raceday.transcript import events as ev
from raceday.transcript.events import EventError

EVERY_ACTION: tuple[Action, ...] = (
    RunSql(role="operator", sql="SELECT value FROM config"),
    SaveMonitor(role="operator", name="limit", sql="SELECT 1 FROM config WHERE value > 10"),
    RemoveMonitor(name="limit"),
    Declare(role="operator", finding="stale-write"),
    EditStatement(role="operator", statement="b-write",
                  sql="UPDATE config SET value = :seen WHERE key = 'limit' AND version = 1"),
    RevealHint(hint="h1", role="operator", to=("operator", "reader")),
    AskReplay(),
    Wait(until=4),
    Wait(),
)


def test_every_kind_of_action_is_in_the_vocabulary_and_survives_json() -> None:
    assert {a.kind for a in EVERY_ACTION} == set(BY_KIND)
    for action in EVERY_ACTION:
        line = json.dumps(action_to_record(action))
        assert action_from_record(json.loads(line)) == action


@pytest.mark.parametrize("record, words", [
    ([], "an action must be a JSON object"),
    ({"role": "operator"}, "an action needs a 'kind'"),
    ({"kind": "drop_world"}, "unknown action 'drop_world'; actions are sql, monitor"),
    ({"kind": "declare", "role": "operator"}, "declare: missing field 'finding'"),
    ({"kind": "declare", "role": "operator", "finding": 3}, "declare.finding"),
    ({"kind": "sql", "role": "operator", "sql": "SELECT 1", "as": "root"},
     "sql: unknown field 'as'"),
])
def test_a_bad_action_is_refused_in_one_line_naming_where(record: Any, words: str) -> None:
    with pytest.raises(EventError) as caught:
        action_from_record(record)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def _played(session: Session, steps: list[Callable[[Session], object]]) -> list[dict[str, Any]]:
    for step in steps:
        step(session)
    session.end()
    timings = ("wall_time", "elapsed_ms")  # how long, not what
    return [{k: v for k, v in ev.to_record(e).items() if k not in timings} for e in session.events]


def test_an_action_that_crossed_a_process_boundary_does_what_the_call_does(
        make_session: Callable[..., Session]) -> None:
    """The same night played through the session's methods and through `perform` with each
    action read back from JSON (as a team seat's command arrives): the same transcript."""
    by_calls: list[Callable[[Session], object]] = [
        lambda s: s.execute("operator", "SELECT value FROM config"),
        lambda s: s.save_monitor("operator", "limit", "SELECT 1 FROM config WHERE value > 10"),
        lambda s: s.wait(4),
        lambda s: s.edit_statement("operator", "b-write", "UPDATE config SET value = :seen "
                                   "WHERE key = 'limit' AND version = 1"),
        lambda s: s.reveal_hint("h1", "operator"),
        lambda s: s.remove_monitor("limit"),
        lambda s: s.declare("operator", "stale-write"),
        lambda s: s.wait(None),
    ]
    actions = [a for a in EVERY_ACTION if not isinstance(a, AskReplay)]
    actions = [actions[0], actions[1], Wait(until=4), actions[4],
               RevealHint(hint="h1", role="operator"), actions[2], actions[3], Wait()]

    def performed(action: Action) -> Callable[[Session], object]:
        again = action_from_record(json.loads(json.dumps(action_to_record(action))))
        return lambda s: s.perform(again)

    called = _played(make_session(), by_calls)
    done = _played(make_session(), [performed(a) for a in actions])
    assert done == called
    kinds = [e["kind"] for e in done]
    for kind in ("statement", "monitor_saved", "wait", "edit", "hint", "monitor_removed",
                 "declaration"):
        assert kind in kinds  # each action left its mark, not just the clock's events


def test_perform_gives_what_the_action_gave(make_session: Callable[..., Session]) -> None:
    session = make_session()
    results = session.perform(RunSql(role="operator", sql="SELECT value FROM config"))
    assert isinstance(results, list) and results[0].rows == ((10,),)
    declared = session.perform(Declare(role="operator", finding="disk"))
    assert isinstance(declared, ev.Declaration) and declared.verdict == "wrong"
    assert session.perform(Wait(until=3)) is None and session.minute == 3
    refused = session.perform(EditStatement(role="operator", statement="nope", sql="SELECT 1"))
    assert isinstance(refused, ev.Refused) and "no automation statement 'nope'" in refused.error


def test_a_seat_s_role_is_forced_on_its_action_whatever_the_record_names() -> None:
    """The host reads a seat's action with the seat's role: a record naming another role,
    none, or one on an action that takes none (a replay) is that seat's."""
    forged = action_to_record(RunSql(role="operator", sql="SELECT 1"))
    assert action_from_record(forged, role="reader") == RunSql(role="reader", sql="SELECT 1")
    assert action_from_record({"kind": "remove_monitor", "name": "m"}, role="reader") == \
        RemoveMonitor(name="m", role="reader")
    assert action_from_record({"kind": "replay", "role": "operator"}, role="reader") == \
        AskReplay()
    for action in EVERY_ACTION:
        again = action_from_record(action_to_record(action), role="reader")
        assert getattr(again, "role", "reader") == "reader"
