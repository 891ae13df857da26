"""The article's least power for clean-up jobs, in any form (issue 58): a clean-up that may not
delete what an endpoint serves keeps the recorded outage away, and earns the same whatever
shape the team gives it; keyed on tonight's plan numbers instead, it earns nothing more than
doing nothing (the variant night renumbers every plan).

The forms are generated (hypothesis): a trigger that refuses or one that silently skips, on
the plan or on its records, reading the endpoint by EXISTS, by a count or by IN, sparing the
rollback too or not, or the clean-up statements themselves edited to spare what is served."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script

ROOT = Path(__file__).resolve().parents[2]
FLAGSHIP = load_exercise(ROOT / "exercises" / "dynamodb-dns-race")
LEAST_POWER = 85
"""What the plan-in-use trigger alone earns (tests/engine/test_replay_matrix.py): no fault on
either race (detection 30, recovery 30), the empty answer kept away (20) and the lost-write
practice night (5); the stale plan still happens (the version practice is not done)."""


def _served(column: str, *, rollback: bool, reads: str) -> str:
    """A condition: `column` is a plan an endpoint serves (or rolls back to)."""
    where = f"active_plan_id = {column}"
    if rollback:
        where = f"({where} OR rollback_plan_id = {column})"
    if reads == "exists":
        return f"EXISTS (SELECT 1 FROM endpoint WHERE {where})"
    if reads == "count":
        return f"(SELECT count(*) FROM endpoint WHERE {where}) > 0"
    served = "SELECT active_plan_id FROM endpoint"
    if rollback:
        served += " UNION SELECT rollback_plan_id FROM endpoint"
    return f"{column} IN ({served})"


@st.composite
def least_power(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One play: a responder who, before the race, limits what the clean-up may delete."""
    rollback = draw(st.booleans())
    reads = draw(st.sampled_from(["exists", "count", "in"]))
    form = draw(st.sampled_from(["plan-trigger", "records-trigger", "edited-cleanup"]))
    if form == "edited-cleanup":
        spare = _served("plan.id", rollback=rollback, reads=reads)
        sql = f"DELETE FROM plan WHERE id < :plan - 7 AND NOT {spare}"
        return [{"as": "responder", "edit": {"statement": job, "sql": sql}}
                for job in ("enactor-b-cleanup", "enactor-c-cleanup")]
    stop = draw(st.sampled_from(["SELECT RAISE(ABORT, 'refused: in service')",
                                 "SELECT RAISE(IGNORE)"]))
    table, column = ("plan", "OLD.id") if form == "plan-trigger" else ("plan_record",
                                                                         "OLD.plan_id")
    name = draw(st.sampled_from(["keep_served", "least_power", "spare_in_use"]))
    return [{"as": "responder", "sql": (
        f"CREATE TRIGGER {name} BEFORE DELETE ON {table} "
        f"WHEN {_served(column, rollback=rollback, reads=reads)} BEGIN {stop}; END")}]


def _play(steps: list[dict[str, Any]]) -> dict[str, Any]:
    script = {"exercise": "dynamodb-dns-race", "roles": ["responder"],
              "steps": [{"at": "23:05", **steps[0]}, *steps[1:], {"wait": "02:45"}]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "play.yaml"
        path.write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
        _, result = run_script(FLAGSHIP, load_script(path, FLAGSHIP), Path(folder) / "t")
    return result


def _reasons(result: dict[str, Any]) -> str:
    return "\n".join(result["reasons"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(play=least_power())
def test_least_power_in_any_form_earns_what_the_plan_in_use_trigger_earns(
        play: list[dict[str, Any]]) -> None:
    result = _play(play)
    assert abs(result["total"] - LEAST_POWER) <= 5, (play, _reasons(result))
    assert result["fault"]["outcome"] == "prevented", (play, _reasons(result))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(low=st.integers(120, 139), span=st.integers(1, 20))
def test_least_power_keyed_on_tonights_plan_numbers_earns_no_guard_points(
        low: int, span: int) -> None:
    """Sparing plans by number (tonight's 140 among them) keeps tonight's outage away, but the
    variant night renumbers every plan: the guard earns nothing, whatever numbers it names."""
    result = _play([{"as": "responder", "sql": (
        f"CREATE TRIGGER spare_tonight BEFORE DELETE ON plan "
        f"WHEN OLD.id BETWEEN {low} AND {low + span} "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END")}])
    empty = next(h for h in result["guards"]["harms"]
                 if h["id"] == "empty-answer" and not h.get("practice"))
    assert empty["points"] == 0, _reasons(result)
