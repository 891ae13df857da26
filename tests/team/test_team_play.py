"""A host and three seats in one process play the flagship; the transcript is the headless
play's of the same actions, seats aside."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from raceday.engine.headless import run_script
from raceday.engine.script import load_script
from raceday.errors import ScriptError
from raceday.exercise.model import Exercise
from raceday.team.script import run_team_script
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

SCRIPT = Path(__file__).parent / "data" / "three-seats.yaml"
TEAM_ONLY = (ev.SeatJoined, ev.SeatLeft, ev.SeatCommand, ev.CommandRefused)
UNSTABLE = ("seq", "wall_time", "elapsed_ms")
"""When and how fast: the only fields of an event that two plays of one script may differ in."""


def comparable(events: tuple[ev.Event, ...]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        if isinstance(event, TEAM_ONLY):
            continue
        record = ev.to_record(event)
        for name in UNSTABLE:
            record.pop(name, None)
        if isinstance(event, ev.ScoreEvent):
            record.pop("session", None)
        if isinstance(event, ev.SessionStart):
            record.pop("origin", None)  # a team of a group is not itself a script's run
        out.append(record)
    return out


def test_three_seats_play_the_flagship_as_the_headless_run_does(flagship: Exercise,
                                                                  tmp_path: Path) -> None:
    script = load_script(SCRIPT, flagship)
    assert dict(script.seats) == {"ana": "enactor-a", "ben": "enactor-b", "rita": "responder"}
    solo, _ = run_script(flagship, script, tmp_path / "headless")
    team = run_team_script(flagship, script, tmp_path / "team",
                           players={"ana": "Ana", "ben": "Ben", "rita": "Rita"})
    alone = read_events(solo.folder).events
    together = read_events(team.host.folder).events
    assert comparable(together) == comparable(alone)

    steps = [e.step for e in of_kind(together, ev.RaceStep)]
    assert "stale-apply" in steps  # the race happened for real, at Ana's hand
    commands = list(of_kind(together, ev.SeatCommand))
    assert {(c.seat, c.player) for c in commands} == {("ana", "Ana"), ("ben", "Ben"),
                                                      ("rita", "Rita")}
    joined = [(e.seat, e.role) for e in of_kind(together, ev.SeatJoined)]
    assert joined == [("ana", "enactor-a"), ("ben", "enactor-b"), ("rita", "responder")]
    by_ana = [e for e in of_kind(together, ev.Statement)
              if e.role == "enactor-a" and not e.automated]
    assert len(by_ana) == 2
    assert isinstance(together[-1], ev.ScoreEvent)


def test_a_seat_in_a_script_must_play_a_held_role(flagship: Exercise, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("seats: {ana: enactor-x}\nsteps:\n  - as: ana\n    sql: SELECT 1\n")
    with pytest.raises(ScriptError, match="unknown role 'enactor-x'"):
        load_script(path, flagship)


def test_headless_scripts_without_seats_are_unchanged(flagship: Exercise) -> None:
    script = load_script(Path(__file__).parents[2] / "exercises" / "dynamodb-dns-race" /
                         "scripts" / "textbook.yaml", flagship)
    assert script.seats == () and all(s.seat is None for s in script.steps)
    assert dataclasses.replace(script.steps[0]).role == "responder"
