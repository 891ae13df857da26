"""The customers' view: tables raceday keeps from the world as the exercise builds it.

What the customers ask for (the names they resolve) and what really serves them (the
service's own records) must not be read from rows a team can delete, fake or hide: a harm
check that read `endpoint` saw no harm once a trigger deleted the empty endpoint's row. An
exercise names each such table with the query that reads it from the world as built, before
anyone plays; raceday keeps the rows in memory and hands them to its own checks as a WITH
table, which no table, view or schema of the world can shadow.

This module is text only (the exercise package knows no database): the rows are read by the
engine (`raceday.engine.customers`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from raceday.value import Value, frozen

TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
"""A kept table's name: a plain SQL name in both dialects, never quoted."""

_WITH = re.compile(r"\s*WITH(\s+RECURSIVE)?\s", re.IGNORECASE)


@frozen
class CustomerTable(Value):
    """One table of the customers' view: its name in checks, the query that reads it from
    the world as the exercise builds it, and (once read) its columns and rows."""

    name: str
    sql: str
    line: int = 0
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()

    @property
    def read(self) -> bool:
        return bool(self.columns)


def mentioned(sql: str, tables: Iterable[CustomerTable]) -> tuple[CustomerTable, ...]:
    """The kept tables `sql` names (as a word: `customer_name`, not `customer_names`)."""
    lowered = sql.lower()
    return tuple(t for t in tables
                 if t.name in lowered and re.search(rf"\b{t.name}\b", lowered))


def with_tables(sql: str, tables: Sequence[CustomerTable]) -> str:
    """`sql` with each kept table it names given as a WITH table of the kept rows (joined to
    a WITH clause the query already has). SQL naming none of them is returned as it is."""
    named = mentioned(sql, tables)
    if not named:
        return sql
    return _joined(sql, [_values(t) for t in named])


def with_queries(sql: str, tables: Sequence[CustomerTable]) -> str:
    """`sql` with each kept table it names defined by its query: what the loader compiles
    against the world before the rows are read."""
    named = mentioned(sql, tables)
    if not named:
        return sql
    return _joined(sql, [f"{t.name} AS ({t.sql})" for t in named])


def _joined(sql: str, definitions: list[str]) -> str:
    ours = ", ".join(definitions)
    head = _WITH.match(sql)
    if head is None:
        return f"WITH {ours}\n{sql}"
    recursive = "RECURSIVE " if head.group(1) else ""
    return f"WITH {recursive}{ours},\n{sql[head.end():]}"


def _values(table: CustomerTable) -> str:
    columns = ", ".join(table.columns)
    if not table.rows:
        nulls = ", ".join("NULL" for _ in table.columns)
        return f"{table.name}({columns}) AS (SELECT {nulls} WHERE 1 = 0)"
    rows = ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in table.rows)
    return f"{table.name}({columns}) AS (VALUES {rows})"


def literal(value: Any) -> str:
    """A value as SQL text both dialects read alike (text, whole numbers, reals, NULL)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"a kept table holds text and numbers only, not {type(value).__name__}")
