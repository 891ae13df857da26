"""The tables a session's world will have, before the session exists (the briefing's schema
cheat-sheet), as the store the session will use builds them: SQLite's, in memory, or the
exercise's PostgreSQL variant on the server `--db` named (a throw-away schema)."""

from __future__ import annotations

from raceday.exercise.model import Exercise
from raceday.exercise.postgres import for_postgres
from raceday.store import chosen_db, is_postgres
from raceday.store.results import TableInfo


def describe_exercise_world(exercise: Exercise, db: str | None = None) -> list[TableInfo]:
    """The world's tables and views (a worker thread only: it builds a world).

    `db` as `open_session` takes it: None reads the choice `raceday play --db` left."""
    db = chosen_db(db)
    if is_postgres(db):
        from raceday.store.postgres.store import describe_world

        assert db is not None
        return describe_world(db, for_postgres(exercise).world_sql)
    from raceday.store.sqlite_world import describe_world as describe_sqlite_world

    return describe_sqlite_world(exercise.world_sql)
