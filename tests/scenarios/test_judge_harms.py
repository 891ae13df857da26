"""The judge by harm (issue 27): guards earn what they keep away from the customers, measured
by raceday on every replayed night, never a pattern a team can bend.

Each play of the issue's table is played headless (the plays are beside this file, in
`judge/`) with the range its guards must score and the reason they must give; each right
answer is set against the same play without it. The variant night is drawn from the session
seed (tests/conftest.py fixes RACEDAY_SEED), so runs are repeatable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reference_plays import ReferencePlays

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.judge.variant import draw

ROOT = Path(__file__).resolve().parents[2]
PLAYS = Path(__file__).resolve().parent / "judge"
FLAGSHIP = ROOT / "exercises" / "dynamodb-dns-race"


def play(name: str, transcripts: Path, exercise: Path = FLAGSHIP) -> dict[str, Any]:
    path = PLAYS / f"{name}.yaml" if (PLAYS / f"{name}.yaml").exists() else Path(name)
    ex = load_exercise(exercise)
    _, result = run_script(ex, load_script(path, ex), transcripts)
    return result


def reasons(result: dict[str, Any]) -> str:
    return "\n".join(result["reasons"])


def harm(result: dict[str, Any], harm_id: str) -> dict[str, Any]:
    """The harm's verdict on the race nights (not on a practice night)."""
    return next(h for h in result["guards"]["harms"]
                if h["id"] == harm_id and not h.get("practice"))


Judged = Callable[[str], dict[str, Any]]


@pytest.fixture
def judged(reference_play: ReferencePlays) -> Judged:
    """`judged(name)`: the flagship play `judge/NAME.yaml`'s score, played once for the whole
    run (tests/store/postgres/test_pg_judge_parity.py reads the same plays on SQLite)."""
    return lambda name: reference_play(FLAGSHIP.name, PLAYS / f"{name}.yaml").result


# (play, lowest guards, highest guards, words the reasons must contain)
FLAGSHIP_PLAYS = [
    # exploits of the old patterns: no more than what they kept from the customers
    ("number-keyed-trigger", 0, 0, "in the variant night"),
    ("rollback-null-trigger", 0, 0, "on the normal night"),
    ("rollback-pointer-edit", 25, 25, "it still happened from 23:48"),
    # right answers in forms no script used before
    ("version-check-edit", 25, 25, "kept away all night in both replayed nights"),
    ("foreign-key-only", 30, 30, "kept away all night in both replayed nights"),
    ("never-empty-whole", 35, 35, "kept away all night in both replayed nights"),
    # the clean-up may not delete a served plan's records: least power, as plan-in-use
    ("never-empty-delete", 25, 25, "kept away all night in both replayed nights"),
    ("forward-only-strict", 20, 20, "collateral: a good write of the normal night was refused"),
    # row counts: a conditional write that lost, and the Enactor carried on to the next endpoint
    ("row-count-conditional-only", 25, 25, "carried on): present 55 minutes"),
    ("row-count-stop", 30, 30, "the Enactor carried on): kept away all night"),
    ("row-count-noop-next", 0, 0, "enactor-a-apply-next changed 0 rows"),
    # names: the variant night draws which Enactor is slow and which endpoint it is slow on
    ("name-keyed-enactor", 0, 0, "in the variant night"),
    ("name-keyed-endpoint", 0, 0, "in the variant night"),
    ("name-free-forward", 30, 30, "kept away all night in both replayed nights"),
]


@pytest.mark.parametrize(("name", "low", "high", "words"), FLAGSHIP_PLAYS,
                         ids=[p[0] for p in FLAGSHIP_PLAYS])
def test_guards_earn_the_harm_they_keep_away(name: str, low: int, high: int, words: str,
                                             judged: Judged) -> None:
    result = judged(name)
    assert low <= result["guards"]["points"] <= high, reasons(result)
    assert words in reasons(result), reasons(result)
    # the race steps are the story: they earn nothing of their own
    assert all(step["points"] == 0 for step in result["guards"]["steps"])


def test_the_stale_plan_is_a_harm_raceday_keeps_history_for(judged: Judged) -> None:
    """Bending the rollback pointer hides the old "active < rollback" pattern; raceday's own
    memory of the highest plan the endpoint served still sees Enactor A go back."""
    result = judged("rollback-pointer-edit")
    stale = harm(result, "stale-plan")
    assert stale["points"] == 0 and stale["minutes"] > 0
    assert harm(result, "empty-answer")["points"] == 20


