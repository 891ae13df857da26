"""What a statement gives back, as values every layer can hold without knowing SQLite."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from raceday.errors import RacedayError
from raceday.value import Value, frozen

Row = tuple[Any, ...]
Answer = tuple[tuple[str, ...], list[Row]] | RacedayError
"""A trusted query's answer (its columns and rows), or the error it raised."""
ErrorKind = Literal["refused", "constraint", "timeout", "syntax", "error", "machine"]
"""Who refused a statement (see StatementResult); "machine": the world cannot be written."""
TableKind = Literal["table", "view"]


@frozen
class StatementResult(Value):
    """The outcome of one statement of a submission.

    `rowcount` is the number of rows a write changed (None for a read). `truncated` means
    there were more than `len(rows)` rows ("1,000 of more than 1,000"). `error_kind` says
    who refused: "refused" (the sandbox or the role's permissions), "constraint" (a CHECK,
    foreign key, UNIQUE or a trigger's RAISE), "timeout", "syntax" or "error".
    `writes` names the tables the statement wrote (as the authorizer saw them).
    `reads` names the tables it read. `break_glass` names the world's tables it changed
    (rows or schema) under a break-glass right: the role's own, or that of the role that
    made a trigger the statement fired.
    """

    sql: str
    columns: tuple[str, ...] = ()
    rows: tuple[Row, ...] = ()
    rowcount: int | None = None
    truncated: bool = False
    elapsed_ms: float = 0.0
    error: str | None = None
    error_kind: str | None = None  # an ErrorKind from the stores; events may carry others
    writes: tuple[str, ...] = ()
    schema_changed: bool = False
    break_glass: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    """The tables (lower case) the statement read, as the authorizer allowed them: a view
    counts as reads of its tables."""
    made_writes: tuple[tuple[str, str], ...] = ()
    """(trigger, table) for each table a trigger the team made during play may write in this
    statement, whoever's statement it is (SQLite's authorizer names the trigger)."""
    kept_in: tuple[str, ...] | None = None
    """A failed statement: the tables it may have left changes in (SQLite keeps the rows a
    statement changed before an `OR FAIL` conflict or a `RAISE(FAIL)`), as the authorizer saw
    them; () when the database undid it all (a refusal before it ran; on PostgreSQL every
    statement is atomic); None when that cannot be told."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def is_write(self) -> bool:
        return self.rowcount is not None

    def row_summary(self, cap: int) -> str:
        """'3 rows', '1 row changed', '1,000 of more than 1,000 rows'."""
        if self.error:
            return "error"
        if self.is_write and not self.columns:
            n = self.rowcount or 0
            return f"{n:,} row{'s' if n != 1 else ''} changed"
        n = len(self.rows)
        if self.truncated:
            return f"{n:,} of more than {n:,} rows"
        return f"{n:,} row{'s' if n != 1 else ''}"


@frozen
class ColumnInfo(Value):
    """One column of a world's table or view, as the schema shows it."""

    name: str
    type: str
    notnull: bool
    pk: bool


@frozen
class ForeignKeyInfo(Value):
    """`columns` of a table refer to `other_columns` of `other_table`."""

    columns: tuple[str, ...]
    other_table: str
    other_columns: tuple[str, ...]


@frozen
class TableInfo(Value):
    """A table or view of the world, for the schema browser and completion."""

    name: str
    kind: TableKind
    columns: tuple[ColumnInfo, ...] = ()
    sql: str = ""
    triggers: tuple[str, ...] = field(default_factory=tuple)
    foreign_keys: tuple[ForeignKeyInfo, ...] = ()
