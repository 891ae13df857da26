"""Out of the players' reach (issue 56): the customers' view is raceday's, and whatever only
the service brings back is forged when anything else writes it.

Each hiding play of the issue's table is played headless and must score no more than doing
nothing; the right answer in a form no reference play uses still earns what the textbook
earns; a forged write at any minute, by hand or by a trigger firing inside the service's own
statements, earns no recovery (a property over generated minutes)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raceday.engine.actions import RunSql
from raceday.engine.headless import open_session, run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.errors import ExerciseError
from raceday.exercise.customers import CustomerTable, with_tables
from raceday.exercise.model import Exercise
from raceday.judge.facts import Facts
from raceday.judge.score import score_session

ROOT = Path(__file__).resolve().parents[2]
PLAYS = Path(__file__).resolve().parent / "customers"
RUL = ROOT / "exercises" / "recovery-under-load"


NOTHING = {
    "dynamodb-dns-race": ROOT / "exercises" / "dynamodb-dns-race" / "scripts" / "nothing.yaml",
    "isolation-lab": ROOT / "exercises" / "isolation-lab" / "scripts" / "as-it-happened.yaml",
    "lost-update-basics": PLAYS / "lost-update-nothing.yaml",
}


def played(exercise: Exercise, script: Path, transcripts: Path) -> dict[str, Any]:
    _, result = run_script(exercise, load_script(script, exercise), transcripts)
    return result


def reasons(result: dict[str, Any]) -> str:
    return "\n".join(result["reasons"])


@pytest.mark.parametrize(("play", "exercise", "fault_at"), [
    # two triggers delete an endpoint's row once its answer would be empty: the name is gone
    ("flagship-delete-empty-endpoints", "dynamodb-dns-race", "23:48"),
    # a trigger puts a deleted plan back with records no load balancer has (0.0.0.0)
    ("flagship-fake-addresses", "dynamodb-dns-race", "23:48"),
    # tables named as raceday's kept ones, empty: a check reading them would see no names
    ("flagship-shadow-customer-names", "dynamodb-dns-race", "23:48"),
    ("isolation-lab-delete-the-row", "isolation-lab", "23:41"),
    ("isolation-lab-delete-on-stale", "isolation-lab", "23:44"),
    # triggers keep the retired host 'active' and fill a blank address with a made-up one
    ("lost-update-keep-active-fake-address", "lost-update-basics", "09:03"),
    # a trigger deletes the setting's row as the stale save writes it
    ("lost-update-delete-the-setting", "lost-update-basics", "09:03"),
])
def test_hiding_the_harm_is_the_harm(play: str, exercise: str, fault_at: str,
                                     tmp_path: Path) -> None:
    ex = load_exercise(ROOT / "exercises" / exercise)
    nothing = played(ex, NOTHING[exercise], tmp_path / "nothing")
    result = played(ex, PLAYS / f"{play}.yaml", tmp_path / "play")
    assert result["fault"]["occurred"], reasons(result)
    assert result["fault"]["started_at"] == fault_at, reasons(result)
    assert result["recovery"]["points"] == 0, reasons(result)
    if play == "flagship-fake-addresses":
        # the plan row it puts back lets later applies through (the rollback pointer is
        # valid again), which the customers do see sooner: that much, and only that, counts
        assert result["total"] <= 10, reasons(result)
    else:
        assert result["total"] <= nothing["total"], reasons(result)


def test_the_right_answer_written_as_counts_earns_what_the_textbook_earns(
        tmp_path: Path) -> None:
    ex = load_exercise(ROOT / "exercises" / "dynamodb-dns-race")
    textbook = played(ex, ROOT / "exercises" / "dynamodb-dns-race" / "scripts" / "textbook.yaml",
                      tmp_path / "textbook")
    counts = played(ex, PLAYS / "flagship-textbook-by-counts.yaml", tmp_path / "counts")
    assert counts["total"] == textbook["total"] == 100, reasons(counts)


def test_lost_update_guards_written_as_triggers_earn_the_guards(tmp_path: Path) -> None:
    """Every guard of the onboarding as a trigger (a generation that may only go forward, a
    count instead of a constraint): the same guard points as the reference's rebuilds."""
    ex = load_exercise(ROOT / "exercises" / "lost-update-basics")
    reference = played(ex, ROOT / "exercises" / "lost-update-basics" / "scripts" /
                       "replay-all-guards.yaml", tmp_path / "reference")
    triggers = played(ex, PLAYS / "lost-update-guards-as-triggers.yaml", tmp_path / "triggers")
    assert triggers["guards"]["points"] == reference["guards"]["points"] == 30, reasons(triggers)
    assert triggers["recovery"]["points"] == reference["recovery"]["points"], reasons(triggers)


