"""Issue 58 on PostgreSQL: recovery-under-load's variant night builds there too (its seed moves
the world's minutes and renumbers the hosts on the server's fork), and a guard keyed on
tonight's minutes earns nothing on it, as on SQLite. Played at 4,000 droplets (the story is
the same at every size; a smaller fleet keeps the PostgreSQL play short)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from postgres_server import server_or_skip
from reference_plays import ReferencePlays

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.exercise.postgres import for_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("test_rul_postgres")]

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load"
HERE = Path(__file__).parent / "rul"
DEFAULT_SIZE = "SELECT 20000 AS size"
SIZE = 4000


def _guards(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(h["id"], h["practice"], h["points"], h["minutes"], h["baseline"])
            for h in result["guards"]["harms"]]


def test_a_guard_keyed_on_tonights_minute_earns_nothing_on_postgresql(
        tmp_path: Path, reference_play: ReferencePlays) -> None:
    dsn = server_or_skip()
    from raceday.store.postgres.world import drop_world

    lite = reference_play.sized(EXERCISE.name, HERE / "throttle-keyed-on-minute.yaml",
                                SIZE).result
    exercise = for_postgres(load_exercise(EXERCISE))
    assert DEFAULT_SIZE in exercise.world_sql
    on_pg = dataclasses.replace(
        exercise, path=None,
        world_sql=exercise.world_sql.replace(DEFAULT_SIZE, f"SELECT {SIZE} AS size"))
    script = load_script(HERE / "postgres" / "throttle-keyed-on-minute.yaml", on_pg)
    session, pg = run_script(on_pg, script, tmp_path, db=dsn)
    drop_world(dsn, (session.folder / "world.postgres").read_text().strip())
    assert pg["guards"]["points"] == 0, pg["guards"]["reasons"]
    assert "in the variant night" in "\n".join(pg["guards"]["reasons"])
    assert _guards(pg) == _guards(lite)
    assert pg["total"] == lite["total"]
