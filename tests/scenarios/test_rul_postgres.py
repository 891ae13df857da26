"""recovery-under-load plays on PostgreSQL (postgres.yaml: world.sql with its declared changes) with the same
morning as on SQLite.

AWS's documented response is played once on each database at 4,000 droplets (the story is
the same at every size; a smaller fleet keeps the PostgreSQL play short): the faults, their
clears and the milestones come at the same minutes, no exercise check fails, no statement of
the automation fails, and the score is the same.
"""

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
from raceday.exercise.model import Exercise
from raceday.exercise.postgres import for_postgres
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("test_rul_postgres")]

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load"
AWS = EXERCISE / "scripts" / "as-it-happened.yaml"
DEFAULT_SIZE = "SELECT 20000 AS size"
SIZE = 4000


def _sized(exercise: Exercise) -> Exercise:
    assert DEFAULT_SIZE in exercise.world_sql
    return dataclasses.replace(
        exercise, world_sql=exercise.world_sql.replace(DEFAULT_SIZE, f"SELECT {SIZE} AS size"))


def _morning(events: tuple[ev.Event, ...]) -> list[tuple[str, int, str]]:
    """What the customers and the team saw: each fault, clear and milestone, and when."""
    seen: list[tuple[str, int, str]] = []
    for e in events:
        if isinstance(e, ev.Fault | ev.InvariantClear):
            seen.append((type(e).__name__, e.minute, e.invariant))
        elif isinstance(e, ev.Milestone):
            seen.append(("Milestone", e.minute, e.id))
    return seen


def _figures(score: dict[str, Any]) -> tuple[Any, ...]:
    recovery = score["recovery"]
    return (score["total"], score["detection"]["points"], score["guards"]["points"],
            recovery["points"], recovery["restored_at"], recovery["outage_minutes"])


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory,
         reference_play: ReferencePlays) -> tuple[Any, Any]:
    dsn = server_or_skip()
    from raceday.store.postgres.world import drop_world

    exercise = load_exercise(EXERCISE)
    # on SQLite: the record's 4,000-droplet morning (test_rul_record), played once a run
    lite = reference_play.sized(EXERCISE.name, AWS, SIZE).result
    # the variant first, then the size (path None: the session does not apply it again)
    on_pg = dataclasses.replace(_sized(for_postgres(exercise)), path=None)
    session, pg = run_script(on_pg, load_script(AWS, on_pg), tmp_path_factory.mktemp("pg"),
                             db=dsn)
    drop_world(dsn, (session.folder / "world.postgres").read_text().strip())
    return (read_events(Path(lite["session"])).events, lite), \
        (read_events(Path(pg["session"])).events, pg)


def test_the_postgresql_world_uses_its_own_dialect() -> None:
    exercise = for_postgres(load_exercise(EXERCISE))
    assert "CREATE FUNCTION instance_launched()" in exercise.world_sql
    sql = {s.id: s.sql for s in exercise.statements}
    assert "GREATEST(1," in sql["api-admit"] and "max(1," not in sql["api-admit"]
    assert "FILTER (WHERE" in sql["record-minute"]


def test_aws_response_has_the_same_morning_on_postgresql(both: tuple[Any, Any]) -> None:
    (lite_events, lite), (pg_events, pg) = both
    assert not [e for e in pg_events if isinstance(e, ev.CheckFailed)]
    failed = {f"{e.statement} at minute {e.minute}: {e.error}" for e in pg_events
              if isinstance(e, ev.Statement) and e.automated and not e.ok}
    failed |= {f"task {e.task} at minute {e.minute}" for e in pg_events
               if isinstance(e, ev.Automation) and e.outcome == "failed"}
    assert failed == set()  # each with its error: a failure says why
    assert _morning(pg_events) == _morning(lite_events)
    assert ("Milestone", 183, "leases-restored") in _morning(pg_events)  # 05:28
    assert _figures(pg) == _figures(lite)
