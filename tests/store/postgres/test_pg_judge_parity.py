"""The judge gives the same verdicts on PostgreSQL as on SQLite (issue 27): each guard form a
team may choose (a trigger, a foreign key, an edit of the automation, a guard bent to a
pattern) earns the same points harm by harm, costs the same collateral and leaves the same
total on both databases.

Every flagship judge play in tests/scenarios/judge/ plays on both (issue 58); a play whose SQL
is SQLite's own (a trigger, a rebuilt table, a subquery with no name) has a PostgreSQL twin in
judge/postgres/, the others play as they are. Scores are compared between the two databases,
never written down here: they move when the judge does, and the two must still agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference_plays import ReferencePlays, verdicts

from raceday.engine.headless import run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.script import load_script
from raceday.store.postgres.world import drop_world
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

pytestmark = pytest.mark.postgres

JUDGE = Path(__file__).resolve().parents[2] / "scenarios" / "judge"
EXERCISE = "dynamodb-dns-race"
# Every flagship judge play (a night with its final replay is 7-10 s on PostgreSQL; each is
# played once a run on each database, the SQLite one shared with tests/scenarios). The one
# recovery-under-load play in judge/ (forge-leases) is compared in tests/scenarios/test_rul_postgres.py.
PLAYS = tuple(sorted(p.stem for p in JUDGE.glob("*.yaml")
                     if f"exercise: {EXERCISE}\n" in p.read_text(encoding="utf-8")))
NEVER_BUILT = {"guard-never-built"}
"""Plays whose guard the database refuses (on each, in its own dialect's wrong words): the
refusal is the play."""


def _twin(name: str) -> Path:
    twin = JUDGE / "postgres" / f"{name}.yaml"
    return twin if twin.exists() else JUDGE / f"{name}.yaml"


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
    # judged as no guard at all, and could still agree by chance); a guard never built was
    # refused on both
    lite_errors, pg_errors = _team_errors(on_sqlite.folder), _team_errors(session.folder)
    if name in NEVER_BUILT:
        assert len(lite_errors) == 1 == len(pg_errors), (lite_errors, pg_errors)
    else:
        assert lite_errors == [] == pg_errors
    assert verdicts(on_postgres) == verdicts(on_sqlite.result), (
        "\n".join(on_postgres["reasons"]) + "\n--- on SQLite:\n"
        + "\n".join(on_sqlite.result["reasons"]))


def _team_errors(folder: Path) -> list[str]:
    """The errors the team's own statements met (the automation's are the night's story)."""
    return [f"{e.sql}: {e.error}" for e in read_events(folder).events
            if isinstance(e, ev.Statement) and not e.automated and not e.ok]
