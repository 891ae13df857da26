"""A team member who can write session.db rewrites the seat table: they take no other seat
and none of the host's powers; the host puts back the seats it issued, the player locked out
joins again, and the tamper is recorded and said in one line."""

from __future__ import annotations

import sqlite3

import pytest
from team_fixtures import TOKENS, joined, send

from raceday.store.team_db import SESSION_DB
from raceday.team.client import Client, TeamError
from raceday.team.host import Host
from raceday.team.seats import token_hash
from raceday.transcript import events as ev


def _write(host: Host, sql: str, *params: object) -> None:
    conn = sqlite3.connect(host.folder / SESSION_DB)
    with conn:
        conn.execute(sql, params)
    conn.close()


def test_a_rewritten_seat_is_put_back_and_the_tamperer_takes_nothing(host: Host) -> None:
    joined(host, "responder", "Rita")
    # enactor-a's player points the responder's row at their own token: Rita is locked out
    _write(host, "UPDATE seats SET token_hash = ? WHERE name = 'responder'",
           token_hash(TOKENS["enactor-a"]))
    with pytest.raises(TeamError, match="that token opens no seat"):
        Client(host.folder, TOKENS["responder"], "Rita")
    thief = Client(host.folder, TOKENS["enactor-a"], "Eve")
    assert thief.seat in ("enactor-a", "responder")
    thief.seat, thief.role = "responder", "responder"  # acting as Rita's seat
    row = send(host, thief, "sql", sql="UPDATE automation SET enabled = 0")
    assert row.status == "refused"
    assert row.error == ("the command is not signed with seat responder's token: its row in "
                         "the seat table was rewritten, and the host keeps the seats it issued")
    # the host put the seat back: Rita joins again with her own token and plays
    rita = joined(host, "responder", "Rita")
    assert send(host, rita, "sql", sql="SELECT count(*) FROM endpoint").status == "done"
    refused = [e for e in host.need().events if isinstance(e, ev.CommandRefused)
               and e.action == "seat table"]
    assert [e.seat for e in refused] == ["responder"]
    assert "was rewritten by someone other than the host" in refused[0].error
    thief.close()
    rita.close()


def test_an_added_seat_opens_nothing_not_the_hosts_powers(host: Host) -> None:
    """A row for a 'facilitator' seat with one's own token: its commands are refused (no
    such seat), the end of the session among them."""
    _write(host, "INSERT INTO seats (name, role, token_hash) VALUES ('facilitator', "
                 "'responder', ?)", token_hash("mine"))
    forger = Client(host.folder, "mine", "Mallory")
    for kind in ("join", "end"):
        row = send(host, forger, kind)
        assert row.status == "refused"
        assert row.error == "no seat 'facilitator' in this session"
    assert not host.ended
    added = [e for e in host.need().events if isinstance(e, ev.CommandRefused)
             and e.action == "seat table"]
    assert len(added) == 1 and "'facilitator' was added to the seat table" in added[0].error
    forger.close()
