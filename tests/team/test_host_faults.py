"""Faults in team play end like solo ones: a resumed host keeps its speed and records no
stale heartbeat as a refusal; a seat notices within seconds a host that stopped answering."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from team_fixtures import SEATS, TOKENS, joined, make_host, send

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.team.client import HOST_SILENT_S, Client, Heartbeat
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.team.start_host import resumed_host
from raceday.transcript import events as ev
from raceday.transcript.log import read_events


def _killed_live_host(flagship: Exercise, transcripts: Path, speed: float) -> Path:
    host = Host(flagship, seats_from_roles(SEATS), transcripts=transcripts, pace=Pace.LIVE,
                speed=speed, tokens=TOKENS)
    host.start()
    host.pump()  # publishes its clock, speed and all
    folder = host.folder
    host.need().close()  # killed: no score
    host.close()
    return folder


def test_a_resumed_host_keeps_its_speed(flagship: Exercise, tmp_path: Path) -> None:
    folder = _killed_live_host(flagship, tmp_path / "t", speed=30)
    again = resumed_host(folder)
    try:
        assert again.live.speed == 30  # was 60x, the default, after a resume
        again.pump()
        assert again.db is not None and '"speed":30' in (again.db.clock() or "")
    finally:
        again.end()
        again.close()


def test_a_resumed_host_can_be_given_another_speed(flagship: Exercise, tmp_path: Path) -> None:
    folder = _killed_live_host(flagship, tmp_path / "t", speed=30)
    again = resumed_host(folder, speed=120)
    try:
        assert again.live.speed == 120
    finally:
        again.end()
        again.close()


def test_old_seats_beats_after_a_resume_are_answered_not_recorded(flagship: Exercise,
                                                                  tmp_path: Path) -> None:
    host = make_host(flagship, tmp_path / "t")
    rita = joined(host, "responder", "Rita")
    folder = host.folder
    host.need().close()
    host.close()
    again = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "t",
                 pace=Pace.TURNS, tokens={s: t + "-new" for s, t in TOKENS.items()})
    again.resume_session(folder)
    beats = [rita.beat() for _ in range(10)]  # an old terminal, beating on
    again.pump()
    rows = [rita.wait(b, timeout=5) for b in beats]
    assert {r.status for r in rows} == {"refused"}
    assert "host restarted" in (rows[0].error or "")
    refused = [e for e in read_events(folder).events if isinstance(e, ev.CommandRefused)]
    assert refused == []  # were one event per beat, every 2 s
    stale_sql = send(again, rita, "sql", sql="SELECT 1")  # a statement is still recorded
    assert stale_sql.status == "refused"
    assert len([e for e in read_events(folder).events
                if isinstance(e, ev.CommandRefused)]) == 1
    again.end()
    again.close()


class Wall:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_seat_notices_a_host_that_stopped_answering(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    wall = Wall()
    heartbeat = Heartbeat(rita, wall=wall)
    heartbeat.beat_once()
    host.pump()  # the host answers
    wall.now += 2
    heartbeat.beat_once()
    assert heartbeat.host_silent_for() == 0.0
    host.need().close()  # the host is killed: nothing answers from here on
    for _ in range(4):
        wall.now += 2
        heartbeat.beat_once()
    assert heartbeat.host_silent_for() >= HOST_SILENT_S
    assert heartbeat.refusal is None


def test_a_seat_learns_the_host_restarted(flagship: Exercise, tmp_path: Path) -> None:
    host = make_host(flagship, tmp_path / "t")
    rita: Client = joined(host, "responder", "Rita")
    folder = host.folder
    host.need().close()
    host.close()
    again = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "t",
                 pace=Pace.TURNS, tokens={s: t + "-new" for s, t in TOKENS.items()})
    again.resume_session(folder)
    heartbeat = Heartbeat(rita)
    heartbeat.beat_once()
    again.pump()
    heartbeat.beat_once()
    assert heartbeat.refusal is not None and "join again" in heartbeat.refusal
    again.end()
    again.close()


FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"


@pytest.mark.parametrize("limit, end_early", [(200_000, False), (1_000_000, False),
                                              (300_000, True), (2_000_000, True)])
def test_a_full_disk_in_team_play_says_how_to_resume_and_resume_works(
        tmp_path: Path, limit: int, end_early: bool) -> None:
    """The disk fills (a file-size limit stands in for it) while a team plays, or while the
    night plays itself out after the team left: one line naming `raceday resume`, and the
    resume goes on (or ends the night again) from the whole transcript."""
    script = FLAGSHIP / "scripts" / "textbook.yaml"
    if end_early:
        script = tmp_path / "early.yaml"
        script.write_text("roles: [responder]\nsteps:\n  - at: \"23:05\"\n    as: responder\n"
                          "    sql: SELECT * FROM endpoint\n  - end: true\n")
    code = ("import resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
            "from raceday.cli import main\n"
            f"sys.exit(main(['run', {str(FLAGSHIP)!r}, '--script', {str(script)!r}, '--team', "
            f"'--transcripts', {str(tmp_path / 't')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    err = done.stderr.strip()
    assert err.startswith("raceday: ") and "\n" not in err and "Traceback" not in err
    assert "`raceday resume " in err and "transcript whole" in err
    [folder] = (tmp_path / "t").iterdir()
    events = read_events(folder).events
    assert not any(isinstance(e, ev.ScoreEvent) for e in events)
    assert end_early == any(isinstance(e, ev.TeamLeft) for e in events)
    host = resumed_host(folder)
    try:
        if not host.ended:
            host.pump()
            host.end()
    finally:
        host.close()
    after = read_events(folder).events
    assert [e.seq for e in after] == list(range(1, len(after) + 1))
    assert isinstance(after[-1], ev.ScoreEvent)
    assert sum(isinstance(e, ev.TeamLeft) for e in after) == 1
