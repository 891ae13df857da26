"""Seat heartbeats: the host notices a terminal that died, records it, and the player's
rejoin brings the seat back with everything that happened meanwhile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

from team_fixtures import SEATS, TOKENS

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.team.client import Client
from raceday.team.group import Teams, TeamSpec
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events


class Wall:
    """The host's wall clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(flagship: Exercise, transcripts: Path, wall: Callable[[], float]) -> Host:
    host = Host(flagship, seats_from_roles(SEATS), transcripts=transcripts, pace=Pace.TURNS,
                tokens=TOKENS, wall=wall, heartbeat_timeout_s=10)
    host.start()
    return host


def take(host: Host, seat: str, player: str, beat: float | None = 2.0) -> Client:
    client = Client(host.folder, TOKENS[seat], player)
    command = client.join(beat=beat)
    host.pump()
    client.wait(command, timeout=5)
    return client


def lost(host: Host) -> list[ev.SeatLost]:
    return list(of_kind(read_events(host.folder).events, ev.SeatLost))


def test_a_seat_that_stops_beating_is_lost_and_back_when_it_beats(flagship: Exercise,
                                                                  tmp_path: Path) -> None:
    wall = Wall()
    host = make(flagship, tmp_path / "t", wall)
    try:
        rita = take(host, "responder", "Rita")
        for _ in range(5):  # beating every 2 s: alive
            wall.now += 2
            rita.beat()
            host.pump()
        assert lost(host) == []
        wall.now += 11  # silence
        host.pump()
        [gone] = lost(host)
        assert (gone.seat, gone.player, gone.role) == ("responder", "Rita", "responder")
        assert gone.silent_seconds >= 10
        wall.now += 30
        host.pump()
        assert len(lost(host)) == 1  # recorded once
        rita.beat()  # the terminal was only frozen: it beats again
        host.pump()
        back = list(of_kind(read_events(host.folder).events, ev.SeatJoined))[-1]
        assert back.player == "Rita" and back.rejoin
        beats = [e for e in read_events(host.folder).events if isinstance(e, ev.SeatCommand)]
        assert beats == []  # a heartbeat is not an action: the transcript does not list it
    finally:
        host.close()


def test_a_seat_that_left_or_never_promised_a_beat_is_not_lost(flagship: Exercise,
                                                              tmp_path: Path) -> None:
    wall = Wall()
    host = make(flagship, tmp_path / "t", wall)
    try:
        ana = take(host, "enactor-a", "Ana")
        take(host, "enactor-b", "Ben", beat=None)  # a scripted seat: no heartbeat
        ana.submit("leave", {})
        host.pump()
        wall.now += 120
        host.pump()
        assert lost(host) == []
    finally:
        host.close()


def test_a_forged_beat_keeps_no_dead_seat_alive(flagship: Exercise, tmp_path: Path) -> None:
    wall = Wall()
    host = make(flagship, tmp_path / "t", wall)
    try:
        take(host, "responder", "Rita")
        mallory = Client(host.folder, TOKENS["enactor-a"], "Mallory")
        mallory.seat = "responder"  # signs with the wrong token for Rita's seat
        wall.now += 6
        mallory.beat()
        host.pump()
        wall.now += 6
        host.pump()
        assert [g.player for g in lost(host)] == ["Rita"]
        refused = list(of_kind(read_events(host.folder).events, ev.CommandRefused))
        assert refused and refused[0].action == "beat"
    finally:
        host.close()


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from raceday.team.client import Client, Heartbeat
    client = Client(Path(sys.argv[1]), sys.argv[2], "Rita")
    client.wait(client.join(beat=0.2))
    Heartbeat(client, every=0.2).start()
    print("joined", flush=True)
    time.sleep(120)
""")


def test_a_killed_terminal_is_noticed_and_its_rejoin_catches_up(flagship: Exercise,
                                                                tmp_path: Path) -> None:
    """Two teams on one host; blue's responder is a real process, killed with SIGKILL."""
    teams = Teams(flagship, [TeamSpec("red", tuple(seats_from_roles(SEATS))),
                             TeamSpec("blue", tuple(seats_from_roles(SEATS)))],
                  transcripts=tmp_path / "t", pace=Pace.TURNS, heartbeat_timeout_s=1.0)
    teams.start()
    stop = threading.Event()
    thread = threading.Thread(target=teams.run, args=(stop,), daemon=True)
    thread.start()
    blue = teams.host("blue")
    token = blue.seats["responder"].token
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(blue.folder), token],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "joined"
        time.sleep(1.5)  # beating: not lost
        assert lost(blue) == []
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not lost(blue) and time.monotonic() < deadline:
            time.sleep(0.1)
        [gone] = lost(blue)
        assert gone.seat == "responder" and gone.player == "Rita"
        assert lost(teams.host("red")) == []  # the other team's world heard nothing of it
        again = Client(blue.folder, token, "Rita")
        again.wait(again.join(beat=0.2))
        caught_up = again.new_events()
        assert gone in caught_up  # the rejoined screen shows its own loss, then the rejoin
        last = caught_up[-1]
        assert isinstance(last, ev.SeatJoined) and last.rejoin
        again.close()
    finally:
        if child.poll() is None:
            child.kill()
        stop.set()
        thread.join(timeout=10)
        teams.close()
