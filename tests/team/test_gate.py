"""The meeting refuses what no seat would send: unknown seats, oversized fields and floods
are refused before they are stored or run, one short line each, and the transcript keeps
only a few refusals per seat per minute."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from team_fixtures import TOKENS, joined

from raceday.engine.session import SessionError
from raceday.exercise.model import Exercise
from raceday.store.session_db import SessionDb
from raceday.store.team_db import MAX_QUEUED_PER_SEAT, SESSION_DB, CommandRow, SessionDbError
from raceday.team.gate import Bounds, Gate
from raceday.team.host import Host
from raceday.team.seats import SeatSpec, sign
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

BIG = "s" * 200_000


def _row(seat: str, nonce: int = 1, kind: str = "sql", payload: str = "{}",
         mac: str = "0" * 64) -> CommandRow:
    return CommandRow(0, seat, nonce, kind, payload, mac, "queued", time.time())


def _refusals(host: Host) -> list[ev.CommandRefused]:
    return [e for e in read_events(host.folder).events if isinstance(e, ev.CommandRefused)]


@pytest.mark.parametrize("row, reason", [
    (_row(BIG), "no such seat in this session"),
    (_row("nobody"), "no such seat in this session"),
    (_row("responder", kind="k" * 100), "CHECK constraint failed"),
    (_row("responder", payload="x" * 1_300_000), "CHECK constraint failed"),
])
def test_session_db_refuses_at_the_insert_what_no_seat_sends(host: Host, row: CommandRow,
                                                             reason: str) -> None:
    db = SessionDb.open(host.folder)
    with pytest.raises(SessionDbError, match=reason) as refused:
        db.insert_raw(row)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 300
    assert db.queued() == []
    db.close()


def test_a_seat_cannot_queue_a_flood(host: Host) -> None:
    db = SessionDb.open(host.folder)
    for n in range(MAX_QUEUED_PER_SEAT):
        db.insert_raw(_row("responder", nonce=n + 1))
    with pytest.raises(SessionDbError, match="too many commands of this seat are waiting"):
        db.insert_raw(_row("responder", nonce=999))
    db.insert_raw(_row("enactor-a"))  # another seat is not held up by it
    db.close()


def _forge_past_the_store(folder: Path, rows: list[CommandRow]) -> None:
    """What a player with the file can do: drop the trigger, ignore the CHECKs, insert."""
    conn = sqlite3.connect(folder / SESSION_DB)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    conn.execute("DROP TRIGGER commands_from_seats")
    conn.executemany("INSERT INTO commands (seat, nonce, kind, payload, mac, submitted_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     [(r.seat, r.nonce, r.kind, r.payload, r.mac, r.submitted_at)
                      for r in rows])
    conn.commit()
    conn.close()


def test_100_forged_rows_with_200_kb_seat_names_leave_a_few_short_lines(host: Host) -> None:
    events = host.folder / "events.jsonl"
    before = events.stat().st_size
    _forge_past_the_store(host.folder, [_row(f"{n}{BIG}", nonce=n) for n in range(100)])
    started = time.monotonic()
    while host.pump():
        pass
    assert time.monotonic() - started < 10
    db = SessionDb.open(host.folder)
    rows = [db.command(i) for i in range(1, 101)]
    assert all(r is not None and r.status == "refused" for r in rows)
    assert all(len(r.error or "") < 200 and "\n" not in (r.error or "") for r in rows if r)
    assert "seat name is 200001 characters (at most 64)" in (rows[0].error or "")  # type: ignore[union-attr]
    db.close()
    refused = _refusals(host)
    assert len(refused) == Bounds().refusals_recorded_per_minute
    assert all(len(r.seat) <= 65 for r in refused)
    assert events.stat().st_size - before < 20_000  # was 40 MB


def test_unknown_seats_share_one_bound(host: Host) -> None:
    _forge_past_the_store(host.folder, [_row(f"ghost-{n}", nonce=n) for n in range(30)])
    while host.pump():
        pass
    refused = _refusals(host)
    assert [r.error for r in refused][:1] == ["no seat 'ghost-0' in this session"]
    assert len(refused) == Bounds().refusals_recorded_per_minute


def test_a_signed_flood_is_bounded_per_seat_per_minute(flagship: Exercise,
                                                       tmp_path: Path) -> None:
    now = [1000.0]
    host = Host(flagship, [SeatSpec("responder", "responder")], tokens=TOKENS,
                transcripts=tmp_path / "t", wall=lambda: now[0])
    host.start()
    host.gate = Gate(host.seats.keys(), Bounds(commands_per_minute=20))
    try:
        rita = joined(host, "responder", "Rita")
        ids = []
        for _ in range(40):  # beats: signed, cheap, nothing else in them
            ids.append(rita.submit("beat", {}))
            host.pump()
        statuses = [rita.wait(i).status for i in ids]
        assert statuses.count("done") == 19  # the join was the minute's first
        assert statuses.count("refused") == 21
        assert "more than 20 commands in a minute from seat responder" in (
            rita.wait(ids[-1]).error or "")
        assert len(_refusals(host)) == Bounds().refusals_recorded_per_minute
        now[0] += 61  # the next minute has room again
        command = rita.submit("sql", {"sql": "SELECT 1"})
        host.pump()
        assert rita.wait(command).status == "done"
    finally:
        host.close()


def test_a_host_gives_out_no_seat_name_a_client_could_not_send(flagship: Exercise,
                                                              tmp_path: Path) -> None:
    for name in ("x" * 65, "a\x1b]52;c;QQ==\x07", ""):
        with pytest.raises(SessionError, match="a seat's name must be 1 to 64"):
            Host(flagship, [SeatSpec(name, "responder")], transcripts=tmp_path)


def test_a_signature_still_binds_the_seat(host: Host) -> None:
    joined(host, "responder", "Rita")
    db = SessionDb.open(host.folder)
    payload = '{"sql": "SELECT 1"}'
    nonce = time.time_ns()
    good = db.insert_raw(_row("responder", nonce=nonce, payload=payload,
                              mac=sign(TOKENS["responder"], "responder", nonce, "sql", payload)))
    host.pump()
    row = db.command(good)
    assert row is not None and row.status == "done"
    db.close()
