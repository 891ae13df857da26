"""The tables a session's world will have, before the session exists (the briefing's schema
cheat-sheet), as the store the session will use builds them: SQLite's, in memory, or the
exercise's PostgreSQL variant on the server `--db` named (a throw-away schema)."""

from __future__ import annotations

from raceday.exercise.dialects import for_dialect
from raceday.exercise.model import Exercise
from raceday.store import chosen_db, describe_world, dialect_of
from raceday.store.results import TableInfo


def describe_exercise_world(exercise: Exercise, db: str | None = None) -> list[TableInfo]:
    """The world's tables and views (a worker thread only: it builds a world).

    `db` as `open_session` takes it: None reads the choice `raceday play --db` left."""
    db = chosen_db(db)
    return describe_world(for_dialect(exercise, dialect_of(db)).world_sql, db)
