"""The minimal fixture loads into exactly the model it describes."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest
from exercise_fixtures import MINIMAL

from raceday.engine.load import load_exercise
from raceday.exercise.model import Exercise, InjectKind, Policy, Retry


@pytest.fixture(scope="module")
def exercise() -> Exercise:
    return load_exercise(MINIMAL)


def test_header(exercise: Exercise) -> None:
    assert exercise.id == "minimal"
    assert exercise.title == "Two writers, one row"
    assert exercise.length == 25
    assert exercise.level == "beginner"
    assert exercise.default_roles == ("operator",)
    assert exercise.path == (MINIMAL / "exercise.yaml").resolve()
    assert exercise.folder == MINIMAL.resolve()


def test_clock_crosses_midnight(exercise: Exercise) -> None:
    clock = exercise.clock
    assert clock.start == datetime(2025, 10, 19, 23, 30)
    assert clock.end == datetime(2025, 10, 20, 1, 30)
    assert clock.length_minutes == 120
    assert clock.zone == "PDT"
    assert clock.minutes_per_statement == 2


def test_files_are_read(exercise: Exercise) -> None:
    assert exercise.world_sql.startswith("-- The smallest world")
    assert "CREATE TABLE config" in exercise.world_sql
    assert exercise.briefing.startswith("# Two writers, one row")


def test_roles(exercise: Exercise) -> None:
    assert exercise.role_ids == ("operator", "writer-a", "writer-b")
    operator = exercise.role("operator")
    assert operator.read == ("*",)
    assert operator.write == ("config",)
    assert operator.break_glass == ("automation",)
    assert operator.schema and not operator.automated
    assert operator.example == "SELECT * FROM config"
    writer_b = exercise.role("writer-b")
    assert writer_b.read == ("config",) and writer_b.automated and not writer_b.schema
    assert exercise.role("writer-a").read == ("*",)  # the default


def test_statements(exercise: Exercise) -> None:
    assert [s.id for s in exercise.statements] == [
        "writer-a-read",
        "writer-a-save",
        "writer-b-save",
    ]
    save = exercise.statement("writer-a-save")
    assert save.role == "writer-a"
    assert save.sql.startswith("UPDATE config SET value = :value + 50")
    assert save.line == 43
    assert exercise.statement("writer-a-read").description.startswith("Writer A reads")


def test_tasks_times_and_policies(exercise: Exercise) -> None:
    tasks = {task.id: task for task in exercise.tasks}
    read = tasks["writer-a-read"]
    assert read.at == 10
    assert read.remember == ("value", "version")
    assert read.when == "SELECT 1 FROM automation WHERE enabled = 1"
    assert read.statements == ("writer-a-read",)
    assert read.on_zero_rows is Policy.IGNORE and read.on_error is Policy.IGNORE
    save = tasks["writer-a-save"]
    assert save.at == 40  # 00:10 is 40 minutes after 23:30
    assert save.on_zero_rows is Policy.RETRY
    assert save.retry == Retry(every=5, until=70, limit=3)
    assert save.points == 10
    assert tasks["writer-b-save"].on_error is Policy.STOP
    heartbeat = tasks["heartbeat"]
    assert (heartbeat.at, heartbeat.every, heartbeat.until) == (15, 90, 105)
    assert heartbeat.times() == [15, 105]
    guard = tasks["guard-version"]
    assert guard.done_when is not None and guard.done_when.startswith("SELECT 1 FROM sqlite_master")
    assert guard.context == "At {at} writer A still holds version {version}."
    assert guard.hint == "Look at the version column."
    assert guard.line == 83


def test_injects(exercise: Exercise) -> None:
    opening, pager = exercise.injects
    assert (opening.at, opening.kind, opening.to, opening.source) == (0, InjectKind.STATUS, (), "")
    assert pager.at == 42
    assert pager.kind is InjectKind.ALARM
    assert pager.to == ("operator",)
    assert pager.source == "exercise-assumption"
    assert pager.text == "The value went 100, 400, 150."
    assert (pager.on_fault, pager.after, pager.timed) == ("", 0, True)


def test_an_inject_may_follow_a_fault_instead_of_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "minimal"
    shutil.copytree(MINIMAL, folder)
    yaml_path = folder / "exercise.yaml"
    text = yaml_path.read_text(encoding="utf-8")
    yaml_path.write_text(text.replace('    at: "00:12"\n',
                                      '    on_fault: lost-update\n    after: "2m"\n'),
                         encoding="utf-8")
    pager = next(i for i in load_exercise(folder).injects if i.id == "pager")
    assert (pager.at, pager.on_fault, pager.after, pager.timed) == (None, "lost-update", 2, False)
    assert pager.within == 0  # in one spell of the fault


def test_an_inject_may_follow_a_fault_that_flaps(tmp_path: Path) -> None:
    folder = tmp_path / "minimal"
    shutil.copytree(MINIMAL, folder)
    yaml_path = folder / "exercise.yaml"
    text = yaml_path.read_text(encoding="utf-8")
    yaml_path.write_text(text.replace('    at: "00:12"\n', '    on_fault: lost-update\n'
                                      '    after: "2m"\n    within: "10m"\n'),
                         encoding="utf-8")
    pager = next(i for i in load_exercise(folder).injects if i.id == "pager")
    assert (pager.on_fault, pager.after, pager.within) == ("lost-update", 2, 10)


def test_invariants_milestones_findings_hints(exercise: Exercise) -> None:
    assert [i.id for i in exercise.invariants] == ["lost-update"]
    assert [m.id for m in exercise.milestones] == ["automation-stopped", "repaired"]
    right = exercise.finding("lost-update")
    assert right is not None and right.correct and right.explanation
    wrong = exercise.finding("disk-full")
    assert wrong is not None and not wrong.correct
    assert exercise.finding("nope") is None
    (hint,) = exercise.hints
    assert (hint.id, hint.task, hint.cost) == ("use-version", "guard-version", 2)


def test_scoring(exercise: Exercise) -> None:
    scoring = exercise.scoring
    assert scoring.tasks == 15
    detection = scoring.detection
    assert detection is not None
    assert (detection.points, detection.invariant) == (30, "lost-update")
    assert (detection.full_within, detection.zero_after) == (5, 75)
    assert (detection.match, detection.wrong_finding_cost, detection.event_minutes) == (
        "max_connections",
        5,
        50,
    )
    guards = scoring.guards
    assert guards is not None and guards.points == 40
    (step,) = guards.steps
    assert (step.id, step.task, step.points) == ("stale-write", "writer-a-save", 40)
    assert ":failed" in step.happened
    (path,) = guards.good_path
    assert (path.role, path.penalty) == ("writer-b", 20)
    assert path.sql == ("UPDATE config SET value = value + 1, version = version + 1",)
    recovery = scoring.recovery
    assert recovery is not None
    assert (recovery.points, recovery.event_minutes) == (30, 157)
    first, restored, held = recovery.items
    assert (first.milestone, first.before, first.points) == ("automation-stopped", "repaired", 10)
    assert restored.healthy_at_end and not restored.no_relapse
    assert held.no_relapse and held.milestone is None


def test_the_yaml_file_itself_can_be_given(tmp_path: Path) -> None:
    assert load_exercise(MINIMAL / "exercise.yaml").id == "minimal"


def test_without_sql_check_the_world_is_not_built(broken_world: Path) -> None:
    exercise = load_exercise(broken_world, check_sql=False)
    assert exercise.id == "minimal"


@pytest.fixture
def broken_world(tmp_path: Path) -> Path:
    folder = tmp_path / "minimal"
    shutil.copytree(MINIMAL, folder)
    (folder / "world.sql").write_text("CREATE TABLE broken(", encoding="utf-8")
    return folder


def test_optional_sections_default(tmp_path: Path) -> None:
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "world.sql").write_text("CREATE TABLE t (x);\n", encoding="utf-8")
    (folder / "briefing.md").write_text("Hi.\n", encoding="utf-8")
    (folder / "exercise.yaml").write_text(
        "id: bare\ntitle: Bare\nsummary: Nothing happens.\nlength: 10m\nlevel: advanced\n"
        'clock: {start: "09:00", end: "09:10"}\nworld: world.sql\nbriefing: briefing.md\n'
        "roles:\n  - {id: solo, name: Solo}\n",
        encoding="utf-8",
    )
    exercise = load_exercise(folder)
    assert exercise.length == 10
    assert exercise.clock.start == datetime(2000, 1, 1, 9, 0)
    assert exercise.clock.zone == ""
    assert exercise.clock.minutes_per_statement == 1
    assert exercise.tasks == () and exercise.scoring.detection is None
    assert exercise.scoring.tasks == 0


def test_repeating_without_until_runs_to_the_clock_end(tmp_path: Path) -> None:
    folder = tmp_path / "minimal"
    shutil.copytree(MINIMAL, folder)
    yaml_path = folder / "exercise.yaml"
    text = yaml_path.read_text(encoding="utf-8")
    yaml_path.write_text(text.replace('    until: "01:15"\n', ""), encoding="utf-8")
    heartbeat = next(t for t in load_exercise(folder).tasks if t.id == "heartbeat")
    assert heartbeat.until == 120
    assert heartbeat.times() == [15, 105]
