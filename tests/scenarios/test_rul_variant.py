"""Issue 58: recovery-under-load is judged like the flagship, on a variant night drawn for each
session. throttle-by-queue with its admission trigger limited to work queued before 04:30
(`queued_at <= 125`, the end of the guard replay) earned the honest guard's points (guards 16
of 25), because the act had no variant night. The variant counts the night's minutes from a
number drawn for the session (every `:now` reads that many more, the world's minutes move with
it and the dashboards hold the minutes before it) and numbers the DWFM hosts from another: a
guard keyed on tonight's minute, on a count of minutes recorded or on tonight's hosts earns
nothing there, and the worse night counts. The honest guard earns as before, as a trigger or
as an edited statement."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from reference_plays import ReferencePlays

from raceday.engine.load import load_exercise
from raceday.engine.replay_exercises import describe_shift, variant_of
from raceday.errors import ExerciseError
from raceday.judge.variant import draw, minutes_counted_from

ROOT = Path(__file__).resolve().parents[2]
RUL = ROOT / "exercises" / "recovery-under-load"
HERE = Path(__file__).parent / "rul"
THROTTLE = RUL / "scripts" / "throttle-by-queue.yaml"


def _harm(result: dict[str, Any], harm: str) -> dict[str, Any]:
    return next(h for h in result["guards"]["harms"] if h["id"] == harm and not h["practice"])


def test_the_variant_counts_the_minutes_from_a_drawn_number_in_every_statement() -> None:
    exercise = load_exercise(RUL)
    assert exercise.replay is not None and exercise.replay.shifted is not None
    drawn = {draw(exercise.replay.shifted, seed).count_from for seed in range(40)}
    assert min(drawn) >= 200 and max(drawn) <= 5000 and len(drawn) > 30
    shift = draw(exercise.replay.shifted, 2021)
    assert ":count_from" not in shift.seed and ":offset" not in shift.seed
    assert f"lease_until + {shift.count_from}" in shift.seed
    variant = variant_of(exercise, shift)
    now = re.compile(r"(?<![:\w]):now\b")
    for own, other in zip(exercise.statements, variant.statements, strict=True):
        assert len(now.findall(other.sql)) == len(now.findall(own.sql))
        assert other.sql == now.sub(f"(:now + {shift.count_from})", own.sql), own.id
    assert f"its minutes counted from {shift.count_from}" in describe_shift(exercise, shift)
    assert "counted" not in describe_shift(exercise, shift, reveal=False)


def test_minutes_counted_from_leaves_other_names_alone() -> None:
    sql = "SELECT :now, :now_hhmm, x::now, :nowhere, ':now' FROM t WHERE a < :now + 5"
    assert minutes_counted_from(sql, 0) == sql
    assert minutes_counted_from(sql, 437) == (
        "SELECT (:now + 437), :now_hhmm, x::now, :nowhere, '(:now + 437)' FROM t "
        "WHERE a < (:now + 437) + 5")


def test_the_flagships_variant_draws_the_numbers_it_always_drew() -> None:
    """count_from is drawn after the others: a seed gives the flagship the same night (its
    clock, lateness, renumbering and names), and its own statements read no `:now`, so
    only a team's edit that does is counted from elsewhere."""
    flagship = load_exercise(ROOT / "exercises" / "dynamodb-dns-race")
    assert flagship.replay is not None and flagship.replay.shifted is not None
    shift = draw(flagship.replay.shifted, 2021)
    assert 200 <= shift.count_from <= 5000
    without = draw(replace(flagship.replay.shifted, count_from_range=None), 2021)
    assert (shift.clock, shift.later, shift.seed, shift.swapped) == (
        without.clock, without.later, without.seed, without.swapped)
    assert [s.sql for s in variant_of(flagship, shift).statements] == [
        s.sql for s in variant_of(flagship, without).statements]


@pytest.mark.parametrize("script", [
    HERE / "throttle-keyed-on-minute.yaml",   # queued_at <= 125: tonight's 04:30
    HERE / "throttle-keyed-on-count.yaml",    # count(*) FROM minute_stats <= 125
    HERE / "throttle-keyed-on-hosts.yaml",    # NEW.host <= 40: tonight's hosts
])
def test_a_guard_keyed_on_tonights_numbers_earns_nothing(
        reference_play: ReferencePlays, script: Path) -> None:
    result = reference_play("recovery-under-load", script).result
    leases = _harm(result, "leases-lost")
    assert leases["points"] == 0, result["guards"]["reasons"]
    assert result["guards"]["points"] == 0
    reasons = "\n".join(result["guards"]["reasons"])
    assert "in the variant night (the worse of 2 replayed nights)" in reasons
    # the variant's night with no guard is tonight's, minute for minute
    assert leases["baseline"] == 125


def test_the_honest_guard_earns_as_a_trigger_and_as_an_edited_statement(
        reference_play: ReferencePlays) -> None:
    trigger, edited = reference_play.many(
        "recovery-under-load", [THROTTLE, HERE / "admit-by-queue-edited.yaml"])
    for played in (trigger, edited):
        assert _harm(played.result, "leases-lost")["points"] >= 10, \
            played.result["guards"]["reasons"]
        assert played.result["guards"]["collateral"] == 0
    assert trigger.result["guards"]["points"] == 16
    assert abs(trigger.result["guards"]["points"] - edited.result["guards"]["points"]) <= 5


@pytest.mark.parametrize(("given", "said"), [
    ("count_from: [5000, 200]", 'replay: shifted: "count_from": the range [least, most] runs '
                                "backwards"),
    ("count_from: -3", '"count_from" must be at least 0, not -3'),
    ("count_from: soon", '"count_from" must be a whole number'),
    ("", None),  # none: the seed's :count_from with nothing to say it
])
def test_a_count_from_the_reader_cannot_use_is_named_at_its_line(
        tmp_path: Path, given: str, said: str | None) -> None:
    folder = tmp_path / "rul"
    shutil.copytree(RUL, folder, ignore=shutil.ignore_patterns("scripts"))
    text = (folder / "exercise.yaml").read_text(encoding="utf-8")
    line = "    count_from: [200, 5000]\n"
    assert line in text
    text = text.replace(line, f"    {given}\n" if given else "")
    (folder / "exercise.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ExerciseError) as raised:
        load_exercise(folder)
    expected = said or '"seed" uses :count_from but no "count_from" says where'
    assert expected in str(raised.value), str(raised.value)