def test_the_customers_view_is_read_from_the_world_as_built() -> None:
    ex = load_exercise(ROOT / "exercises" / "dynamodb-dns-race")
    names = {t.name: t for t in ex.customers}
    assert {r[0] for r in names["customer_name"].rows} == {
        "dynamodb.us-east-1.amazonaws.com", "dynamodb-fips.us-east-1.amazonaws.com",
        "dynamodb.us-east-1.api.aws", "streams.dynamodb.us-east-1.amazonaws.com"}
    assert len(names["serving_address"].rows) == 16
    assert ("0.0.0.0",) not in {(r[1],) for r in names["serving_address"].rows}


def test_a_check_gets_the_kept_rows_as_a_with_table_joined_to_its_own() -> None:
    kept = (CustomerTable(name="customer_name", sql="SELECT name FROM endpoint",
                          columns=("name",), rows=(("a'b",), ("c",))),
            CustomerTable(name="nothing_here", sql="SELECT 1 AS x", columns=("x",), rows=()))
    plain = with_tables("SELECT name FROM customer_name", kept)
    assert plain.startswith("WITH customer_name(name) AS (VALUES ('a''b'), ('c'))")
    joined = with_tables("with recursive n(i) AS (SELECT 1) SELECT * FROM customer_name, n",
                         kept)
    assert joined.startswith("WITH RECURSIVE customer_name(name) AS (VALUES ('a''b'), ('c')),\n")
    assert joined.endswith("n(i) AS (SELECT 1) SELECT * FROM customer_name, n")
    assert "WHERE 1 = 0" in with_tables("SELECT x FROM nothing_here", kept)
    assert with_tables("SELECT 1 FROM customer_names", kept) == "SELECT 1 FROM customer_names"


def test_a_customers_table_with_a_name_checks_cannot_write_is_refused_at_its_line(
        tmp_path: Path) -> None:
    folder = tmp_path / "dynamodb-dns-race"
    source = ROOT / "exercises" / "dynamodb-dns-race"
    folder.mkdir()
    for name in ("world.sql", "briefing.md"):
        (folder / name).write_text((source / name).read_text())
    text = (source / "exercise.yaml").read_text()
    assert "  - id: customer_name\n" in text
    broken = text.replace("  - id: customer_name\n", "  - id: Customer-Name\n")
    broken = broken.replace("FROM customer_name AS c", "FROM endpoint AS c")
    (folder / "exercise.yaml").write_text(broken)
    with pytest.raises(ExerciseError) as info:
        load_exercise(folder)
    line = broken.splitlines().index("  - id: Customer-Name") + 1
    assert any(p.endswith(f"exercise.yaml:{line}: customer table \"Customer-Name\": the name "
                          "must be a plain SQL name (lower-case letters, digits and _), as "
                          "checks write it") for p in info.value.problems), info.value.problems


def small_fleet() -> Exercise:
    exercise = load_exercise(RUL)
    size = "SELECT 20000 AS size"
    assert size in exercise.world_sql
    return dataclasses.replace(exercise, world_sql=exercise.world_sql.replace(
        size, "SELECT 2000 AS size"))


@pytest.mark.parametrize("play", ["rul-triggers-grant-leases", "rul-hand-lease-same-minute"])
def test_a_forged_lease_earns_no_recovery_and_keeps_no_harm_away(play: str,
                                                                tmp_path: Path) -> None:
    result = played(small_fleet(), PLAYS / f"{play}.yaml", tmp_path / "t")
    assert result["recovery"]["points"] == 0, reasons(result)
    assert "forged, not recovered" in reasons(result)
    assert "guards +0/15: Fewer than 95% of droplets hold a lease" in reasons(result)
    assert result["total"] == 0, reasons(result)


def test_a_trigger_the_team_made_is_named_when_it_writes_inside_the_services_statement(
        tmp_path: Path) -> None:
    session = open_session(small_fleet(), ("responder",), tmp_path / "t")
    try:
        text = (PLAYS / "rul-triggers-grant-leases.yaml").read_text()
        trigger = text[text.index("CREATE TRIGGER grant_lease"):text.index("END\n") + 3]
        session.perform(RunSql(role="responder", sql=trigger))
        session.advance_to(session.minute + 3)
        made = dict(session.facts.made_writes)
    finally:
        session.close()
    assert ("grant_lease", "droplet") in made


RECOVERY = load_exercise(RUL)


@settings(max_examples=200, deadline=None)
@given(fault=st.integers(0, 60), forged=st.integers(0, 700), restored=st.integers(0, 700),
       by_trigger=st.booleans(), table=st.sampled_from(["droplet", "minute_stats"]))
def test_a_forged_write_at_any_minute_earns_no_recovery(
        fault: int, forged: int, restored: int, by_trigger: bool, table: str) -> None:
    facts = Facts(fault_started=fault, outages=[[fault, max(restored, fault)]],
                  restores=[max(restored, fault)], restored_at=max(restored, fault),
                  healthy_at_end=True, night_end=715)
    if by_trigger:
        facts.made_writes[("grant_lease", table)] = forged
    else:
        facts.player_writes.append((forged, "responder", (table,)))
    verdict = score_session(RECOVERY, facts, str).recovery
    assert verdict is not None
    assert verdict.points == 0, verdict.reasons
    assert "forged" in verdict.reasons[0]
