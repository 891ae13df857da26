"""What every world store shares: the statement loop, its limits and its verdicts.

SQLite's `WorldStore` and PostgreSQL's `PostgresStore` differ in how a statement is guarded
and run (an authorizer on a role's connection; a PostgreSQL role with GRANTs, one
transaction a statement). What a submission is, how it is cut into statements, when it is
refused whole, where it stops and which writes were break-glass is decided here, once, so
the two cannot drift apart. A database's store fills in the hooks (`_role_call`, `_split`,
`_statement`, ...); the engine sees only the `Store` protocol (protocol.py) this implements.

Harlequin's adapters were the model: one abstract base, defaults where a database has
nothing to add, each database's differences in its own module.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Generic, Self, TypeVar

from raceday.errors import MachineError, RacedayError
from raceday.store.protocol import Backend, RoleRights
from raceday.store.results import Answer, ErrorKind, Row, StatementResult, TableInfo

MAX_SUBMISSION_CHARS = 1_000_000
"""A submission longer than this is refused before it is even split."""
MAX_STATEMENTS = 200
"""A submission of more statements than this is refused whole, before any of them runs (one
paste of 100,000 `SELECT 1;` would otherwise be 100,000 results and events)."""
MAX_ERROR_CHARS = 300
"""Error messages are one line; a RAISE text can be as long as any string."""
MAX_RESULT_BYTES = 16_000_000
"""Rows stop being collected once a result holds this much text and blob data."""


class StoreError(RacedayError):
    """A trusted call (app_query, create, open) failed; `kind` is an error_kind."""

    def __init__(self, message: str, kind: ErrorKind = "error") -> None:
        super().__init__(message)
        self.kind = kind


class WorldUnavailable(StoreError, MachineError):
    """The world cannot be read or written any more: its file was deleted or moved, the disk
    is full, an I/O error. The session cannot go on; its transcript is whole."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "machine")


Handle = TypeVar("Handle")
"""A role's connection as a database's store keeps it."""


_RAISED = threading.local()
"""Per thread, the stores whose limit `limit_raised_to` raised there (by id): the limit."""