def test_a_never_empty_guard_earns_more_than_the_same_response_without_it(
        judged: Judged) -> None:
    guarded = judged("never-empty-delete")
    bare = judged("never-empty-responds-no-guard")
    assert guarded["guards"]["points"] > bare["guards"]["points"] == 0
    assert guarded["total"] > bare["total"]


def test_blocked_planned_rollbacks_are_a_deduction_not_a_zero(judged: Judged) -> None:
    result = judged("forward-only-strict")
    assert result["guards"]["collateral"] == 10
    assert len(result["guards"]["blocked_good_writes"]) == 2
    # detection and recovery are not taken away for a guard that costs two good writes
    assert result["detection"]["points"] == result["detection"]["max"]
    assert result["recovery"]["points"] == result["recovery"]["max"]
    assert result["fault"]["outcome"] == "prevented"


def test_a_guard_that_breaks_the_normal_night_earns_nothing(judged: Judged) -> None:
    """Nulling the rollback pointer un-wedges the race, and empties the FIPS endpoint at its
    planned rollback on the normal night: an outage of its own."""
    result = judged("rollback-null-trigger")
    assert harm(result, "empty-answer")["points"] > 0  # what the race alone would have said
    assert result["guards"]["points"] == 0
    assert "stop the service doing its job" in reasons(result)


def test_the_variant_is_drawn_for_the_session_and_no_file_says_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ex = load_exercise(FLAGSHIP)
    assert ex.replay is not None and ex.replay.shifted is not None
    shift = ex.replay.shifted
    drawn = {draw(shift, seed).seed for seed in range(20)}
    assert len(drawn) > 10  # the renumbering differs from session to session
    offsets = {draw(shift, seed).clock for seed in range(20)}
    assert len(offsets) > 5
    # which Enactor is slow, and on which endpoint: each of the others drawn in some session
    trades = {draw(shift, seed).swapped for seed in range(40)}
    assert {t[0][1] for t in trades} == {"enactor-b", "enactor-c"}
    assert len({t[1][1] for t in trades}) == 3
    # nothing in the exercise's folder names a drawn renumbering
    text = "\n".join(p.read_text(encoding="utf-8") for p in FLAGSHIP.rglob("*")
                     if p.is_file() and p.suffix in (".yaml", ".sql", ".md"))
    seed_sql = draw(shift, 2021).seed
    offset = seed_sql.split("id + ")[1].split(";")[0]
    assert f"+ {offset}" not in text and str(int(offset) + 140) not in text


def test_two_runs_with_the_same_seed_are_the_same(tmp_path: Path, judged: Judged) -> None:
    first = judged("never-empty-delete")  # played once for the run, maybe by another worker
    second = play("never-empty-delete", tmp_path)
    assert first["guards"] == second["guards"]
    assert first["total"] == second["total"]


def test_the_variant_is_not_shown_before_the_end() -> None:
    """A replay asked for during play names no number of the variant night; the final one,
    once nothing can be played to it any more, does."""
    from raceday.engine.replay_exercises import describe_shift

    ex = load_exercise(FLAGSHIP)
    assert ex.replay is not None and ex.replay.shifted is not None
    variant = draw(ex.replay.shifted, 2021)
    during = describe_shift(ex, variant, reveal=False)
    after = describe_shift(ex, variant, reveal=True)
    assert "shown at the end" in during and ":" not in during.replace("at the end", "")
    assert "the variant night (the clock from" in after and "renumbered" in after


OTHER_EXERCISES = [
    # lost-update-basics: no-op edits of statements the normal morning never runs
    ("lost-update-basics", "tests/scenarios/honest/lub-noop-everything.yaml", 0, 0),
    ("lost-update-basics", "tests/scenarios/honest/lub-noop-save.yaml", 0, 0),
    ("lost-update-basics", "exercises/lost-update-basics/scripts/solo-complete.yaml", 30, 30),
    # isolation-lab: stopping Enactor B is not a guard
    ("isolation-lab", "exercises/isolation-lab/scripts/cheat-stop-enactor-b.yaml", 0, 0),
    ("isolation-lab", "exercises/isolation-lab/scripts/version-column.yaml", 20, 20),
    # recovery-under-load: throttling by queue depth keeps most of the collapse away
    ("recovery-under-load", "exercises/recovery-under-load/scripts/nothing.yaml", 0, 0),
    ("recovery-under-load", "exercises/recovery-under-load/scripts/throttle-by-queue.yaml",
     15, 25),
]


@pytest.mark.parametrize(("exercise", "script", "low", "high"), OTHER_EXERCISES,
                         ids=[f"{e}-{Path(s).stem}" for e, s, _l, _h in OTHER_EXERCISES])
