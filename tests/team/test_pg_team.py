"""Team play across machines: the host meets its seats in PostgreSQL (`raceday host --db`),
seats join with the address it prints and no shared folder, and LISTEN/NOTIFY wakes whoever
waits. Every test here skips with a reason when no server is reachable."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres_server import server_or_skip
from team_fixtures import SEATS, TOKENS

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.store.team_db import SESSION_DB, SESSION_POSTGRES, CommandRow
from raceday.team.client import Client, TeamError, View
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

pytestmark = pytest.mark.postgres

DSN_VARIABLE = "RACEDAY_TEST_PG_DSN"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pg_dsn() -> str:
    return server_or_skip()


class Wall:
    """The host's wall clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pg_host(flagship: Exercise, tmp_path: Path, pg_dsn: str) -> Iterator[Host]:
    """A host whose seats meet it in PostgreSQL (its world stays in SQLite: one concern)."""
    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "t", pace=Pace.TURNS,
                tokens=TOKENS, meeting=pg_dsn, wall=Wall(), heartbeat_timeout_s=10)
    host.start()
    address = host.where
    yield host
    host.close()
    _drop_meeting(address)


def _drop_meeting(address: str) -> None:
    """Remove what a test left (a host that ended has removed it already)."""
    from raceday.store.postgres.session_db import PgSessionDb
    from raceday.store.team_db import SessionDbError

    try:
        db = PgSessionDb.open(address)
    except SessionDbError:
        return
    db.drop()


def pump(host: Host, send: Callable[[], int]) -> int:
    """Send a seat's command, then pump once its NOTIFY has reached the host (across
    machines nothing is there the instant it commits, as it is in session.db)."""
    assert host.db is not None
    before = host.db.data_version()
    command = send()
    assert host.db.wait(before, 30), "the seat's NOTIFY never reached the host"
    host.pump()
    return command


def take(host: Host, seat: str, player: str, beat: float | None = None) -> Client:
    """A seat's client, joined with the login its join line carries."""
    client = Client(host.addresses[seat], TOKENS[seat], player)
    client.wait(pump(host, lambda: client.join(beat=beat)), timeout=10)
    return client


def test_the_host_prints_an_address_that_needs_no_folder(pg_host: Host) -> None:
    address = pg_host.where
    assert address.startswith("postgresql://") and "session=" in address
    assert not (pg_host.folder / SESSION_DB).exists()
    assert (pg_host.folder / SESSION_POSTGRES).read_text(encoding="utf-8").strip() == address
    line = pg_host.join_lines()[0]
    seat_address = shlex.split(line)[2]  # one word for the shell, `?` and all
    assert seat_address == pg_host.addresses["enactor-a"]
    assert seat_address.startswith("postgresql://rd_") and "raceday_ci:raceday_ci" not in line
    assert seat_address.split("@")[1] == address.split("@")[1]  # the same server and session
    # the host's own folder leads to the same session (the console's and `watch DIR`'s way)
    view = View(pg_host.folder)
    try:
        assert view.meta["state"] == "running"
    finally:
        view.close()


def test_an_address_for_no_session_is_a_one_line_error(pg_dsn: str) -> None:
    from raceday.store.team_db import SessionDbError

    with pytest.raises(SessionDbError, match="no team session deadbeef"):
        View(pg_dsn + ("&" if "?" in pg_dsn else "?") + "session=deadbeef")
    with pytest.raises(SessionDbError, match="name the session"):
        View(pg_dsn)


def test_a_notify_wakes_a_client_waiting_for_the_host(pg_host: Host) -> None:
    watcher = take(pg_host, "responder", "Rita")
    player = take(pg_host, "enactor-a", "Ann")
    watcher.new_events()
    seen = watcher.db.data_version()
    while watcher.db.wait(seen, 0.3):  # let the joins' NOTIFYs arrive: then all is quiet
        seen = watcher.db.data_version()
    woke: list[list[tuple[str, str]]] = []

    def wait_for_news() -> None:
        if watcher.db.wait(seen, 60):
            woke.append([(e.role, e.sql) for e in watcher.new_events()
                         if isinstance(e, ev.Statement) and e.role == "enactor-a"])

    waiting = threading.Thread(target=wait_for_news)
    waiting.start()
    # the seat's NOTIFY wakes the host; its pump publishes: one NOTIFY to every seat
    command = pump(pg_host, lambda: player.submit("sql", {"sql": "SELECT name FROM endpoint"}))
    waiting.join(60)
    assert woke == [[("enactor-a", "SELECT name FROM endpoint")]]
    assert player.wait(command, timeout=10).status == "done"
    watcher.close()
    player.close()


