"""Loading exercises with their SQL compiled against their worlds.

The exercise package reads and validates the files and knows no database; the store's
`prepare_each` builds a world in memory and compiles (EXPLAIN) each statement. This is where
the two meet, so everyone who plays or checks an exercise loads it from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.engine.load_cache import cached_load
from raceday.exercise import catalog

if TYPE_CHECKING:
    from raceday.exercise.catalog import ExerciseEntry
    from raceday.exercise.model import Exercise


def load_exercise(path: Path, *, check_sql: bool = True) -> Exercise:
    """Load the exercise at `path`; `check_sql=False` skips building the world (a quick look).
    As an earlier run loaded it when nothing it is made of changed since (`load_cache`): the
    reader (PyYAML and the checks, ~50 ms to import) is imported only when it is not."""
    def read() -> Exercise:
        from raceday.engine.customers import with_customers_read
        from raceday.exercise import loader
        from raceday.store.prepare import prepare_each

        exercise = loader.load_exercise(path, sql_checker=prepare_each if check_sql else None)
        return with_customers_read(exercise) if check_sql else exercise

    return cached_load(path, check_sql, read)


def load_named_exercise(name: str) -> Exercise:
    """An exercise by bundled id or by path; errors are `file:line` problems (exit 2).

    What the CLI, the TUI's launcher, team play and the browser seat all open a night with."""
    return load_exercise(catalog.resolve_exercise(name))


def find_exercises(extra_dirs: Iterable[Path | str] = (), *, check_sql: bool = True) -> list[ExerciseEntry]:
    """Every exercise found (see `catalog.find_exercises`), its SQL checked unless told not to."""
    from raceday.store.prepare import prepare_each

    return catalog.find_exercises(extra_dirs, sql_checker=prepare_each if check_sql else None)
