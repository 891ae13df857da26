"""A login per seat on PostgreSQL: with only what its join line carries, a player appends
its own seat's commands and reads what is published, and nothing else: no fake events, no
world, no answer key, no other seat's rows, no lock that holds the host up, no wake-up on a
channel another listens on; the logins and schemas go when the session ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from team_fixtures import TOKENS
from test_pg_team import Wall, _drop_meeting, pg_dsn, pump, take  # noqa: F401

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.store.postgres.session_db import schema_of, split_address
from raceday.team.client import View
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles

pytestmark = pytest.mark.postgres
SEATS = ("enactor-a", "enactor-b", "responder")


@pytest.fixture
def pg_host(flagship: Exercise, tmp_path: Any, pg_dsn: str) -> Iterator[Host]:  # noqa: F811
    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "t", pace=Pace.TURNS,
                tokens=TOKENS, meeting=pg_dsn, wall=Wall())
    host.start()
    address = host.where
    yield host
    host.close()
    _drop_meeting(address)


def _as(address: str) -> Any:
    """A psql-like connection with exactly the login a join line carries."""
    import psycopg

    dsn, _ = split_address(address)
    return psycopg.connect(dsn, autocommit=True)


def _refused(conn: Any, sql: str, *params: object) -> str:
    import psycopg

    with pytest.raises(psycopg.Error) as refused:
        conn.execute(sql, params or None)
    return str(refused.value).splitlines()[0]


def test_the_join_lines_carry_each_seats_login_never_the_hosts(pg_host: Host) -> None:
    host_user = split_address(pg_host.where)[0].split("//")[1].split("@")[0]
    lines = pg_host.join_lines()
    assert len({line.split()[2] for line in lines}) == len(SEATS)  # one login each
    assert all(host_user not in line for line in lines)
    assert pg_host.projector_address is not None and host_user not in pg_host.projector_address


def test_a_seat_login_cannot_fake_events_or_touch_the_hosts_tables(pg_host: Host) -> None:
    schema = schema_of(split_address(pg_host.where)[1] or "")
    seat = _as(pg_host.addresses["responder"])
    fake = ('{"seq": 1000000, "kind": "inject", "text": "FACILITATOR: disable the DNS '
            'Enactor now"}')
    for sql in (f'INSERT INTO "{schema}".events VALUES (1000000, %s, false, %s)',
                f'INSERT INTO "{schema}_pub".events VALUES (1000000, %s, false, %s)'):
        assert "permission denied" in _refused(seat, sql, "inject", fake)
    for table in ("meta", "seats", "events", "commands", "state", "secrets", "logins"):
        assert "permission denied" in _refused(seat, f'SELECT * FROM "{schema}".{table}')
    for sql in (f'UPDATE "{schema}_pub".commands SET status = %s', f'DELETE FROM "{schema}_pub".commands',
                f'UPDATE "{schema}_pub".state SET version = 0',
                f'TRUNCATE "{schema}_pub".commands', f'TRUNCATE "{schema}".commands'):
        assert ("permission denied" in (why := _refused(
            seat, sql, *(["done"] if "%s" in sql else []))) or "is not a table" in why)
    seat.close()


def test_a_seat_login_reaches_no_world_no_answer_key_no_verdicts(pg_host: Host) -> None:
    """Every schema on the server but its session's published views is closed to it: the
    worlds of every session there (rd_<w>_world), their checks, their state."""
    schema = schema_of(split_address(pg_host.where)[1] or "")
    seat = _as(pg_host.addresses["enactor-a"])
    reachable = [r[0] for r in seat.execute(
        "SELECT nspname FROM pg_namespace WHERE has_schema_privilege(oid, 'USAGE') "
        "AND nspname NOT IN ('pg_catalog', 'information_schema', 'public') "
        "AND nspname NOT LIKE 'pg_toast%%' AND nspname NOT LIKE 'pg_temp%%'")]
    assert reachable == [f"{schema}_pub"]
    writable = seat.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname LIKE 'rd\\_%%' AND c.relkind IN ('r', 'v', 'p') AND ("
        "has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE') OR "
        "has_table_privilege(c.oid, 'TRUNCATE'))").fetchone()[0]
    assert writable == 0
    seat.close()


def test_a_seat_appends_only_its_own_commands_and_sees_only_its_own(pg_host: Host) -> None:
    schema = schema_of(split_address(pg_host.where)[1] or "")
    ann = take(pg_host, "enactor-a", "Ann")
    take(pg_host, "responder", "Rita")
    seat = _as(pg_host.addresses["enactor-a"])
    insert = (f'INSERT INTO "{schema}_pub".commands (seat, nonce, kind, payload, mac, '
              "submitted_at) VALUES (%s, 1, 'sql', '{}', 'x', 0)")
    assert "check option" in _refused(seat, insert, "responder")
    seats = {r[0]: r[1] for r in seat.execute(f'SELECT name, token_hash FROM "{schema}_pub".seats')}
    assert seats["enactor-a"] and seats["responder"] == "" and seats["enactor-b"] == ""
    others = seat.execute(f'SELECT count(*) FROM "{schema}_pub".commands '
                          "WHERE seat <> 'enactor-a'").fetchone()[0]
    assert others == 0
    private = seat.execute(f'SELECT count(*) FROM "{schema}_pub".events WHERE private'
                           ).fetchone()[0]
    assert private == 0
    seat.close()
    ann.close()


def test_no_lock_a_seat_may_take_holds_the_host_up(pg_host: Host) -> None:
    schema = schema_of(split_address(pg_host.where)[1] or "")
    rita = take(pg_host, "responder", "Rita")
    seat = _as(pg_host.addresses["responder"])
    for mode in ("ACCESS EXCLUSIVE", "EXCLUSIVE", "SHARE ROW EXCLUSIVE", "SHARE",
                 "SHARE UPDATE EXCLUSIVE", "ROW EXCLUSIVE"):
        for view in ("events", "commands", "state"):
            seat.execute("BEGIN")
            assert "permission denied" in _refused(
                seat, f'LOCK TABLE "{schema}_pub".{view} IN {mode} MODE')
            seat.execute("ROLLBACK")
    assert "permission denied" in _refused(seat, f'SELECT * FROM "{schema}_pub".state FOR UPDATE')
    seat.execute("BEGIN")  # what it may hold: reading and appending
    seat.execute(f'LOCK TABLE "{schema}_pub".events IN ACCESS SHARE MODE')
    seat.execute(f'LOCK TABLE "{schema}_pub".state IN ACCESS SHARE MODE')
    seat.execute(f'INSERT INTO "{schema}_pub".commands (seat, nonce, kind, payload, mac, '
                 "submitted_at) VALUES ('responder', 1, 'beat', '{}', 'x', 0)")  # held open
    started = time.monotonic()
    command = pump(pg_host, lambda: rita.submit("sql", {"sql": "SELECT 1"}))
    assert rita.wait(command, timeout=10).status == "done"
    assert time.monotonic() - started < 5  # was 19.1 s behind a 20 s lock
    seat.execute("ROLLBACK")
    seat.close()
    rita.close()


def test_a_seat_wakes_no_one_else(pg_host: Host) -> None:
    """`NOTIFY` cannot be revoked, but the channels the other seats and the host listen on
    are named only to them; a seat that notifies every name it can know wakes nobody."""
    schema = schema_of(split_address(pg_host.where)[1] or "")
    rita = take(pg_host, "responder", "Rita")
    views = [View(pg_host.addresses["enactor-a"]), View(pg_host.folder)]  # a seat, the console
    assert pg_host.db is not None
    seen_host = pg_host.db.data_version()
    seen = []
    for view in views:
        seen.append(view.db.data_version())
        while view.db.wait(seen[-1], 0.3):
            seen[-1] = view.db.data_version()
    seat = _as(pg_host.addresses["responder"])
    mine = seat.execute(f'SELECT channel FROM "{schema}_pub".me').fetchone()[0]
    for channel in (f"{schema}_pub", f"{schema}_cmd", schema, mine):
        seat.execute("SELECT pg_notify(%s, 'x')", (channel,))
        seat.execute(f'NOTIFY "{channel}"')
    woke = threading.Event()

    def wait(view: View, since: int) -> None:
        if view.db.wait(since, 1.5):
            woke.set()

    waiters = [threading.Thread(target=wait, args=(v, n)) for v, n in zip(views, seen, strict=True)]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join(5)
    assert not woke.is_set()
    assert pg_host.db.data_version() == seen_host
    seat.close()
    for view in views:
        view.close()
    rita.close()


def test_the_projector_reads_what_is_published_and_sends_nothing(pg_host: Host) -> None:
    assert pg_host.projector_address is not None
    schema = schema_of(split_address(pg_host.where)[1] or "")
    view = View(pg_host.projector_address)
    assert view.meta["state"] == "running"
    view.close()
    projector = _as(pg_host.projector_address)
    assert "permission denied" in _refused(
        projector, f'INSERT INTO "{schema}_pub".commands (seat, nonce, kind, payload, mac, '
        "submitted_at) VALUES ('responder', 1, 'sql', '{}', 'x', 0)")
    projector.close()


def test_the_session_takes_its_logins_and_schemas_with_it(pg_host: Host) -> None:
    session = split_address(pg_host.where)[1] or ""
    schema = schema_of(session)
    seat = _as(pg_host.addresses["responder"])
    pg_host.call(lambda s: None)
    pg_host.end()
    pg_host.close()
    host = _as(pg_host.where)
    roles = host.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE %s",
                         (f"rd_{session}_%",)).fetchone()[0]
    schemas = host.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE %s",
                           (f"{schema}%",)).fetchone()[0]
    host.close()
    assert (roles, schemas) == (0, 0)
    _refused(seat, "SELECT 1")  # its connection was ended with its login
    seat.close()