def test_every_bundled_exercise_is_judged_by_harm(exercise: str, script: str, low: int,
                                                  high: int,
                                                  reference_play: ReferencePlays) -> None:
    result = reference_play(exercise, ROOT / script).result  # played once for the whole run
    assert low <= result["guards"]["points"] <= high, reasons(result)
    assert result["guards"]["harms"], "judged by harm, harm by harm"


def test_the_isolation_lab_log_is_not_the_judge(tmp_path: Path) -> None:
    """An edit of Enactor A's log statement so it never writes 'applied' hid the lost update
    from the old invariant (which read the log); raceday's own history of the endpoint still
    sees the endpoint go back."""
    script = tmp_path / "hide-the-log.yaml"
    script.write_text("""exercise: isolation-lab
roles: [operator]
steps:
  - as: operator
    edit:
      statement: a-log
      sql: |-
        INSERT INTO enactor_run (at, role, plan_id, outcome)
        SELECT :now_hhmm, 'enactor-a', :plan, 'kept the newer active plan'
        WHERE NOT EXISTS (SELECT 1 FROM enactor_run r
                          WHERE r.role = 'enactor-a' AND r.plan_id = :plan)
  - wait: "00:08"
""", encoding="utf-8")
    result = play(str(script), tmp_path, ROOT / "exercises" / "isolation-lab")
    assert result["fault"]["occurred"], reasons(result)
    assert result["guards"]["points"] == 0, reasons(result)
    # the lab's task and the repair's "held" read the log before: 50 for hiding it. The task
    # now needs the replay to keep the harm away, and "held" is the customers' view.
    assert result["tasks"]["points"] == 0, reasons(result)
    assert result["recovery"]["points"] == 0, reasons(result)
    assert result["total"] == 0, reasons(result)
    assert "still reaching the customers" in reasons(result)


def test_a_stop_on_zero_rows_earns_more_than_the_same_conditional_write_without_it(
        judged: Judged) -> None:
    """The article's row counts: a conditional write that changed 0 rows lost its race. An
    Enactor told to stop then leaves the next endpoint alone; one that carries on puts the old
    plan there, and the clean-up of the same minute empties it."""
    stop = judged("row-count-stop")
    carry = judged("row-count-conditional-only")
    assert stop["total"] > carry["total"]
    night = next(h for h in stop["guards"]["harms"] if h.get("practice") == "lost-write")
    assert night["points"] == night["max"] == 5
    lost = next(h for h in carry["guards"]["harms"] if h.get("practice") == "lost-write")
    assert lost["points"] == 0 and lost["minutes"] > 0


def test_the_drawn_names_trade_places_in_sql_text_only() -> None:
    from raceday.judge.variant import swap_names

    sql = ("UPDATE endpoint SET updated_by = 'enactor-a' WHERE name = 'x' "
           "AND updated_by <> 'enactor-c' AND note LIKE 'enactor-%'")
    swapped = swap_names(sql, (("enactor-a", "enactor-c"),))
    assert swapped == ("UPDATE endpoint SET updated_by = 'enactor-c' WHERE name = 'x' "
                       "AND updated_by <> 'enactor-a' AND note LIKE 'enactor-%'")
    assert swap_names(swapped, (("enactor-a", "enactor-c"),)) == sql


def test_a_repair_that_tears_down_the_worlds_safety_nets_scores_below_a_careful_one(
        judged: Judged) -> None:
    """Issue 58: a repair that wiped every rollback pointer and deleted the plan history
    scored 60, the same as a careful repair at the same pace."""
    careful = judged("careful-repair")
    scorched = judged("scorched-earth-repair")
    assert careful["recovery"]["points"] == careful["recovery"]["max"], reasons(careful)
    assert scorched["recovery"]["points"] == careful["recovery"]["points"] - 10
    assert scorched["total"] < careful["total"]
    said = reasons(scorched)
    assert "every endpoint can roll back one flip" in said
    assert ("the eight newest plan generations are kept, with their records (where it "
            "failed: only 1 left)") in said
    assert "safety net" not in reasons(careful)
    hidden = judged("hide-torn-safety-nets")  # empty plans, rollback = active
    assert hidden["recovery"]["points"] == scorched["recovery"]["points"], reasons(hidden)


def test_a_guard_that_failed_to_build_is_named_in_the_score(judged: Judged) -> None:
    """replay-guarded's table rebuild was refused on PostgreSQL and no score line said so."""
    result = judged("guard-never-built")
    said = reasons(result)
    assert ("guards: 1 schema change of the team's failed and built nothing (first: ALTER "
            "TABLE endpoint ADD … at 23:05: ") in said, said
    assert result["guards"]["points"] == 0
    assert "schema change" not in reasons(judged("version-check-edit"))
