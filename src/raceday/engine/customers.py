"""The customers' view read: each kept table's rows from the world as the exercise builds it.

Read once per exercise (the load keeps them with it), from an in-memory world nobody has
played in, so no statement of the night (a player's, a trigger's, the automation's) can
change what raceday holds to be the names customers ask for and the addresses that reach
the service."""

from __future__ import annotations

from dataclasses import replace

from raceday.errors import ExerciseError
from raceday.exercise.customers import CustomerTable, literal
from raceday.exercise.model import Exercise
from raceday.store.base import StoreError


def with_customers_read(exercise: Exercise) -> Exercise:
    """The exercise with its customers' view read (as it is when there is none, or it is read);
    a query that cannot run, or rows that are not text and numbers, are the exercise's error."""
    tables = exercise.customers
    if not tables or all(t.read for t in tables):
        return exercise
    where = str(exercise.path) if exercise.path is not None else exercise.id
    from raceday.store.prepare import read_kept  # sqlite3: only when there is a view to read

    try:
        answers = read_kept(exercise.world_sql, [t.sql for t in tables])
    except StoreError as exc:
        raise ExerciseError([f"{where}: {exc} (the customers' view)"]) from None
    read: list[CustomerTable] = []
    for table, (columns, rows) in zip(tables, answers, strict=True):
        problem = _problem(columns, rows)
        if problem:
            raise ExerciseError([f"{where}:{table.line}: customer table \"{table.name}\": "
                                 f"{problem}"])
        read.append(replace(table, columns=columns, rows=tuple(rows)))
    return replace(exercise, customers=tuple(read))


def _problem(columns: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    if not columns:
        return "its query gives no columns"
    bad = [c for c in columns if not c.isidentifier() or not c.isascii()]
    if bad:
        return f"name its columns plainly (AS name): {bad[0]!r} is not a plain name"
    for row in rows:
        for value in row:
            try:
                literal(value)
            except TypeError as exc:
                return str(exc)
    return ""
