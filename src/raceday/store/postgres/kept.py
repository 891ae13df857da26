"""Kept checks: a check's answer reused while none of the tables it reads was written.

A night on PostgreSQL asks the exercise's checks (invariants, kill switches, the automation's
guards) thousands of times, one round trip each, and most of them are asked again before
anything they read changed. The store keeps each answer with the tables it read
(shapes.check_reads) and forgets it when one of them may have been written (what the
statement's shape says it may write, and what the server counted it wrote), and forgets
everything at once when it cannot tell: DDL, DO and CALL, a call of the world's own code, a
write to a table with a trigger or rule, a held transaction's end (committed or rolled
back), a probe (rolled back), a schema change the server counted. A statement that failed
inside its transaction (its COMMIT never ran) changed nothing any other connection saw.

Answers are neither used nor kept while a statement is running on another connection (its
commit may be visible before the store hears of it), nor kept if anything was forgotten
since the check was sent. The store's own connections are the world's only writers: each
session's world is a schema of its own, written through its store.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from raceday.store.postgres.catalog import Catalog
from raceday.store.postgres.shapes import check_reads, written
from raceday.store.results import Row

KEEP_VARIABLE = "RACEDAY_PG_KEEP_CHECKS"
"""Set to 0 to ask every check of the server every time (to compare, or to rule this out)."""
MOST_ROWS = 10_000
"""Answers longer than this are not kept (they are asked again)."""
MOST_ANSWERS = 4_096
"""Kept answers at most (a check asked with ever new values): beyond, all are forgotten."""
_VALUES = (str, int, float, bool, bytes, Decimal, date, datetime, time, timedelta, UUID)
"""Values an answer may hold to be kept: none a caller could change in place."""

Key = tuple[str, tuple[Any, ...]]
"""A check and its parameters (each value's type too)."""


@dataclass(frozen=True)
class Answer:
    """A check's answer and the tables it read."""

    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    reads: frozenset[str]


@dataclass(frozen=True)
class Figures:
    """What the kept checks did: answers given from memory, checks sent, forgettings."""

    kept: int = 0
    asked: int = 0
    resets: int = 0


@dataclass
class KeptChecks:
    """One world's kept answers. Thread-safe; `read` fetches the catalog when needed."""

    read: Callable[[], Catalog]
    enabled: bool = field(default_factory=lambda: os.environ.get(KEEP_VARIABLE, "1") != "0")
    _answers: dict[Key, Answer] = field(default_factory=dict)
    _reads: dict[str, frozenset[str] | None] = field(default_factory=dict)
    _catalog: Catalog | None = None
    _version: int = 0
    _running: int = 0
    _figures: Figures = field(default_factory=Figures)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def figures(self) -> Figures:
        return self._figures

    def answer(self, key: Key) -> Answer | None:
        """The kept answer of a check, if it still holds."""
        with self._lock:
            found = self._answers.get(key) if self._running == 0 else None
            if found is not None:
                self._figures = _add(self._figures, kept=1)
            else:
                self._figures = _add(self._figures, asked=1)
            return found

    def version(self) -> int:
        """Taken before a check is sent: `keep` keeps its answer only if nothing was
        forgotten since, and no statement ran meanwhile."""
        with self._lock:
            return self._version if self._running == 0 else -1

    def keep(self, key: Key, since: int, columns: Sequence[str], rows: Sequence[Row]) -> None:
        """Keep a check's answer, if it may be kept (the caller holds the store's lock, so
        reading the catalog here is safe)."""
        if not self.enabled or since < 0 or len(rows) > MOST_ROWS or not _plain(rows):
            return
        reads = self._check_reads(key[0])
        if reads is None:
            return
        with self._lock:
            if since == self._version and self._running == 0:
                if len(self._answers) >= MOST_ANSWERS:
                    self._answers.clear()
                self._answers[key] = Answer(tuple(columns), tuple(tuple(r) for r in rows), reads)

    @contextmanager
    def running(self) -> Iterator[None]:
        """Around a statement: no answer is given or kept until it is over (and forgotten)."""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def enter(self) -> None:
        """A statement (or a probe) starts: `running`, for what cannot be a `with`."""
        with self._lock:
            self._running += 1
            self._version += 1

    def leave(self) -> None:
        with self._lock:
            self._running -= 1
            self._version += 1

    def wrote(self, statement: str, tables: Sequence[str]) -> None:
        """A statement ended: forget the answers that read what it may have written (its
        shape's tables and `tables`, what the server counted it wrote); all if unsure.

        A statement that failed was rolled back, but is taken as written all the same: a
        cancel that reaches the server just after its COMMIT fails it with its rows kept."""
        with self._lock:
            catalog = self._catalog
            if not self._answers:
                return
            shaped = written(statement, catalog) if catalog is not None else None
            if shaped is None:
                self._reset()
                return
            touched = shaped | frozenset(tables)
            if touched:
                self._version += 1
                self._answers = {k: a for k, a in self._answers.items()
                                 if not (a.reads & touched)}

    def forget(self, *, schema: bool = True) -> None:
        """Forget every answer, and what the schema was unless `schema` is False (a
        transaction rolled back: no change of it was ever seen)."""
        with self._lock:
            self._reset(schema=schema)

    def _reset(self, *, schema: bool = True) -> None:
        self._version += 1
        self._answers.clear()
        if schema:
            self._reads.clear()
            self._catalog = None
        self._figures = _add(self._figures, resets=1)

    def _check_reads(self, sql: str) -> frozenset[str] | None:
        with self._lock:
            if sql in self._reads:
                return self._reads[sql]
            catalog = self._catalog
        if catalog is None:
            try:
                catalog = self.read()
            except Exception:  # a shortcut only: the check was answered, it is not kept
                return None
        reads = check_reads(sql, catalog)
        with self._lock:
            if self._catalog is None:
                self._catalog = catalog
            if self._catalog is catalog:
                self._reads[sql] = reads
                return reads
        return None  # the schema was forgotten while it was read


def _plain(rows: Sequence[Row]) -> bool:
    return all(v is None or isinstance(v, _VALUES) for row in rows for v in row)


def _add(figures: Figures, **more: int) -> Figures:
    now: Mapping[str, int] = {"kept": figures.kept, "asked": figures.asked, "resets": figures.resets}
    return Figures(**{k: now[k] + more.get(k, 0) for k in now})
