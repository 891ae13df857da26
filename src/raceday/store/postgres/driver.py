"""psycopg, imported here only: store.py imports this module when a PostgreSQL world is used.

`ExtendedCursor` always speaks the extended protocol. psycopg sends a query without
parameters with the simple protocol, which runs every statement of `select 1; set role
none`; the extended protocol takes one statement per message, so the server refuses a
second one whatever raceday's splitter thought.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from psycopg import ClientCursor, Connection, Cursor

Error = psycopg.Error
__all__ = ["ClientCursor", "Connection", "Error", "ExtendedCursor", "connect"]


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


def connect(dsn: str, user: str | None = None, password: str | None = None) -> Connection[Any]:
    """An autocommit connection (raceday opens and ends every transaction itself), as the
    DSN's login or as `user`."""
    extra: dict[str, Any] = {"user": user, "password": password} if user is not None else {}
    return Connection.connect(dsn, autocommit=True, application_name="raceday", connect_timeout=10,
                              **extra)
