"""A delete that waits is not a delete refused (issue 58): a soft delete with a long purge
keeps every plan an Enactor may still apply, the normal night's clean-up still deletes what
it deleted, only later, and DNS answers all night. Judged by effect, it earns what the
least-power clean-up earns, in a trigger or in edited statements alike.

Beaten both ways: a clean-up that never deletes refuses its work (collateral, as before); one
keyed on tonight's minute numbers (nothing until minute 110) keeps the race away only
tonight, and the variant night, whose minutes count from another number, sees it; one that
waits longer than `DEFERRED_AT_MOST` refuses its work too. A write of another kind that did
not take (an apply keyed on plan numbers) is superseded, not deferred: isolation-lab's
cheat-plan-numbers still scores 40 (its golden transcript)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raceday.engine.clock import clock_time
from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.replay_outcomes import DEFERRED_AT_MOST, GoodRun, Outcomes, blocked_writes
from raceday.engine.script import load_script
from raceday.engine.statement_text import deleted_table

ROOT = Path(__file__).resolve().parents[2]
FLAGSHIP = load_exercise(ROOT / "exercises" / "dynamodb-dns-race")
JUDGE = Path(__file__).resolve().parent / "judge"
LEAST_POWER = 85
"""What the clean-up edited to spare served plans earns (test_least_power_forms)."""


def _time(minute: int) -> str:
    return clock_time(FLAGSHIP.clock.start, minute)


# -- the rule, on runs written down ------------------------------------------------------------

CLEANUP = ("cleanup", "cleanup-sql")


def _good(*minutes: int) -> list[GoodRun]:
    """The original night: the clean-up deletes one plan at each of `minutes`."""
    return [("cleanup", m, 1, ("cleanup-sql",), (("cleanup-sql", "plan", 1),)) for m in minutes]


def _team(deleting: dict[int, int], *, failed: tuple[int, ...] = (),
          minutes: tuple[int, ...] = ()) -> Outcomes:
    """The team's night: the clean-up at each of `minutes`, deleting `deleting[m]` rows."""
    out: Outcomes = {}
    for m in minutes:
        rows = deleting.get(m, 0)
        out[("cleanup", m, 1)] = (
            None if rows else "0 rows changed", ("cleanup-sql",) if rows else (),
            m in failed, (("cleanup-sql", "plan", rows),) if rows else ())
    return out


def test_a_delete_done_later_is_not_refused() -> None:
    runs = (0, 4, 8, 120)
    assert blocked_writes(_good(0, 4, 8), _team({120: 3}, minutes=runs), _time) == ()


def test_a_delete_done_too_late_or_never_is_refused() -> None:
    late = DEFERRED_AT_MOST + 1
    blocked = blocked_writes(_good(0, 4), _team({late: 2}, minutes=(0, 4, late)), _time)
    assert [b.at for b in blocked] == ["23:00"]  # 4 + 180 reaches it; 0 + 180 does not
    never = blocked_writes(_good(0, 4), _team({}, minutes=(0, 4, 200)), _time)
    assert len(never) == 2


def test_a_later_delete_of_fewer_rows_than_the_night_deleted_does_not_cover_them() -> None:
    blocked = blocked_writes(_good(0, 4, 8), _team({100: 2}, minutes=(0, 4, 8, 100)), _time)
    assert [b.at for b in blocked] == ["23:08"]


def test_a_failed_run_is_refused_even_if_a_later_one_deletes() -> None:
    blocked = blocked_writes(_good(0), _team({60: 5}, minutes=(0, 60), failed=(0,)), _time)
    assert len(blocked) == 1


def test_a_write_that_is_not_a_delete_is_never_deferred() -> None:
    good: list[GoodRun] = [("apply", 0, 1, ("apply-sql",), ())]
    team: Outcomes = {("apply", 0, 1): ("0 rows changed", (), False, ()),
                      ("apply", 10, 1): (None, ("apply-sql",), False, ())}
    assert len(blocked_writes(good, team, _time)) == 1


# -- the plays ---------------------------------------------------------------------------------


