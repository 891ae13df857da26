"""Issue 58 on PostgreSQL: recovery-under-load's variant night builds there too (its seed moves
the world's minutes and renumbers the hosts on the server's fork), and a guard keyed on
tonight's minutes earns nothing on it, as on SQLite. Played at 4,000 droplets (the story is
the same at every size; a smaller fleet keeps the PostgreSQL play short), once a run on each
database: test_rul_postgres compares the same two plays harm by harm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from postgres_server import server_or_skip
from reference_plays import ReferencePlays

pytestmark = pytest.mark.postgres

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load"
HERE = Path(__file__).parent / "rul"
SIZE = 4000


def _guards(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(h["id"], h["practice"], h["points"], h["minutes"], h["baseline"])
            for h in result["guards"]["harms"]]


def test_a_guard_keyed_on_tonights_minute_earns_nothing_on_postgresql(
        reference_play: ReferencePlays) -> None:
    dsn = server_or_skip()
    lite = reference_play.sized(EXERCISE.name, HERE / "throttle-keyed-on-minute.yaml",
                                SIZE).result
    pg = reference_play.on_postgres(EXERCISE.name, HERE / "postgres" / "throttle-keyed-on-minute.yaml",
                                    dsn, SIZE).result
    assert pg["guards"]["points"] == 0, pg["guards"]["reasons"]
    assert "in the variant night" in "\n".join(pg["guards"]["reasons"])
    assert _guards(pg) == _guards(lite)
    assert pg["total"] == lite["total"]
