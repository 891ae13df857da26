"""The onboarding exercise, played end to end by its reference scripts and a few variants.

Each script is run headless, the way `raceday run ... --json` runs it, and its outcome is
asserted: when the lost update happened, how fast it was named, which of the six replayed
mistakes the player's guards stopped, what each job left behind in `job_run`, the recovery
and the tasks. The variants check the exercise's own design: each guard alone stops exactly
its own replayed mistake and no other, so the six lessons do not blur into one.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any, TypeVar

import pytest

from raceday.cli import main
from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "lost-update-basics"
SCRIPTS = EXERCISE / "scripts"
STEPS = ["stale-retry", "blank-address", "in-use-delete", "late-save", "duplicate-retry",
         "backwards"]
GUARD_TASKS = ["guard-version", "guard-blank", "guard-in-use", "guard-fence", "guard-retry",
               "guard-forward"]
SOURCES = {"aws-summary", "dat453", "health-dashboard", "secondary", "exercise-assumption"}
Events = tuple[ev.Event, ...]
E = TypeVar("E", bound=ev.Event)

# What each replayed job leaves in job_run when every guard is in place.
GUARDED_OUTCOMES = {
    "maintenance: put primary_db back (retry)": "changed nothing",
    "inventory sync": "stopped by an error",
    "clean-up: delete hosts two generations old": "stopped by an error",
    "maintenance: put primary_db back (after re-reading the version)": "changed nothing",
    "register db-4 for reads (retry)": "no duplicate",
    "maintenance: restore the 09:01 snapshot": "stopped by an error",
}
UNGUARDED_OUTCOMES = {
    "maintenance: put primary_db back (retry)": "overwrote primary_db",
    "inventory sync": "blanked an address",
    "clean-up: delete hosts two generations old": "deleted the primary host",
    "maintenance: put primary_db back (after re-reading the version)": "overwrote primary_db",
    "register db-4 for reads (retry)": "listed a host twice",
    "maintenance: restore the 09:01 snapshot": "overwrote primary_db",
}


def play_file(path: Path, transcripts: Path) -> tuple[dict[str, Any], Events]:
    """Play a script; return its JSON result and its transcript's events."""
    exercise = load_exercise(EXERCISE)
    script = load_script(path, exercise)
    _, result = run_script(exercise, script, transcripts)
    return result, read_events(Path(result["session"])).events


def play(name: str, transcripts: Path) -> tuple[dict[str, Any], Events]:
    return play_file(SCRIPTS / f"{name}.yaml", transcripts)


def kinds(events: Events, kind: type[E]) -> list[E]:
    return list(of_kind(events, kind))


def steady(events: Events) -> list[ev.Event]:
    """The events without what differs from run to run by nature (wall clock, timings)."""
    out: list[ev.Event] = []
    for e in events:
        if isinstance(e, ev.Statement):
            e = dataclasses.replace(e, elapsed_ms=0.0)
        out.append(dataclasses.replace(e, wall_time=""))
    return out


def reasons(result: dict[str, Any], section: str | None = None) -> str:
    return "\n".join(result[section]["reasons"] if section else result["reasons"])


def world(result: dict[str, Any], sql: str) -> list[tuple[Any, ...]]:
    """Query the session's final world.db (read only)."""
    path = Path(result["session"]) / "world.db"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def outcomes(result: dict[str, Any]) -> dict[str, str]:
    """What each replayed job left behind (the plain 'done' log lines left out)."""
    rows = world(result, "SELECT job, outcome FROM job_run "
                         "WHERE at >= '09:14' AND outcome <> 'done' ORDER BY id")
    return dict(rows)


# -- the exercise itself ---------------------------------------------------------------------


def test_the_exercise_checks_clean_and_is_an_onboarding_exercise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", str(EXERCISE)]) == 0
    assert "ok (lost-update-basics" in capsys.readouterr().out
    exercise = load_exercise(EXERCISE)
    assert exercise.level == "beginner"
    assert 15 <= exercise.length <= 20
    assert exercise.default_roles == ("operator",)
    assert exercise.clock.minutes_per_statement == 1
    assert exercise.clock.length_minutes <= 25
    assert exercise.role("operator").schema
    assert {i.source for i in exercise.injects} <= SOURCES
    guards = exercise.scoring.guards
    assert guards is not None
    assert [s.id for s in guards.steps] == STEPS
    by_id = {t.id: t for t in exercise.tasks}
    for task_id in GUARD_TASKS:
        task = by_id[task_id]
        assert task.role == "operator" and task.points == 5 and task.hint and task.done_when
        assert any(h.task == task_id for h in exercise.hints)
    sections = exercise.scoring
    assert sections.detection is not None and sections.recovery is not None
    assert (sections.tasks + sections.detection.points + guards.points
            + sections.recovery.points) == 100


