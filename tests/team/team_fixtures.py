"""Helpers for the team tests: a host with three seats whose tokens the tests know."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.store.team_db import CommandRow
from raceday.team.client import Client
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles

SEATS = ("enactor-a", "enactor-b", "responder")
TOKENS = {"enactor-a": "token-a", "enactor-b": "token-b", "responder": "token-r"}


def make_host(exercise: Exercise, transcripts: Path, pace: Pace = Pace.TURNS) -> Host:
    host = Host(exercise, seats_from_roles(SEATS), transcripts=transcripts, pace=pace,
                tokens=TOKENS)
    host.start()
    return host


def joined(host: Host, seat: str, player: str) -> Client:
    client = Client(host.folder, TOKENS[seat], player)
    command = client.join()
    host.pump()
    client.wait(command)
    return client


def send(host: Host, client: Client, kind: str, **payload: object) -> CommandRow:
    """Submit, let the host take it, and give back the command as the host left it."""
    command = client.submit(kind, dict(payload))
    host.pump()
    return client.wait(command, timeout=5)


async def until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10) -> None:
    """Wait, a frame at a time, until `condition` holds (a test fails after `timeout` s)."""
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("the condition never held")
