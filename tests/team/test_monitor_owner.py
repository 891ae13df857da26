"""A monitor belongs to its seat (issue 56): another seat, of the same role or another,
can neither remove nor overwrite it; the refusal is recorded, and a resumed host remembers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from team_fixtures import send

from raceday.engine.actions import RemoveMonitor, SaveMonitor
from raceday.engine.clock import Pace
from raceday.engine.headless import open_session
from raceday.exercise.model import Exercise
from raceday.team.client import Client
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

TOKENS = {"responder": "t-r", "responder-2": "t-r2", "enactor-a": "t-a"}
EMPTY = "SELECT name FROM endpoint WHERE 0"


def _host(flagship: Exercise, root: Path, tokens: dict[str, str] = TOKENS) -> Host:
    host = Host(flagship, seats_from_roles(["responder", "responder", "enactor-a"]),
                transcripts=root, pace=Pace.TURNS, tokens=tokens)
    return host


def _join(host: Host, seat: str, player: str, tokens: dict[str, str] = TOKENS) -> Client:
    client = Client(host.folder, tokens[seat], player)
    command = client.join()
    host.pump()
    client.wait(command)
    return client


@pytest.fixture
def seated(flagship: Exercise, tmp_path: Path) -> Iterator[tuple[Host, Client, Client, Client]]:
    host = _host(flagship, tmp_path / "t")
    host.start()
    yield (host, _join(host, "responder", "Rita"), _join(host, "responder-2", "Rob"),
           _join(host, "enactor-a", "Ana"))
    host.close()


def test_another_seat_cannot_remove_or_overwrite_a_seats_monitor(
        seated: tuple[Host, Client, Client, Client]) -> None:
    host, rita, rob, ana = seated
    assert send(host, rita, "monitor", name="empty", sql=EMPTY).status == "done"
    for client, kind, payload in ((rob, "remove_monitor", {"name": "empty"}),
                                  (rob, "monitor", {"name": " empty", "sql": "SELECT 1"}),
                                  (ana, "remove_monitor", {"name": "empty"}),
                                  (ana, "monitor", {"name": "empty", "sql": "SELECT 1"})):
        done = send(host, client, kind, **payload)
        assert done.status == "refused", (kind, done)
        assert "only the seat that saved it" in (done.error or "")
    monitor = host.need().monitors["empty"]
    assert monitor.sql == EMPTY and monitor.role == "responder"
    refused = [e for e in read_events(host.folder).events if isinstance(e, ev.CommandRefused)]
    assert len(refused) == 4 and {e.seat for e in refused} == {"responder-2", "enactor-a"}
    assert send(host, rita, "monitor", name="empty", sql=EMPTY + " LIMIT 1").status == "done"
    assert send(host, rita, "remove_monitor", name="empty").status == "done"
    assert "empty" not in host.need().monitors
    assert send(host, rob, "monitor", name="empty", sql=EMPTY).status == "done"  # free again


def test_a_resumed_host_knows_whose_monitor_is_whose(flagship: Exercise,
                                                     tmp_path: Path) -> None:
    host = _host(flagship, tmp_path / "t")
    host.start()
    rita = _join(host, "responder", "Rita")
    assert send(host, rita, "monitor", name="empty", sql=EMPTY).status == "done"
    folder = host.folder
    host.need().close()  # killed
    host.close()
    tokens = {seat: token + "-new" for seat, token in TOKENS.items()}
    again = _host(flagship, tmp_path / "t", tokens)
    again.resume_session(folder)
    try:
        rob = _join(again, "responder-2", "Rob", tokens)
        assert send(again, rob, "remove_monitor", name="empty").status == "refused"
        assert "empty" in again.need().monitors
    finally:
        again.need().close()
        again.close()


def test_the_remove_action_carries_its_role_and_the_engine_refuses_another(
        flagship: Exercise, tmp_path: Path) -> None:
    session = open_session(flagship, ("responder", "enactor-a"), tmp_path)
    try:
        session.perform(SaveMonitor(role="responder", name="empty", sql=EMPTY))
        refused = session.perform(RemoveMonitor(name="empty", role="enactor-a"))
        assert isinstance(refused, ev.Refused) and "responder's" in refused.error
        assert "empty" in session.monitors
        removed = session.perform(RemoveMonitor(name="empty", role="responder"))
        assert isinstance(removed, ev.MonitorRemoved) and "empty" not in session.monitors
    finally:
        session.close()