# -- the lost update, as the automation plays it ---------------------------------------------


def test_watching_only_the_lost_update_happens_at_0903_and_every_mistake_lands(
    tmp_path: Path,
) -> None:
    result, events = play("no-guards", tmp_path)
    assert {k: result["fault"][k] for k in ("occurred", "started_at", "invariant")} == {
        "occurred": True, "started_at": "09:03", "invariant": "lost-update"}
    saves = [e for e in kinds(events, ev.Statement) if e.statement == "writer-b-save"]
    assert [(e.sim_time, e.rowcount) for e in saves] == [
        ("09:03", 1), ("09:14", 1), ("09:17", 1)]
    # Detected by the monitor naming primary_db, one minute after the fault.
    assert result["detection"]["points"] == 20
    assert result["detection"]["latency_minutes"] == 1
    assert "monitor 'primary-not-active'" in result["detection"]["by"]
    # No guard: every replayed mistake happened, each at its own minute.
    assert result["guards"]["points"] == 0
    assert result["guards"]["prevented"] == []
    assert result["guards"]["happened"] == STEPS
    steps = {e.step: e.sim_time for e in kinds(events, ev.RaceStep)}
    assert steps == {"stale-retry": "09:14", "blank-address": "09:15", "in-use-delete": "09:16",
                     "late-save": "09:17", "duplicate-retry": "09:17", "backwards": "09:18"}
    assert outcomes(result) == UNGUARDED_OUTCOMES
    # Nothing repaired: the world is broken at the end (primary gone, db-4 listed twice).
    assert result["recovery"]["points"] == 0
    assert result["recovery"]["restored"] is False
    assert world(result, "SELECT value, version FROM config") == [("db-1", 1)]
    assert world(result, "SELECT count(*) FROM host WHERE name = 'db-1'") == [(0,)]
    assert result["tasks"]["points"] == 0 and result["tasks"]["done"] == []
    assert 15 <= result["total"] <= 25


# -- doing it right --------------------------------------------------------------------------


def test_the_alarms_follow_the_faults_the_night_has(tmp_path: Path) -> None:
    """The page follows the lost update; the later mistakes bring their own alarms, and a
    morning whose guards stop them hears none of those."""
    _, bare = play("no-guards", tmp_path / "bare")
    _, guarded = play("replay-all-guards", tmp_path / "guarded")
    heard = {e.id: e.sim_time for e in kinds(bare, ev.Inject)}
    faults = {e.invariant: e.sim_time for e in kinds(bare, ev.Fault)}
    assert heard["page"] == "09:04" and faults["lost-update"] == "09:03"
    assert heard["app-no-address"] == faults["no-address"] == "09:16"
    assert heard["reads-skewed"] == faults["duplicate-reader"] == "09:17"
    quiet = {e.id for e in kinds(guarded, ev.Inject)}
    assert "page" in quiet and not quiet & {"app-no-address", "reads-skewed"}


