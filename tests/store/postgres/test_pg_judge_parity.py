"""The judge gives the same verdicts on PostgreSQL as on SQLite (issue 27): each guard form a
team may choose (a trigger, a foreign key, an edit of the automation, a guard bent to a
pattern) earns the same points harm by harm, costs the same collateral and leaves the same
total on both databases.

The flagship's judge plays are in tests/scenarios/judge/; a play whose guard is SQLite's own
(a trigger, a rebuilt table) has a PostgreSQL twin in judge/postgres/, the others play as
they are. Scores are compared between the two databases, never written down here: they move
when the judge does, and the two must still agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reference_plays import ReferencePlays

from raceday.engine.headless import run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.script import load_script
from raceday.store.postgres.world import drop_world
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

pytestmark = pytest.mark.postgres

JUDGE = Path(__file__).resolve().parents[2] / "scenarios" / "judge"
EXERCISE = "dynamodb-dns-race"
# One of each guard form (a flagship night with its final replay is 7-10 s on PostgreSQL):
PLAYS = (
    "number-keyed-trigger",   # a trigger keyed on numbers: the variant night gets past it
    "rollback-null-trigger",  # a trigger that breaks the normal night: earns nothing
    "rollback-pointer-edit",  # an edit bending a pattern: raceday's own history still sees it
    "version-check-edit",     # an edit of the automation's statement: the right answer
    "foreign-key-only",       # a foreign key: one practice night, not the other
    "never-empty-delete",     # a trigger a cascade fires, then a response: detection, recovery
    "never-empty-update",     # a trigger that keeps both practice nights' empty answers away
    "forward-only-strict",    # a trigger refusing planned rollbacks: collateral, not a zero
    "practice-value-keyed",   # a guard keyed on the practice night's minute: collateral
)


def _twin(name: str) -> Path:
    twin = JUDGE / "postgres" / f"{name}.yaml"
    return twin if twin.exists() else JUDGE / f"{name}.yaml"


def _verdicts(result: dict[str, Any]) -> dict[str, Any]:
    """What both databases must agree on: each harm's points (on which night, from when,
    for how long), the guard points, the collateral and the good writes it stands for, and
    the total."""
    guards = result["guards"]
    return {
        "harms": [(h["id"], h["practice"], h["night"], h["points"], h["max"], h["first_at"],
                   h["minutes"], h["baseline"]) for h in guards["harms"]],
        "guards": guards["points"],
        "collateral": guards["collateral"],
        "blocked": [(b["task"], b["at"]) for b in guards["blocked_good_writes"]],
        "total": result["total"],
    }


# Each play is a test of its own, so the workers share them out (a group each, not the
# module's one group: two plays never wait for each other on one worker).
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xdist_group(f"pg-judge-{n}"))
                                  for n in PLAYS])
def test_a_guard_earns_the_same_on_postgresql_as_on_sqlite(
        name: str, pg_dsn: str, tmp_path: Path, reference_play: ReferencePlays) -> None:
    on_sqlite = reference_play(EXERCISE, JUDGE / f"{name}.yaml")
    exercise = load_named_exercise(EXERCISE)
    session, score = run_script(exercise, load_script(_twin(name), exercise), tmp_path,
                                db=pg_dsn)
    drop_world(pg_dsn, (session.folder / "world.postgres").read_text().strip())
    on_postgres = json.loads(json.dumps(score))  # as `raceday run --json` prints it
    # the team's statements built their guards on both (a twin that failed to build would be
    # judged as no guard at all, and could still agree by chance)
    assert _team_errors(on_sqlite.folder) == [] == _team_errors(session.folder)
    assert _verdicts(on_postgres) == _verdicts(on_sqlite.result), (
        "\n".join(on_postgres["reasons"]) + "\n--- on SQLite:\n"
        + "\n".join(on_sqlite.result["reasons"]))


def _team_errors(folder: Path) -> list[str]:
    """The errors the team's own statements met (the automation's are the night's story)."""
    return [f"{e.sql}: {e.error}" for e in read_events(folder).events
            if isinstance(e, ev.Statement) and not e.automated and not e.ok]
