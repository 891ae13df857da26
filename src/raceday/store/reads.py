"""Which tables a trusted query reads, asked of SQLite as it prepares the query.

The session keeps an exercise check's answer while none of the tables it reads has been
written (engine.session): in a world of 10k endpoints one check is a scan of every endpoint,
and the checks ran after every write of the automation whether it touched their tables or
not. SQLite tells the authorizer of every table a statement reads (through views, subqueries
and CTEs too: a view the team redefined included) and of every function it calls while it
prepares the statement; `EXPLAIN` prepares it without running it. A query whose answer can
change with no write to a table (a clock, random(), a pragma's virtual table, another
database) has no such set: None.
"""

from __future__ import annotations

import sqlite3

UNSTEADY_FUNCTIONS = frozenset({
    "random", "randomblob", "changes", "last_insert_rowid", "total_changes", "date", "time",
    "datetime", "julianday", "strftime", "unixepoch", "timediff", "current_time",
    "current_date", "current_timestamp"})
"""Functions whose answer changes with no write to any table (the clock, chance, or the
connection's own last statement)."""

# Tables read by name that are not the world's rows: virtual tables whose answer follows no
# write (a pragma's, the page statistics), and SQLite's own bookkeeping (sqlite_sequence,
# sqlite_stat1: written with no authorizer call). The schema (sqlite_master) changes only
# with DDL, which every caller keys on.
_UNSTEADY_PREFIXES = ("pragma_", "json_each", "json_tree", "dbstat", "sqlite_", "generate_series")
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})
_QUIET_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE})


class ReadCollector:
    """An authorizer that allows everything and notes what a statement reads and calls."""

    def __init__(self) -> None:
        self.tables: set[str] = set()
        self.steady = True

    def __call__(self, action: int, arg1: str | None, arg2: str | None, db: str | None,
                 source: str | None) -> int:
        if action == sqlite3.SQLITE_READ:
            if db not in (None, "main"):
                self.steady = False  # the temp database: nothing of the world's
            elif arg1:
                name = arg1.lower()
                if name.startswith(_UNSTEADY_PREFIXES) and name not in _SCHEMA_TABLES:
                    self.steady = False
                else:
                    self.tables.add(name)
        elif action == sqlite3.SQLITE_FUNCTION:
            if (arg2 or "").lower() in UNSTEADY_FUNCTIONS:
                self.steady = False
        elif action not in _QUIET_ACTIONS:
            self.steady = False  # a pragma, a write, anything but a read: not a plain query
        return sqlite3.SQLITE_OK

    def result(self) -> frozenset[str] | None:
        return frozenset(self.tables) if self.steady else None