class StoreBase(ABC, Generic[Handle]):
    """One world and the roles that play in it; a database's store subclasses it."""

    backend: ClassVar[Backend]
    reads_complete: ClassVar[bool] = False
    """Whether a result's `reads` and `writes` name every table the statement read and wrote
    (then a session may keep a monitor's answer while none of its tables was written)."""
    writes_complete: ClassVar[bool] = False
    """Whether a result's `writes` name every world table the statement wrote (rows its
    triggers or functions changed included), and `catalog_writes` counts every statement that
    changed the schema in any way: then a trusted read whose tables `reads_of` names is kept
    while none of them is written (`engine.checks`)."""
    catalog_writes: int = 0
    """Statements that wrote the server's catalogs (PostgreSQL: DDL, TRUNCATE, a function
    doing either), whatever their keyword said; a kept answer holds only while it stands."""
    asks_together: ClassVar[bool] = False
    """Whether `app_queries` answers several checks in less time than asking each (a server's
    round trips); a session then asks a round's checks at once."""
    can_fork: ClassVar[bool] = False
    """Whether `fork` makes a new world from this one's schema (the replay's PostgreSQL
    path); SQLite's replay copies the file instead (`backup_to`)."""

    @property
    def world_file(self) -> Path | None:
        """The file that holds the world, when one does: None here (the world lives on a
        server, and a replay forks it there: `fork`)."""
        return None

    row_cap: int
    _roles: dict[str, RoleRights]
    _closed: bool
    _players_limit_s: float = 2.0

    @property
    def closed(self) -> bool:
        """Whether `close` ran (or `drop`): statements after it are refused."""
        return self._closed

    @property
    def time_limit_s(self) -> float:
        """How long a statement may run: the players' limit, or more in this thread while it
        runs the exercise's history (`limit_raised_to`)."""
        raised = getattr(_RAISED, "limits", {}).get(id(self))
        return self._players_limit_s if raised is None else raised

    @time_limit_s.setter
    def time_limit_s(self, seconds: float) -> None:
        self._players_limit_s = seconds

    @property
    def work_budget(self) -> int | None:
        """How many steps of the database's work a statement may take in this thread (None:
        no budget, only the time limit): see `automation_limits`."""
        budget: int | None = getattr(_RAISED, "steps", {}).get(id(self))
        return budget

    @contextmanager
    def automation_limits(self, steps: int, seconds: float) -> Iterator[None]:
        """Statements this thread runs inside are the automation's: cut after `steps` steps
        of work where the database counts them (SQLite), the same on any machine, with
        `seconds` of wall time as the last resort (PostgreSQL's only limit). The players'
        limit is wall time, and on a loaded machine it cut the automation short: the night
        then depended on the machine's speed."""
        with self._this_thread("steps", steps), self.limit_raised_to(seconds):
            yield

    @contextmanager
    def limit_raised_to(self, seconds: float) -> Iterator[None]:
        """Statements this thread runs inside may take up to `seconds` (a limit never
        lowered): the exercise's own history, trusted SQL run once, is not cut short
        by a limit meant for the players' statements. Only this thread's: a night played
        beside it (a baseline played ahead reads the limit to make its worlds) keeps the
        players' limit."""
        with self._this_thread("limits", max(self.time_limit_s, seconds)):
            yield

    @contextmanager
    def _this_thread(self, table: str, value: float) -> Iterator[None]:
        """`value` for this store in this thread's `table` of _RAISED while inside, then what
        was there before (nothing, or an outer raise's)."""
        values: dict[int, float] = _RAISED.__dict__.setdefault(table, {})
        before = values.get(id(self))
        values[id(self)] = value
        try:
            yield
        finally:
            if before is None:
                del values[id(self)]
            else:
                values[id(self)] = before

    # -- the statement loop, written once -------------------------------------------------

    def execute(self, role: str, sql: str, params: Mapping[str, Any] | None = None) -> list[StatementResult]:
        """Run a submission as `role`, statement by statement, stopping at the first error.

        Never raises for anything in `sql` or `params`: every problem is an error result.
        Statements after a failed one are not run and get no result. Raises KeyError for a
        role the store was not given (a bug in the caller, not player input).
        """
        with self._role_call(role) as handle:
            refusal = check_text(sql)
            if refusal is not None:
                return [refusal]
            self._prepare(handle)
            statements = self._split(sql)
            if len(statements) > MAX_STATEMENTS:
                return [too_many(sql, len(statements))]
            results: list[StatementResult] = []
            for statement in statements:
                result = self._with_break_glass(role, self._statement(handle, statement, params))
                results.append(result)
                if not result.ok:
                    break
            return results

    def probe(
        self, role: str, statements: Sequence[str], params: Mapping[str, Any] | None = None
    ) -> list[StatementResult]:
        """Run statements as `role` and roll everything back: would they pass, what would change.

        Used by the replay's good-path check and by "what if" questions. Stops at the first
        error like `execute`; the world is unchanged afterwards whatever happened. Not while
        the role holds a transaction open: the probe's rollback would end it.
        """
        with self._role_call(role) as handle:
            if self._held(handle) is not None:
                return [StatementResult(sql=statements[0] if statements else "", error_kind="error",
                                        error=f"{role} holds a transaction: commit or roll it "
                                              "back first")]
            self._prepare(handle)
            results: list[StatementResult] = []
            self._probe_begin(handle)
            try:
                for sql in statements:
                    refusal = check_text(sql)
                    if refusal is not None:
                        results.append(refusal)
                        break
                    split = self._split(sql)
                    if len(split) > MAX_STATEMENTS:
                        results.append(too_many(sql, len(split)))
                        break
                    if not self._probe_run(role, handle, split, params, results):
                        break
            finally:
                self._probe_end(handle, results)
            return results

    def _probe_run(self, role: str, handle: Handle, statements: Sequence[str],
                   params: Mapping[str, Any] | None, results: list[StatementResult]) -> bool:
        """Run one submission's statements in the probe; False once nothing more may run."""
        for statement in statements:
            result = self._with_break_glass(role, self._probe_statement(handle, statement, params))
            results.append(result)
            if not result.ok or self._probe_over(handle):
                return False
        return True

    def _with_break_glass(self, role: str, result: StatementResult) -> StatementResult:
        """The result with every world table it wrote under a break-glass right named.

        Decided here, for every database: a table the role may write only by break-glass
        (what the store saw, e.g. SQLite's authorizer, plus what the rights say of the
        tables it wrote). The session records `bool(result.break_glass)`.
        """
        rights = self._roles.get(role)
        if rights is None or not rights.break_glass or not result.writes:
            return result
        extra = tuple(t for t in result.writes if t in rights.break_glass and t not in rights.write
                      and t not in result.break_glass)
        return replace(result, break_glass=result.break_glass + extra) if extra else result

    # -- what each database fills in ---------------------------------------------------------

    @abstractmethod
    def _role_call(self, role: str) -> AbstractContextManager[Handle]:
        """The role's connection, held for one call (the store's checks done: not closed,
        the world still there, a cancel meant for an earlier call forgotten)."""

    @abstractmethod
    def _split(self, sql: str) -> list[str]:
        """The submission's statements, in the database's own dialect."""

    @abstractmethod
    def _statement(self, handle: Handle, statement: str,
                   params: Mapping[str, Any] | None) -> StatementResult:
        """Run one statement of a submission (in the role's held transaction if it holds
        one: an error then ends it, and says so)."""

    @abstractmethod
    def _held(self, handle: Handle) -> str | None:
        """How the transaction the role holds open began, or None."""

    @abstractmethod
    def _probe_begin(self, handle: Handle) -> None:
        """Open what the probe rolls back."""

    @abstractmethod
    def _probe_statement(self, handle: Handle, statement: str,
                         params: Mapping[str, Any] | None) -> StatementResult:
        """Run one statement inside the probe."""

    @abstractmethod
    def _probe_end(self, handle: Handle, results: Sequence[StatementResult]) -> None:
        """Roll the probe back, whatever happened."""

    def _prepare(self, handle: Handle) -> None:
        """Before a submission's first statement (SQLite re-reads its names if needed)."""

    def _probe_over(self, handle: Handle) -> bool:
        """Whether the probe's transaction ended under it (a trigger's RAISE(ROLLBACK))."""
        return False

    # -- the rest of the Store protocol --------------------------------------------------------

    @abstractmethod
    def app_query(
        self, sql: str, params: Mapping[str, Any] | None = None
    ) -> tuple[tuple[str, ...], list[Row]]: ...

    @abstractmethod
    def interrupt(self) -> None: ...

    @abstractmethod
    def begin(self, role: str, isolation: str | None = None) -> StatementResult: ...

    @abstractmethod
    def commit(self, role: str) -> StatementResult: ...

    @abstractmethod
    def rollback(self, role: str) -> StatementResult: ...

    @abstractmethod
    def holds(self, role: str) -> str | None: ...

    @abstractmethod
    def tables(self) -> list[TableInfo]: ...

    @abstractmethod
    def close(self) -> None: ...

    def app_queries(self, sqls: Sequence[str]) -> list[Answer]:
        """Each of several parameterless trusted queries' answers, or the error it raised
        (a MachineError is raised): here asked one after another."""
        answers: list[Answer] = []
        for sql in sqls:
            try:
                answers.append(self.app_query(sql))
            except MachineError:
                raise
            except RacedayError as exc:
                answers.append(exc)
        return answers

    def reads_of(self, sql: str, params: Mapping[str, Any] | None = None) -> frozenset[str] | None:
        """The tables a trusted query reads, when its answer can change only with them; None
        when the store cannot say (then the session asks the query again)."""
        return None

    def backup_to(self, path: Path) -> None:
        """Write a copy of the world to a file (the replay's SQLite copy)."""
        raise StoreError(f"a {self.backend} world cannot be copied to a file")

    def fork(self, seed_sql: str, renumber: str = "") -> tuple[Self, list[str]]:
        """A new world with this one's schema and the exercise's seed rows (`can_fork`)."""
        raise StoreError(f"a {self.backend} world cannot be forked")

    @property
    def role_ids(self) -> tuple[str, ...]:
        return tuple(self._roles)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# -- what both databases say the same way -----------------------------------------------------


