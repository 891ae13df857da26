"""A role's own connection to the world (its login, a member of that role only), what the
store keeps of it between statements, and what is said when the server ended it."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from raceday.store.base import StoreError
from raceday.store.postgres.world import SessionNames, connect, server_message
from raceday.store.results import StatementResult

if TYPE_CHECKING:
    import psycopg


@dataclass
class Login:
    conn: psycopg.Connection[Any]
    role: str  # the NOLOGIN role the login acts as
    lock: threading.Lock = field(default_factory=threading.Lock)
    """One statement at a time on this connection; other roles' statements run beside it."""
    held: str | None = None
    """The isolation level of a transaction the role holds open (`begin`), or None."""
    counts: dict[str, int] = field(default_factory=dict)
    """Rows this connection had written per world table (the server's count), before the
    statement now running: what it wrote is the difference."""
    scans: dict[str, int] = field(default_factory=dict)
    """Scans of each world table (sequential and index) before the statement: what it read."""
    found_at: int | None = None
    """`catalog_writes` when the counts now being read found the tables by the schema's name."""
    stopped: bool = False
    """Its server process was ended by raceday (a statement that ignored its cancel)."""


def log_in(dsn: str, role: str, passwords: Mapping[str, str]) -> Login:
    """A new connection acting as `role` (a session's NOLOGIN role), on its login."""
    login = SessionNames.login(role)
    try:
        conn = connect(dsn, user=login, password=passwords[login])
    except StoreError as exc:
        raise StoreError(
            f"cannot log in as {login}: {exc} (raceday's roles log in with a password: the "
            "server must accept password logins from here, e.g. host=127.0.0.1 in the DSN)"
        ) from exc
    return Login(conn, role)


def lost(login: Login, statement: str, exc: BaseException | None) -> StatementResult:
    """The connection is gone (the server ended an idle transaction, or restarted): say so;
    the role's next statement logs in again. Anything else is a bug and is raised."""
    if not (login.conn.closed or login.conn.broken):
        assert exc is not None
        raise exc
    ended = " (its open transaction was rolled back)" if login.held else ""
    login.held = None
    if login.stopped:  # (a new login replaces this one: its flag goes with it)
        return StatementResult(sql=statement, error="statement stopped: it ran on past its time "
                               "limit and the cancel, so raceday ended its connection (and its "
                               f"locks){ended}; the next statement reconnects", error_kind="timeout")
    why = f": {server_message(exc)}" if exc is not None else ""
    return StatementResult(sql=statement, error=f"the connection to PostgreSQL was lost{ended}{why}; "
                           "the next statement reconnects", error_kind="error")
