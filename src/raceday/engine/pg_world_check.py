"""`raceday check` on an exercise's PostgreSQL world (its postgres.yaml), as world.sql is
checked for SQLite: each statement the world may not run is a problem naming the file and
line that brought it (a `world_changes` item's line in postgres.yaml, the `world:` file's
own line, or world.sql's). See store/dialect/postgres_world.py for what is refused."""

from __future__ import annotations

from raceday.errors import ExerciseError
from raceday.exercise.model import Exercise
from raceday.exercise.postgres import VARIANT_FILE, PostgresVariant, for_postgres, load_variant
from raceday.store.dialect.postgres_world import Refusal, world_refusals


def postgres_world_problems(exercise: Exercise) -> list[str]:
    """Problems of the exercise's PostgreSQL variant, if it has one (none without)."""
    if exercise.path is None:
        return []
    folder = exercise.path.parent
    try:
        variant = load_variant(folder)
        if variant is None:
            return []
        world = for_postgres(exercise).world_sql
    except ExerciseError as exc:
        return list(exc.problems)
    return [f"{_where(r, variant, exercise)}: {r.why}" for r in world_refusals(world)]


def _where(refusal: Refusal, variant: PostgresVariant, exercise: Exercise) -> str:
    """file:line of the text that brought the refused statement."""
    folder = variant.path.parent
    if variant.world_file is not None:
        return f"{folder / variant.world_file}:{refusal.line}"
    statement = refusal.sql.strip()
    for change in variant.world_changes:
        text = change.postgres.strip()
        if text and (text in statement or statement in text):
            return f"{folder / VARIANT_FILE}:{change.line}"
    at = exercise.world_sql.find(statement)
    line = exercise.world_sql.count("\n", 0, at) + 1 if at >= 0 else refusal.line
    return f"{folder / 'world.sql'}:{line}"