def one_line(message: str) -> str:
    """An error message on one line, at most MAX_ERROR_CHARS long."""
    line = " ".join(message.split()).strip()
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def printable(sql: str) -> str:
    """The submission as it can be shown and logged: NULs and lone surrogates escaped."""
    return sql.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def check_text(sql: str) -> StatementResult | None:
    """Refuse text no database can take, before it reaches the splitter or the server."""
    if len(sql) > MAX_SUBMISSION_CHARS:
        return StatementResult(
            sql=printable(sql[:200]) + "…",
            error=f"submission is too long ({len(sql):,} characters; the limit is {MAX_SUBMISSION_CHARS:,})",
            error_kind="error",
        )
    if "\x00" in sql:
        return StatementResult(
            sql=printable(sql), error="statement contains a NUL character", error_kind="syntax"
        )
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = sql[exc.start : exc.end].encode("utf-8", "backslashreplace").decode("utf-8")
        return StatementResult(
            sql=printable(sql),
            error=f"statement contains text that is not valid UTF-8 ({bad})",
            error_kind="syntax",
        )
    return None


def too_many(sql: str, count: int) -> StatementResult:
    """A submission refused whole for its number of statements."""
    return StatementResult(
        sql=printable(sql[:200]) + ("…" if len(sql) > 200 else ""),
        error=(
            f"submission has {count:,} statements; the limit is {MAX_STATEMENTS:,} "
            "(nothing was run: send them in smaller parts)"
        ),
        error_kind="error",
    )


def capped_rows(rows: Iterator[Row], row_cap: int) -> tuple[list[Row], bool]:
    """At most `row_cap` rows (and MAX_RESULT_BYTES of them); True if more were left.

    Reads one row past the cap to know whether there were more. The byte budget matters
    because one row may hold 200 columns of 1 MB each.
    """
    kept: list[Row] = []
    size = 0
    for row in rows:
        if len(kept) >= row_cap or size > MAX_RESULT_BYTES:
            return kept, True
        kept.append(tuple(row))
        size += sum(len(v) if isinstance(v, str | bytes) else 8 for v in row)
    return kept, False