def test_solo_complete_stops_every_mistake_and_scores_full_marks(tmp_path: Path) -> None:
    result, events = play("solo-complete", tmp_path)
    assert result["total"] == result["max"] == 100
    assert result["fault"]["occurred"] is True
    assert result["fault"]["started_at"] == "09:03"
    assert result["detection"]["latency_minutes"] == 1  # its looks are free
    assert result["detection"]["points"] == 20
    assert result["guards"]["prevented"] == STEPS
    assert result["guards"]["happened"] == []
    assert all(path["ok"] for path in result["guards"]["good_path"])
    assert len(result["guards"]["good_path"]) == 4
    assert result["recovery"]["points"] == 20
    assert result["recovery"]["restored"] is True
    assert result["recovery"]["restored_at"] == "09:05"  # its looks are free
    assert kinds(events, ev.RaceStep) == []
    faults = kinds(events, ev.Fault)
    assert [(f.invariant, f.relapse) for f in faults] == [("lost-update", False)]
    assert result["tasks"]["points"] == 30
    assert set(result["tasks"]["done"]) == {"repair", *GUARD_TASKS}
    assert outcomes(result) == GUARDED_OUTCOMES
    # Each refusal is the guard's own: a CHECK, a foreign key, the trigger; the version
    # check and the fencing token change 0 rows; the unique key makes the retry a no-op.
    failed = [(e.sim_time, e.statement, e.error_kind, e.error or "")
              for e in kinds(events, ev.Statement) if e.automated and not e.ok]
    assert [(t, s, k) for t, s, k, _ in failed] == [
        ("09:15", "a-sync", "constraint"),
        ("09:16", "a-cleanup", "constraint"),
        ("09:18", "writer-b-restore", "constraint"),
    ]
    assert "CHECK constraint failed" in failed[0][3]
    assert "FOREIGN KEY constraint failed" in failed[1][3]
    assert "may only go forward" in failed[2][3]
    zero = [(e.sim_time, e.statement) for e in kinds(events, ev.Statement)
            if e.automated and e.ok and e.rowcount == 0]
    assert zero == [("09:14", "writer-b-save"), ("09:17", "writer-b-save"),
                    ("09:17", "a-register")]
    # The player's statements all worked, and writer A's value survived the replay.
    assert all(e.ok for e in kinds(events, ev.Statement) if not e.automated)
    assert world(result, "SELECT value, updated_by FROM config") == [("db-2", "operator")]
    assert world(result, "SELECT host FROM read_pool ORDER BY host") == [("db-2",), ("db-4",)]


# -- the wrong finding -----------------------------------------------------------------------


def test_a_wrong_finding_costs_points_and_one_guard_is_not_enough(tmp_path: Path) -> None:
    result, events = play("wrong-finding", tmp_path)
    declared = [(e.finding, e.correct) for e in kinds(events, ev.Declaration)]
    assert declared == [("replica-lag", False), ("lost-update", True)]
    assert result["fault"]["occurred"] is True
    assert result["detection"]["latency_minutes"] == 2  # the wrong finding's minute
    assert result["detection"]["points"] == 15
    text = reasons(result, "detection")
    assert "wrong finding declared ('replica-lag' at 09:04)" in text
    assert "replica-lag" in reasons(result)
    assert result["guards"]["prevented"] == ["stale-retry"]
    # by harm kept away (issue 27): the version check spares most of the lost update's minutes
    assert result["guards"]["points"] == 9
    assert result["tasks"]["done"] == ["repair", "guard-version"]
    assert result["recovery"]["restored"] is False
    assert "came back at 09:16" in reasons(result, "recovery")
    assert result["recovery"]["points"] == 8
    assert 25 <= result["total"] <= 40


# -- the exercise's design: one lesson per guard ---------------------------------------------

OBSERVE_AND_REPAIR = """\
exercise: lost-update-basics
roles: [operator]
steps:
  - wait: "09:04"
  - as: operator
    declare: lost-update
  - as: operator
    sql: >-
      UPDATE config SET value = 'db-2', version = version + 1, updated_by = 'operator',
      updated_at = '09:05' WHERE key = 'primary_db'
"""
LOOK_AFTER_THE_REPLAY = """\
  - wait: "09:19"
  - as: operator
    sql: SELECT at, role, job, outcome FROM job_run ORDER BY id
"""
GUARD_STEPS = {
    "guard-version": """\
  - as: operator
    edit:
      statement: writer-b-save
      sql: >-
        UPDATE config SET value = :value, version = version + 1, updated_by = 'writer-b',
        updated_at = :now_hhmm WHERE key = 'primary_db' AND version = :version
""",
    "guard-blank": """\
  - as: operator
    sql: >-
      CREATE TABLE host_new (name TEXT PRIMARY KEY, address TEXT NOT NULL
      CHECK (length(trim(address, ' ' || char(9, 10, 13))) > 0),
      status TEXT NOT NULL DEFAULT 'active', generation INTEGER NOT NULL);
      INSERT INTO host_new SELECT name, address, status, generation FROM host;
      DROP TABLE host; ALTER TABLE host_new RENAME TO host;
""",
    "guard-in-use": """\
  - as: operator
    sql: >-
      CREATE TABLE config_new (key TEXT PRIMARY KEY,
      value TEXT NOT NULL REFERENCES host (name) ON DELETE RESTRICT,
      version INTEGER NOT NULL, updated_by TEXT NOT NULL, updated_at TEXT NOT NULL);
      INSERT INTO config_new SELECT key, value, version, updated_by, updated_at FROM config;
      DROP TABLE config; ALTER TABLE config_new RENAME TO config;
""",
    "guard-fence": """\
  - as: operator
    edit:
      statement: writer-b-save
      sql: >-
        UPDATE config SET value = :value, version = version + 1, updated_by = 'writer-b',
        updated_at = :now_hhmm WHERE key = 'primary_db'
        AND :token = (SELECT token FROM lease WHERE name = 'primary_db')
""",
    "guard-retry": """\
  - as: operator
    sql: CREATE UNIQUE INDEX read_pool_host ON read_pool (host)
""",
    "guard-forward": """\
  - as: operator
    sql: >-
      CREATE TRIGGER config_version_forward BEFORE UPDATE ON config
      WHEN NEW.version < OLD.version
      BEGIN SELECT RAISE(ABORT, 'config.version may only go forward'); END;
""",
}


