"""psycopg, imported here only: store.py imports this module when a PostgreSQL world is used.

`ExtendedCursor` always speaks the extended protocol. psycopg sends a query without
parameters with the simple protocol, which runs every statement of `select 1; set role
none`; the extended protocol takes one statement per message, so the server refuses a
second one whatever raceday's splitter thought.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import ClientCursor, Connection, Cursor

Error = psycopg.Error
__all__ = ["ClientCursor", "Connection", "Error", "ExtendedCursor", "connect", "full_pauses",
           "server_full"]


class _PipelineAborted(logging.Filter):
    """psycopg logs a warning when a pipeline whose statement failed is closed: the rest of
    it was not run ("pipeline aborted"). That is how raceday's pipelines end when a player's
    statement fails, and the failure itself is the statement's result: not news."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.getMessage().startswith("error ignored terminating")
                    and record.getMessage().endswith("pipeline aborted"))


logging.getLogger("psycopg").addFilter(_PipelineAborted())


class ExtendedCursor(Cursor[Any]):
    def _execute_send(self, query: Any, *, force_extended: bool = False, binary: bool | None = None) -> None:
        super()._execute_send(query, force_extended=True, binary=binary)


SERVER_FULL = ("too many clients already", "remaining connection slots are reserved",
               "too many connections for role")
"""How the server refuses a login it has no connection for (SQLSTATE 53300, which libpq
gives as its text only)."""

FULL_WAIT_S = 30.0
"""At most this long a login the server refused for want of a connection is tried again."""


def server_full(message: str) -> bool:
    return any(words in message for words in SERVER_FULL)


def full_pauses() -> Iterator[float]:
    """The pauses between logins a full server refused: 50 ms doubling to 1 s, FULL_WAIT_S
    in all. A session's end logs in some thirty times (each replayed night's roles): three
    teams ending at once took every slot of a server's default 100, and a replay that could
    not log in credited no guard at all."""
    waited, pause = 0.0, 0.05
    while waited < FULL_WAIT_S:
        yield pause
        waited += pause
        pause = min(pause * 2, 1.0)


def connect(dsn: str, user: str | None = None, password: str | None = None) -> Connection[Any]:
    """An autocommit connection (raceday opens and ends every transaction itself), as the
    DSN's login or as `user`; a login the server refuses for want of a free connection is
    tried again (`full_pauses`), the worlds' and the team sessions' alike."""
    extra: dict[str, Any] = {"user": user, "password": password} if user is not None else {}
    pauses = full_pauses()
    while True:
        try:
            return Connection.connect(dsn, autocommit=True, application_name="raceday",
                                      connect_timeout=10, **extra)
        except Error as exc:
            pause = next(pauses, None) if server_full(str(exc)) else None
            if pause is None:
                raise
        time.sleep(pause)
