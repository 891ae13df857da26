"""Fair turns (issue 56): one seat's schema changes and replays queue behind its own
commands, never in front of another seat's statement, and the live clock runs between them."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from raceday.engine.clock import Pace
from raceday.engine.session import Session
from raceday.exercise.model import Exercise
from raceday.store.team_db import CommandRow
from raceday.team.client import Client
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.team.turns import Turns
from raceday.transcript import events as ev

TOKENS = {"responder": "token-r", "enactor-a": "token-a"}
REPLAY_S = 0.5


def _row(id_: int, seat: str) -> CommandRow:
    return CommandRow(id_, seat, id_, "sql", "{}", "", "queued", 0.0)


def test_each_round_takes_one_command_of_each_seat_in_its_own_order() -> None:
    turns = Turns()
    turns.add([_row(1, "a"), _row(2, "a"), _row(3, "a"), _row(4, "b")])
    turns.add([_row(2, "a"), _row(5, "b")])  # read again before its outcome was published
    assert [r.id for r in turns.next_round()] == [1, 4]
    assert [r.id for r in turns.next_round()] == [2, 5]
    assert [r.id for r in turns.next_round()] == [3]
    assert not turns


def test_a_seats_replays_never_hold_another_seats_select_or_the_clock(
        flagship: Exercise, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_replay = Session.replay

    def slow_replay(self: Session, **kwargs: Any) -> ev.Replay:
        time.sleep(REPLAY_S)  # a replay the team's triggers made slow
        return real_replay(self, **kwargs)

    monkeypatch.setattr(Session, "replay", slow_replay)
    host = Host(flagship, seats_from_roles(["responder", "enactor-a"]),
                transcripts=tmp_path / "t", pace=Pace.LIVE, speed=240, tokens=TOKENS)
    host.start()
    try:
        greedy = Client(host.folder, TOKENS["responder"], "Greedy")
        other = Client(host.folder, TOKENS["enactor-a"], "Other")
        joins = [greedy.join(), other.join()]
        host.pump()
        for command, client in zip(joins, (greedy, other), strict=True):
            client.wait(command)
        queued = []
        for i in range(4):  # queued while the host is busy elsewhere: all read at once
            queued.append(greedy.submit("sql", {"sql": f"CREATE TABLE guard_{i} (x)"}))
            queued.append(greedy.submit("replay", {}))
        select = other.submit("sql", {"sql": "SELECT 1"})
        stop = threading.Event()
        thread = threading.Thread(target=host.run, args=(stop,), daemon=True)
        thread.start()
        try:
            answered = other.wait(select, timeout=30)
            rows = [greedy.wait(c, timeout=30) for c in queued]
        finally:
            stop.set()
            thread.join()
        assert answered.status == "done"
        replays_done = [r.done_at or 0.0 for r in rows if r.kind == "replay"]
        assert (answered.done_at or 0.0) < replays_done[0]  # ahead of all its replays
        waited = (answered.done_at or 0.0) - answered.submitted_at
        assert waited < 2 * REPLAY_S, f"SELECT 1 waited {waited:.2f} s"
        minutes = [e.sim_time for e in host.need().events if isinstance(e, ev.Replay)]
        assert len(minutes) == 4 and len(set(minutes)) > 1, minutes  # the clock ran between
    finally:
        host.close()


def test_a_seat_that_just_had_a_turn_goes_after_one_that_had_none() -> None:
    turns = Turns()
    turns.add([_row(1, "a"), _row(2, "a")])
    assert [r.id for r in turns.next_round()] == [1]
    turns.add([_row(3, "b")])  # sent while a's first ran
    assert [r.id for r in turns.next_round()] == [3, 2]
