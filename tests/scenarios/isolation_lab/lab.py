"""The isolation lab's folders and what its tests read from a finished play.

(A module of its own, not conftest: two test folders' conftest modules share one name.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from raceday.engine.session import Session

EXERCISE = Path(__file__).resolve().parents[3] / "exercises" / "isolation-lab"
SCRIPTS = EXERCISE / "scripts"
DSN_VARIABLE = "RACEDAY_TEST_PG_DSN"

Play = Callable[..., tuple[Session, dict[str, Any]]]



def world_rows(session: Session, sql: str, db: str | None = None) -> list[tuple[Any, ...]]:
    """Rows of the world a finished session left (its SQLite file, or its PostgreSQL schema)."""
    if db is None:
        import sqlite3

        with sqlite3.connect(session.folder / "world.db") as conn:
            return [tuple(r) for r in conn.execute(sql)]
    import psycopg

    schema = f"rd_{(session.folder / 'world.postgres').read_text().split()[0]}_world"
    with psycopg.connect(db) as conn:
        conn.execute(f'SET search_path = "{schema}"')
        return [tuple(r) for r in conn.execute(sql)]