def play_text(text: str, tmp_path: Path) -> tuple[dict[str, Any], Events]:
    path = tmp_path / "play.yaml"
    path.write_text(text, encoding="utf-8")
    return play_file(path, tmp_path / "transcripts")


@pytest.mark.parametrize(("task", "step"), list(zip(GUARD_TASKS, STEPS, strict=True)))
def test_each_guard_alone_stops_its_own_mistake_and_no_other(
    task: str, step: str, tmp_path: Path
) -> None:
    result, _ = play_text(OBSERVE_AND_REPAIR + GUARD_STEPS[task] + LOOK_AFTER_THE_REPLAY,
                          tmp_path)
    assert result["guards"]["prevented"] == [step]
    # by harm kept away (issue 27): one guard earns only the harm minutes it spares (the
    # replay matrix pins each one's figure), never more than one harm's worth
    assert 0 <= result["guards"]["points"] <= 10 and result["guards"]["harms"]
    assert set(result["tasks"]["done"]) == {"repair", task}
    assert all(path["ok"] for path in result["guards"]["good_path"])


def test_a_check_that_trims_only_spaces_lets_the_tab_through(tmp_path: Path) -> None:
    naive = GUARD_STEPS["guard-blank"].replace("trim(address, ' ' || char(9, 10, 13))",
                                               "trim(address)")
    assert naive != GUARD_STEPS["guard-blank"]
    result, _ = play_text(OBSERVE_AND_REPAIR + naive + LOOK_AFTER_THE_REPLAY, tmp_path)
    assert "blank-address" in result["guards"]["happened"]
    assert "guard-blank" not in result["tasks"]["done"]
    assert outcomes(result)["inventory sync"] == "blanked an address"


def test_the_foreign_key_before_the_check_wedges_the_host_rebuild(tmp_path: Path) -> None:
    # The hint's order matters: once config references host, host cannot be dropped.
    text = (OBSERVE_AND_REPAIR + GUARD_STEPS["guard-in-use"] + GUARD_STEPS["guard-blank"]
            + LOOK_AFTER_THE_REPLAY)
    result, events = play_text(text, tmp_path)
    errors = [e.error for e in kinds(events, ev.Statement)
              if not e.automated and not e.ok]
    assert any("FOREIGN KEY constraint failed" in (error or "") for error in errors)
    assert result["guards"]["prevented"] == ["in-use-delete"]


# -- determinism and the command line --------------------------------------------------------


@pytest.mark.parametrize("name", ["solo-complete", "no-guards", "wrong-finding"])
def test_the_same_script_gives_the_same_events_twice(name: str, tmp_path: Path) -> None:
    first, first_events = play(name, tmp_path / "one")
    second, second_events = play(name, tmp_path / "two")
    assert first["session"] != second["session"]
    assert steady(first_events) == steady(second_events)
    first.pop("session")
    second.pop("session")
    assert first == second


def test_raceday_run_json_prints_the_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(EXERCISE), "--script", str(SCRIPTS / "solo-complete.yaml"),
                 "--json", "--transcripts", str(tmp_path)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exercise"] == "lost-update-basics"
    assert (data["total"], data["max"]) == (100, 100)
    assert data["fault"]["occurred"] is True
    assert data["guards"]["prevented"] == STEPS
    assert Path(data["session"]).parent == tmp_path
