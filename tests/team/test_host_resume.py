"""A killed host comes back with `raceday resume`: the session as it was, the seats in
session.db with new tokens, the old tokens refused, everyone joins again and plays on."""

from __future__ import annotations

from pathlib import Path

from team_fixtures import SEATS, TOKENS, joined, make_host, send

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.team.client import Client, results_of
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

NEW_TOKENS = {seat: token + "-new" for seat, token in TOKENS.items()}


def test_a_killed_host_resumes_and_the_seats_join_again(flagship: Exercise,
                                                        tmp_path: Path) -> None:
    host = make_host(flagship, tmp_path / "transcripts")
    rita = joined(host, "responder", "Rita")
    send(host, rita, "sql", sql="UPDATE automation SET enabled = 0")
    send(host, rita, "monitor", name="empty", sql="SELECT name FROM endpoint WHERE 0")
    folder, minute = host.folder, host.need().minute
    late = rita.submit("sql", {"sql": "SELECT 1"})  # queued when the host dies
    host.need().close()  # killed: no score
    host.close()

    again = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "transcripts",
                 pace=Pace.TURNS, tokens=NEW_TOKENS)
    session = again.resume_session(folder)
    assert session.minute >= minute and set(session.monitors) == {"empty"}
    again.pump()
    assert rita.wait(late, timeout=5).status == "failed"  # from before the crash: send again
    old = send(again, rita, "sql", sql="SELECT 1")
    assert old.status == "refused"  # the old token opens nothing now
    assert "host restarted" in (old.error or "")
    rita2 = Client(folder, NEW_TOKENS["responder"], "Rita")
    joining = rita2.join()
    again.pump()
    rita2.wait(joining, timeout=5)
    done = send(again, rita2, "sql", sql="SELECT DISTINCT enabled FROM automation")
    assert done.status == "done"
    assert [list(r) for r in results_of(done)[0].rows] == [[0]]
    events = read_events(folder).events
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(isinstance(e, ev.SessionResumed) for e in events) == 1
    published = [e.seq for e in rita2.db.events_after(0)]
    assert published == list(range(1, len(published) + 1))  # no event published twice
    again.end()
    again.close()