def test_the_host_waits_on_notify_and_a_seat_command_wakes_it(pg_host: Host) -> None:
    client = take(pg_host, "responder", "Rita")
    pg_host.pump()  # nothing new: the host's count of what it heard is now settled
    stop = threading.Event()
    rounds: list[int] = []

    def serve() -> None:
        while not stop.is_set():
            pg_host.idle(stop)
            rounds.append(pg_host.pump())

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        row = client.wait(client.submit("sql", {"sql": "SELECT count(*) FROM plan"}), timeout=30)
    finally:
        stop.set()
        thread.join(30)
    assert row.status == "done"
    assert sum(rounds) >= 1
    client.close()


def test_forged_and_replayed_commands_are_refused_over_postgresql(pg_host: Host) -> None:
    client = take(pg_host, "enactor-a", "Ann")
    first = pump(pg_host, lambda: client.submit("sql", {"sql": "SELECT 1"}))
    done = client.wait(first, timeout=10)
    assert done.status == "done"
    forged = client.db.insert_raw(CommandRow(0, "enactor-a", 10**18, "sql",
                                             '{"role": "enactor-a", "sql": "SELECT 2"}',
                                             "0" * 64, "queued", 0.0))
    replayed = pump(pg_host, lambda: client.db.insert_raw(done))
    assert client.wait(forged, timeout=10).status == "refused"
    assert "forged" in (client.wait(forged).error or "")
    assert "already used" in (client.wait(replayed, timeout=10).error or "")
    refusals = list(of_kind(read_events(pg_host.folder).events, ev.CommandRefused))
    assert [r.command for r in refusals] == [forged, replayed]
    with pytest.raises(TeamError, match="opens no seat"):
        Client(pg_host.where, "not-a-token", "Mallory")
    client.close()


def test_a_seat_that_stops_beating_is_lost_over_postgresql(pg_host: Host) -> None:
    wall = pg_host.wall
    assert isinstance(wall, Wall)
    client = take(pg_host, "responder", "Rita", beat=2.0)
    wall.now += 11
    pg_host.pump()
    lost = list(of_kind(read_events(pg_host.folder).events, ev.SeatLost))
    assert [(e.seat, e.player) for e in lost] == [("responder", "Rita")]
    seen = client.new_events()
    assert any(isinstance(e, ev.SeatLost) for e in seen)  # published to every seat
    client.wait(pump(pg_host, client.beat), timeout=10)
    back = [e for e in client.new_events() if isinstance(e, ev.SeatJoined)]
    assert [(e.player, e.rejoin) for e in back] == [("Rita", True)]
    client.close()


def test_no_player_role_can_read_the_meeting(flagship: Exercise, tmp_path: Path, pg_dsn: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from raceday.store import DB_VARIABLE

    monkeypatch.setenv(DB_VARIABLE, pg_dsn)  # the world on PostgreSQL too, as `host --db`
    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "t",
                pace=Pace.TURNS, tokens=TOKENS, meeting=pg_dsn)
    host.start()
    address = host.where
    try:
        schema = address.rsplit("session=", 1)[1]
        for role in ("responder", "enactor-a"):
            result = host.need().execute(role, f"SELECT * FROM rd_team_{schema}.seats")[0]
            assert result.error is not None and "permission denied" in result.error
    finally:
        _drop_world(pg_dsn, host.folder)
        host.close()
        _drop_meeting(address)


def _drop_world(dsn: str, folder: Path) -> None:
    from raceday.store.postgres.world import drop_world

    marker = folder / "world.postgres"
    if marker.is_file():
        drop_world(dsn, marker.read_text(encoding="utf-8").strip())


PLAYER = textwrap.dedent("""
    import sys
    from raceday.team.client import Client
    from raceday.transcript import events as ev

    address, token = sys.argv[1], sys.argv[2]
    client = Client(address, token, "Ann")
    client.wait(client.join(beat=2.0), timeout=60)
    row = client.wait(client.submit("sql", {"sql": "SELECT name, active_plan_id FROM endpoint"}),
                      timeout=60)
    print("RESULT", row.status, flush=True)
    seen = None
    while seen is None:
        for event in client.new_events():
            if isinstance(event, ev.Statement) and event.role == "responder":
                seen = event.sql
        if seen is None:
            if client.ended:
                break
            client.idle(0.01)
    print("SAW", seen, flush=True)
    client.wait(client.submit("leave", {}), timeout=60)
    client.close()
""")


