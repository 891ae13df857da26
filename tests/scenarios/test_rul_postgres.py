"""recovery-under-load plays on PostgreSQL (postgres.yaml: world.sql with its declared changes) with the same
morning as on SQLite (issue 58: every play, on both databases).

Every bundled script and every recovery-under-load play of tests/scenarios (rul/, and
judge/forge-leases) is played once on each database at 4,000 droplets (the smallest fleet
that shows every phase; a PostgreSQL morning at 20,000 is minutes): the faults, their clears
and the milestones come at the same minutes, the same automation statements fail (none, for
AWS's own response), no exercise check fails, and the score is the same harm by harm. A play
whose SQL is SQLite's own (a trigger) has a PostgreSQL twin in a postgres/ folder beside it.
Each play is shared by the run (`reference_play`): the SQLite one with test_rul_record and the
other tests that read a 4,000-droplet morning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from postgres_server import server_or_skip
from reference_plays import Played, ReferencePlays, verdicts

from raceday.engine.load import load_exercise
from raceday.exercise.postgres import for_postgres
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "recovery-under-load"
SIZE = 4000
PLAYS = [*sorted((EXERCISE / "scripts").glob("*.yaml")),
         *sorted((Path(__file__).parent / "rul").glob("*.yaml")),
         Path(__file__).parent / "judge" / "forge-leases.yaml"]
KNOWN = {
    "deferred-targets": "a trigger made during play acts for the role whose statement fired it "
    "on PostgreSQL (SECURITY INVOKER), for its maker on SQLite (docs/exercise-format.md): the "
    "network manager's UPDATE fires the responder's trigger, which may not INSERT INTO "
    "nlb_target there (126 good writes refused, guards 0 against 5)",
}
"""Plays that score differently on PostgreSQL because of a difference in the store (a bug to
fix in src/, not in the play): strict, so the test says when it is fixed."""


def _param(path: Path) -> Any:
    marks = [pytest.mark.xfail(reason=KNOWN[path.stem], strict=True)] if path.stem in KNOWN else []
    return pytest.param(path, marks=marks, id=f"{path.parent.name}/{path.stem}")


def _twin(path: Path) -> Path:
    twin = path.parent / "postgres" / path.name
    return twin if twin.exists() else path


def _morning(events: tuple[ev.Event, ...]) -> list[tuple[str, int, str]]:
    """What the customers and the team saw: each fault, clear and milestone, and when."""
    seen: list[tuple[str, int, str]] = []
    for e in events:
        if isinstance(e, ev.Fault | ev.InvariantClear):
            seen.append((type(e).__name__, e.minute, e.invariant))
        elif isinstance(e, ev.Milestone):
            seen.append(("Milestone", e.minute, e.id))
    return seen


def _failed(events: tuple[ev.Event, ...]) -> set[str]:
    """The automation's statements and tasks that failed (its own statements: a team's
    statement is said in each database's words)."""
    failed = {f"{e.statement} at minute {e.minute}" for e in events
              if isinstance(e, ev.Statement) and e.automated and not e.ok}
    return failed | {f"task {e.task} at minute {e.minute}" for e in events
                     if isinstance(e, ev.Automation) and e.outcome == "failed"}


def _team_errors(events: tuple[ev.Event, ...]) -> list[str]:
    return [f"{e.sql}: {e.error}" for e in events
            if isinstance(e, ev.Statement) and not e.automated and not e.ok]


def _figures(score: dict[str, Any]) -> tuple[Any, ...]:
    recovery = score["recovery"]
    return (score["total"], score["detection"]["points"], score["guards"]["points"],
            recovery["points"], recovery["restored_at"], recovery["outage_minutes"])


def both(reference_play: ReferencePlays, path: Path) -> tuple[Played, Played]:
    """The play at 4,000 droplets on SQLite and (its twin, if it has one) on PostgreSQL, each
    played once for the run."""
    dsn = server_or_skip()
    return (reference_play.sized(EXERCISE.name, path, SIZE),
            reference_play.on_postgres(EXERCISE.name, _twin(path), dsn, SIZE))


def test_the_postgresql_world_uses_its_own_dialect() -> None:
    exercise = for_postgres(load_exercise(EXERCISE))
    assert "CREATE FUNCTION instance_launched()" in exercise.world_sql
    sql = {s.id: s.sql for s in exercise.statements}
    assert "GREATEST(1," in sql["api-admit"] and "max(1," not in sql["api-admit"]
    assert "FILTER (WHERE" in sql["record-minute"]


@pytest.mark.parametrize("path", [_param(p) for p in PLAYS])
def test_a_play_has_the_same_morning_and_score_on_postgresql(
        reference_play: ReferencePlays, path: Path) -> None:
    lite, pg = both(reference_play, path)
    lite_events, pg_events = read_events(lite.folder).events, read_events(pg.folder).events
    assert not [e for e in pg_events if isinstance(e, ev.CheckFailed)]
    # the team's statements did what they say on both (a twin refused would be no guard)
    assert _team_errors(lite_events) == [] == _team_errors(pg_events)
    assert _failed(pg_events) == _failed(lite_events)  # each with its minute
    assert _morning(pg_events) == _morning(lite_events)
    assert _figures(pg.result) == _figures(lite.result)
    assert verdicts(pg.result) == verdicts(lite.result), (
        "\n".join(pg.result["reasons"]) + "\n--- on SQLite:\n" + "\n".join(lite.result["reasons"]))


def test_aws_response_has_its_morning_on_postgresql(reference_play: ReferencePlays) -> None:
    """AWS's own response: no statement of the automation fails, and the leases are back at
    05:28 (the test above says the rest is SQLite's morning)."""
    _lite, pg = both(reference_play, EXERCISE / "scripts" / "as-it-happened.yaml")
    events = read_events(pg.folder).events
    assert _failed(events) == set()
    assert ("Milestone", 183, "leases-restored") in _morning(events)
