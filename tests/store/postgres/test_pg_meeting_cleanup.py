"""Issue 56: a meeting ends clean. A seat that made a large object with its own login once
kept its role alive ("role … cannot be dropped"), and with it both meeting schemas and every
seat's and the projector's login, usable with the join lines' passwords."""

from __future__ import annotations

import psycopg
import pytest

from raceday.store.postgres.session_db import PgSessionDb, split_address

pytestmark = pytest.mark.postgres


def _left(dsn: str, session: str) -> list[str]:
    pattern = f"rd\\_{session}\\_%"
    team = f"rd\\_team\\_{session}%"
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE %s UNION ALL "
            "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname LIKE %s",
            [pattern, team]).fetchall()
    return sorted(str(r[0]) for r in rows)


def test_a_seats_large_object_does_not_keep_the_meeting_alive(pg_dsn: str) -> None:
    db = PgSessionDb.create(pg_dsn)
    session = db.session
    seat = db.issue_login(1, "enactor-a")
    db.issue_login(None, None)
    with psycopg.connect(split_address(seat)[0], autocommit=True) as conn:
        made = conn.execute("SELECT lo_from_bytea(0, 'x')").fetchone()
    assert made is not None
    assert _left(pg_dsn, session)  # the meeting is there
    db.drop()
    assert _left(pg_dsn, session) == []
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM pg_catalog.pg_largeobject_metadata "
                            "WHERE oid = %s", [made[0]]).fetchone() == (0,)
