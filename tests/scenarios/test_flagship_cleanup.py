"""The flagship's clean-up, refused for a plan an endpoint still rolls back to, refuses before
it deletes other plans' records: after the wedge each refused clean-up had deleted (and put
back) the records of every piled-up plan, seconds a night in a world of 1,000 endpoints."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

WORLD = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race" / "world.sql"
CLEANUP = "DELETE FROM plan WHERE id < :plan - 7"  # enactor-b-cleanup, as exercise.yaml has it


def test_a_refused_cleanup_deletes_no_record_before_it_refuses() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(WORLD.read_text(encoding="utf-8"))
    # the wedge: the endpoints still roll back to the oldest plan left, and plans piled up
    conn.execute("UPDATE endpoint SET rollback_plan_id = 111")
    records = conn.execute("SELECT count(*) FROM plan_record WHERE plan_id < 121").fetchone()[0]
    assert records > 100
    deleted: list[int] = []
    conn.create_function("deleted", 1, deleted.append)  # outside the statement's rollback
    conn.execute("CREATE TEMP TRIGGER seen AFTER DELETE ON main.plan_record "
                 "BEGIN SELECT deleted(old.plan_id); END")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY constraint failed"):
        conn.execute(CLEANUP, {"plan": 128})
    assert deleted == []  # a key checked at the statement's end had deleted `records` first
    assert conn.execute("SELECT count(*) FROM plan_record WHERE plan_id < 121"
                        ).fetchone()[0] == records
    conn.execute("UPDATE endpoint SET rollback_plan_id = 122")  # as the night begins
    conn.execute(CLEANUP, {"plan": 125})  # nothing an endpoint rolls back to: cleaned up
    assert conn.execute("SELECT min(id) FROM plan").fetchone()[0] == 118