def _play(path: Path, transcripts: Path) -> dict[str, Any]:
    _, result = run_script(FLAGSHIP, load_script(path, FLAGSHIP), transcripts)
    return result


@pytest.mark.parametrize("name", ["soft-delete-trigger", "soft-delete-edited"])
def test_a_soft_delete_earns_what_least_power_earns_in_any_form(
        name: str, tmp_path: Path) -> None:
    result = _play(JUDGE / f"{name}.yaml", tmp_path)
    guards = result["guards"]
    assert guards["blocked_good_writes"] == [] and guards["collateral"] == 0
    assert abs(result["total"] - LEAST_POWER) <= 5, result["reasons"]
    assert result["fault"]["occurred"] is False


def test_a_clean_up_that_never_deletes_refuses_its_work(tmp_path: Path) -> None:
    result = _play(JUDGE / "cleanup-never.yaml", tmp_path)
    assert result["guards"]["collateral"] > 0 and result["guards"]["blocked_good_writes"]
    assert result["total"] == 0


def test_a_clean_up_keyed_on_tonights_minutes_earns_nothing(tmp_path: Path) -> None:
    result = _play(JUDGE / "cleanup-keyed-on-minute.yaml", tmp_path)
    assert result["guards"]["points"] == 0 and result["total"] == 0
    assert "in the variant night" in "\n".join(result["reasons"])


TRIGGER = """
      ALTER TABLE plan ADD COLUMN deleted_at TEXT;
      CREATE TRIGGER plan_soft_delete BEFORE DELETE ON plan
      WHEN OLD.id >= (SELECT max(id) FROM plan) - {kept}
      BEGIN
        UPDATE plan SET deleted_at = coalesce(deleted_at, 'marked') WHERE id = OLD.id;
        SELECT RAISE(IGNORE);
      END"""


def _soft_delete(kept: int, form: str) -> list[dict[str, Any]]:
    """The soft delete keeping `kept` generations, as a trigger or as edited clean-ups."""
    if form == "trigger":
        return [{"at": "23:05", "as": "responder", "sql": TRIGGER.format(kept=kept)}]
    return [{"at": "23:05", "as": "responder", "sql": "ALTER TABLE plan ADD COLUMN deleted_at TEXT"},
            {"as": "responder", "edit": {
                "statement": "enactor-b-cleanup",
                "sql": "UPDATE plan SET deleted_at = 'marked' WHERE id < :plan - 7"}},
            {"as": "responder", "edit": {
                "statement": "enactor-c-cleanup",
                "sql": f"DELETE FROM plan WHERE id < :plan - {kept}"}}]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kept=st.integers(8, 40), form=st.sampled_from(["trigger", "edited"]))
def test_a_soft_delete_keeping_any_number_of_generations_up_to_its_purge_earns_alike(
        kept: int, form: str) -> None:
    """Kept 8 to 40 generations (its purge 16 minutes to about two hours after the mark),
    in either form, the soft delete refuses nothing and earns least power's points."""
    play = {"exercise": "dynamodb-dns-race", "roles": ["responder"],
            "steps": [*_soft_delete(kept, form), {"wait": "02:45"}]}
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "soft.yaml"
        path.write_text(yaml.safe_dump(play), encoding="utf-8")
        result = _play(path, Path(scratch) / "t")
    assert result["guards"]["blocked_good_writes"] == []
    assert abs(result["total"] - LEAST_POWER) <= 5, result["reasons"]


@pytest.mark.parametrize("sql, table", [
    ("DELETE FROM plan WHERE id < :plan - 7", "plan"),
    ("-- the clean-up\n  delete from \"Plan_Record\" where 1", "plan_record"),
    ("/* purge */ DELETE FROM main.plan", "main.plan"),
    ("UPDATE plan SET deleted_at = 1", None),
    ("SELECT 'DELETE FROM plan'", None),
])
def test_the_table_a_delete_deletes_from_is_read_past_comments(sql: str, table: str | None) -> None:
    assert deleted_table(sql) == table