def test_two_processes_play_one_session_on_postgresql(tmp_path: Path, pg_dsn: str) -> None:
    """`raceday host --db` in one process, a player joined by its address in another, this
    test a second seat: each sees the other's statements; Ctrl-C scores the session."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    host = subprocess.Popen(
        [sys.executable, "-m", "raceday", "host", "dynamodb-dns-race", "--headless", "--db",
         pg_dsn, "--seats", "enactor-a,responder", "--pace", "turns",
         "--transcripts", str(tmp_path / "t")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    assert host.stdout is not None
    lines: list[str] = []
    joins: dict[str, tuple[str, str]] = {}
    folder = address = ""
    try:
        for line in host.stdout:
            lines.append(line)
            if "session folder:" in line:
                folder = line.split("session folder:", 1)[1].strip()
            if re.match(r"\S*raceday join ", line.strip()):
                words = shlex.split(line)
                joins[words[words.index("--role") + 1]] = (words[2], words[words.index("--token") + 1])
            if line.startswith("Ctrl-C"):
                break
        assert set(joins) == {"enactor-a", "responder"}, "".join(lines)
        address = joins["responder"][0]
        player = subprocess.Popen([sys.executable, "-c", PLAYER, *joins["enactor-a"]],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  env=env, cwd=tmp_path)
        me = Client(address, joins["responder"][1], "Rita")
        me.wait(me.join(), timeout=60)
        theirs = None
        while theirs is None:
            for event in me.new_events():
                if isinstance(event, ev.Statement) and event.role == "enactor-a":
                    theirs = event
            if theirs is None:
                assert player.poll() is None, player.stdout.read() if player.stdout else ""
                me.idle(0.01)
        assert theirs.sql == "SELECT name, active_plan_id FROM endpoint"
        mine = me.wait(me.submit("sql", {"sql": "SELECT count(*) AS plans FROM plan"}),
                       timeout=60)
        assert mine.status == "done"
        out, _ = player.communicate(timeout=120)
        assert "RESULT done" in out and "SAW SELECT count(*) AS plans FROM plan" in out, out
        me.close()
        host.send_signal(signal.SIGINT)  # the facilitator's Ctrl-C: end and score
        rest, _ = host.communicate(timeout=120)
        lines.append(rest)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    text = "".join(lines)
    assert re.search(r"Score \d+/100", text), text
    played = read_events(Path(folder))  # the transcript landed in the host's local folder
    statements = [(e.role, e.sql) for e in of_kind(played.events, ev.Statement)]
    assert ("enactor-a", "SELECT name, active_plan_id FROM endpoint") in statements
    assert ("responder", "SELECT count(*) AS plans FROM plan") in statements
    assert sorted(e.player for e in of_kind(played.events, ev.SeatJoined)) == ["Ann", "Rita"]
    assert any(isinstance(e, ev.ScoreEvent) for e in played.events)
    _drop_world(pg_dsn, Path(folder))
    _drop_meeting(address)


def test_a_seat_whose_listen_connection_dropped_still_hears_the_host(pg_host: Host,
                                                                      pg_dsn: str) -> None:
    """The server ends the seat's LISTEN connection (a restart, a proxy's idle timeout): the
    seat falls back to reading on every look, and the news still reaches it."""
    import psycopg

    from raceday.store.postgres.session_db import PgSessionDb

    watcher = take(pg_host, "responder", "Rita")
    player = take(pg_host, "enactor-a", "Ann")
    watcher.new_events()
    assert isinstance(watcher.db, PgSessionDb)
    listener = watcher.db._listener
    assert listener is not None
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (listener.conn.info.backend_pid,))
    deadline = time.monotonic() + 30
    while listener.alive and time.monotonic() < deadline:  # the seat notices the drop
        watcher.idle(0.05)
    watcher.changed()
    watcher.new_events()
    pump(pg_host, lambda: player.submit("sql", {"sql": "SELECT name FROM plan_record LIMIT 1"}))
    heard: list[tuple[str, str]] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if watcher.changed():
            heard += [(e.role, e.sql) for e in watcher.new_events()
                      if isinstance(e, ev.Statement) and e.role == "enactor-a"]
            if heard:
                break
        watcher.idle(0.05)
    assert heard == [("enactor-a", "SELECT name FROM plan_record LIMIT 1")]
    watcher.close()
    player.close()
