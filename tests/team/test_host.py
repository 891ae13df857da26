"""The host and its seats meeting in session.db: commands in, events out, seats guarded."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from team_fixtures import TOKENS, joined, send

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.store.session_db import SessionDb
from raceday.store.team_db import SessionDbError
from raceday.team.client import Client, CommandFailed, TeamError, View, event_of, results_of
from raceday.team.host import Host
from raceday.team.seats import SeatSpec
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events


def test_the_session_store_sits_beside_the_world_in_wal_mode(host: Host) -> None:
    folder = host.folder
    assert (folder / "session.db").is_file() and (folder / "world.db").is_file()
    db = SessionDb.open(folder)
    with db._tx() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.meta()["exercise"] == "dynamodb-dns-race"
    assert [(s.name, s.role) for s in db.seats()] == [
        ("enactor-a", "enactor-a"), ("enactor-b", "enactor-b"), ("responder", "responder")]
    assert all("token" not in s.token_hash for s in db.seats())  # hashes only
    db.close()


def test_a_seat_runs_sql_with_its_role_and_the_events_mirror_the_transcript(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    done = send(host, rita, "sql", sql="SELECT name FROM endpoint ORDER BY name")
    [result] = results_of(done)
    assert result.ok and len(result.rows) == 4
    view = View(host.folder)
    mirrored = view.new_events()
    written = read_events(host.folder).events
    assert [e.seq for e in mirrored] == [e.seq for e in written]
    assert mirrored == list(written)
    [command] = of_kind(written, ev.SeatCommand)
    assert (command.player, command.role, command.action) == ("Rita", "responder", "sql")
    [joined_event] = of_kind(written, ev.SeatJoined)
    assert joined_event.player == "Rita" and not joined_event.rejoin
    snapshot = view.snapshot()
    assert snapshot is not None and snapshot.clock_face == "23:01"
    assert snapshot.tables is not None and any(t.name == "plan" for t in snapshot.tables)


def test_a_command_for_a_role_the_seat_was_not_given_is_refused_and_recorded(host: Host) -> None:
    ana = joined(host, "enactor-a", "Ana")
    done = send(host, ana, "sql", sql="SELECT 1", role="responder")
    with pytest.raises(CommandFailed, match="given role enactor-a, not responder"):
        results_of(done)
    [refused] = of_kind(read_events(host.folder).events, ev.CommandRefused)
    assert refused.seat == "enactor-a" and refused.player == "Ana"
    assert not [e for e in of_kind(read_events(host.folder).events, ev.Statement)
                if not e.automated]


def test_a_forged_and_a_replayed_command_are_refused(host: Host) -> None:
    ana = joined(host, "enactor-a", "Ana")
    good = send(host, ana, "sql", sql="SELECT 1")
    assert good.status == "done"
    db = SessionDb.open(host.folder)
    replayed = db.insert_raw(good)  # the same row again: same number, same MAC
    forged = db.insert_raw(dataclasses.replace(good, nonce=good.nonce + 10, mac="0" * 64))
    other_seat = db.insert_raw(dataclasses.replace(good, seat="enactor-b",
                                                   nonce=good.nonce + 20))
    host.pump()
    errors = [ana.wait(i).error or "" for i in (replayed, forged, other_seat)]
    assert "already used" in errors[0]
    assert "not signed with this seat's token" in errors[1]
    assert "not signed with this seat's token" in errors[2]
    refused = list(of_kind(read_events(host.folder).events, ev.CommandRefused))
    assert len(refused) == 3
    assert all(r.player is None for r in refused)  # nobody is named for what they did not send
    db.close()


def test_a_wrong_token_opens_no_seat(host: Host) -> None:
    with pytest.raises(TeamError, match="opens no seat"):
        Client(host.folder, "guess", "Mallory")
    with pytest.raises(TeamError, match="for seat responder"):
        Client(host.folder, TOKENS["responder"], "Rita", role="enactor-a")


def test_a_seat_must_join_before_it_acts(host: Host) -> None:
    rita = Client(host.folder, TOKENS["responder"], "Rita")
    done = send(host, rita, "sql", sql="SELECT 1")
    assert done.status == "refused" and "not been joined" in (done.error or "")


def test_a_client_that_dies_rejoins_and_catches_up(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    send(host, rita, "sql", sql="SELECT count(*) FROM plan")
    seen = rita.new_events()
    rita.close()  # the terminal died
    ana = joined(host, "enactor-a", "Ana")
    send(host, ana, "sql", sql="SELECT 2")
    again = joined(host, "responder", "Rita")
    caught_up = again.new_events()
    assert caught_up[: len(seen)] == seen
    assert any(isinstance(e, ev.SeatJoined) and e.player == "Ana" for e in caught_up)
    last = caught_up[-1]
    assert isinstance(last, ev.SeatJoined) and last.rejoin and last.player == "Rita"
    assert again.history() == ["SELECT count(*) FROM plan"]
    done = send(host, again, "sql", sql="SELECT 3")  # its numbers go on from the last one
    assert done.status == "done"


def test_actions_come_back_as_the_events_they_recorded(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    saved = event_of(send(host, rita, "monitor", name="empty",
                          sql="SELECT * FROM endpoint WHERE active_plan_id IS NULL"))
    assert isinstance(saved, ev.MonitorSaved) and saved.name == "empty"
    declared = event_of(send(host, rita, "declare", finding="empty-dns-record"))
    assert isinstance(declared, ev.Declaration)
    hint = event_of(send(host, rita, "hint"))
    assert isinstance(hint, ev.Hint)


def test_facilitator_notes_are_private_and_injects_can_target_a_role(host: Host) -> None:
    host.call(lambda s: host.observer_note("Ana hesitated before the apply"))
    host.call(lambda s: s.send_inject("Page from the DynamoDB team", "check it", ("responder",)))
    host.pump()
    view = View(host.folder)
    public = view.new_events()
    assert not any(isinstance(e, ev.Note) for e in public)
    [inject] = [e for e in public if isinstance(e, ev.Inject) and e.id == "adhoc"]
    assert inject.to == ("responder",)
    assert any(isinstance(e, ev.Note) for e in read_events(host.folder).events)
    private = View(host.folder).new_events(private=True)
    assert any(isinstance(e, ev.Note) for e in private)


def test_the_end_is_published_and_the_store_says_so(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    score = host.end()
    assert score.kind == "score"
    events = rita.new_events()
    assert isinstance(events[-1], ev.ScoreEvent)
    assert rita.ended
    assert (host.folder / "debrief.md").exists()


def test_the_live_clock_runs_on_the_host_and_pauses(flagship: Exercise, tmp_path: Path) -> None:
    wall = [100.0]
    host = Host(flagship, [SeatSpec("responder", "responder")], pace=Pace.LIVE, speed=60.0,
                wall=lambda: wall[0])
    host.start()
    wall[0] += 5  # five simulated minutes at 60x
    host.pump()
    assert host.need().minute == 5
    host.pause()
    wall[0] += 60
    host.pump()
    assert host.need().minute == 5
    clock = View(host.folder).clock()
    assert clock.paused and clock.minute == 5
    host.resume()
    wall[0] += 1
    host.pump()
    assert host.need().minute == 6
    host.end()
    host.close()


def test_a_second_host_for_the_same_folder_is_refused(host: Host) -> None:
    with pytest.raises(SessionDbError, match="already exists"):
        SessionDb.create(host.folder / "session.db")


def test_payload_is_plain_json(host: Host) -> None:
    rita = joined(host, "responder", "Rita")
    command = rita.submit("sql", {"sql": "SELECT 1"})
    row = rita.db.command(command)
    assert row is not None and json.loads(row.payload) == {"role": "responder", "sql": "SELECT 1"}


@pytest.mark.parametrize("started_ignoring_ctrl_c", [False, True])
def test_raceday_host_headless_prints_how_to_join_and_scores_on_ctrl_c(
        flagship: Exercise, tmp_path: Path, started_ignoring_ctrl_c: bool) -> None:
    """Also when started as a shell starts `raceday host --headless &` (SIGINT ignored): the
    host says Ctrl-C ends the night, and a turns-paced night has no other end."""
    import signal
    import subprocess
    import sys
    import time

    def ignoring() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    process = subprocess.Popen(
        [sys.executable, "-m", "raceday", "host", "dynamodb-dns-race", "--headless",
         "--seats", "enactor-a,responder", "--pace", "turns", "--transcripts",
         str(tmp_path / "t")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=ignoring if started_ignoring_ctrl_c else None)
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(6)]
    join = [line.split() for line in lines if "raceday join" in line]
    assert len(join) == 2 and join[0][join[0].index("--role") + 1] == "enactor-a"
    token = join[1][join[1].index("--token") + 1]
    folder = Path(join[1][2])
    rita = Client(folder, token, "Rita", role="responder")
    assert rita.wait(rita.join()).status == "done"
    [result] = results_of(rita.wait(rita.submit("sql", {"sql": "SELECT 1"})))
    assert result.rows == ((1,),)
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "Score" in out and "joined as responder" in "".join(lines) + out
    rita.close()
