"""`raceday check` on an exercise's PostgreSQL world (its postgres.yaml), as world.sql is
checked for SQLite: each statement of the PostgreSQL world the world may not run is a problem
naming the file and line that brought it: the `world:` file's line, or the line of the
`world_changes` item whose text the statement holds. A statement no change touched is
world.sql's own, which SQLite's build guard already passed (it refuses anything
PostgreSQL-only). See store/dialect/postgres_world.py for what is refused."""

from __future__ import annotations

from raceday.errors import ExerciseError
from raceday.exercise.model import Exercise
from raceday.exercise.postgres import VARIANT_FILE, for_postgres, load_variant
from raceday.store.dialect.postgres_world import world_refusals


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
    if variant.world_file is not None:
        return [f"{folder / variant.world_file}:{r.line}: {r.why}"
                for r in world_refusals(world)]
    spans = [(at, at + len(text), change.line) for change in variant.world_changes
             if (text := change.postgres.strip())
             for at in _occurrences(world, text)]
    problems = []
    for refusal in world_refusals(world):
        line = next((n for start, end, n in spans
                     if start < refusal.end and refusal.start < end), None)
        if line is not None:
            problems.append(f"{folder / VARIANT_FILE}:{line}: {refusal.why}")
    return problems


def _occurrences(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + 1)
    return found
