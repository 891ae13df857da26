"""An exercise as it plays in one SQL dialect: its own text on SQLite, its PostgreSQL variant
(`postgres.yaml`) on a server. Kept apart from `postgres.py` so a SQLite session never
imports the variant's reader."""

from __future__ import annotations

from raceday.exercise.model import Exercise


def for_dialect(exercise: Exercise, dialect: str) -> Exercise:
    """The exercise as it plays in `dialect` ("sqlite", its own text, or "postgresql")."""
    if dialect != "postgresql":
        return exercise
    from raceday.exercise.postgres import for_postgres

    return for_postgres(exercise)
