"""Every bad input file is one line (`file:line: what`), never a traceback.

The faults found by the adversarial review of 2026-11-30 (issue 11), each reproduced here:
deep nesting, NUL bytes and lone surrogates, huge values in world.sql, a world.sql that
`check` passed and `run` then refused, control characters, `/dev/zero` given as a file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from exercise_fixtures import MINIMAL, Broken

from raceday.engine.load import load_exercise
from raceday.errors import ExerciseError, InputError, ScriptError, TranscriptError
from raceday.exercise import catalog
from raceday.exercise.catalog import find_exercises
from raceday.exercise.model import Exercise

DEEP = "[" * 5000 + "]" * 5000

needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")


def one_problem(broken: Broken) -> str:
    with pytest.raises(ExerciseError) as info:
        load_exercise(broken.folder.relative_to(broken.root))
    problems = info.value.problems
    assert len(problems) == 1, problems
    assert "\n" not in problems[0]
    return problems[0]


@pytest.fixture
def minimal() -> Exercise:
    return load_exercise(MINIMAL)


def script_problems(tmp_path: Path, text: str | bytes, exercise: Exercise) -> list[str]:
    from raceday.engine.script import load_script

    path = tmp_path / "play.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with pytest.raises(ScriptError) as info:
        load_script(path, exercise)
    for problem in info.value.problems:
        assert "\n" not in problem, problem
    return info.value.problems


# -- exercise files -----------------------------------------------------------------------


def test_deeply_nested_yaml_is_one_line_with_its_line(broken: Broken) -> None:
    broken.replace("level: beginner\n", f"level: beginner\nextra: {DEEP}\n")
    problem = one_problem(broken)
    line = broken.line_of("extra:")
    assert problem.startswith(f"minimal/exercise.yaml:{line}: YAML syntax error:"), problem
    assert "nests" in problem


def test_deeply_nested_yaml_is_listed_as_broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = tmp_path / "bundled"
    shutil.copytree(MINIMAL, bundled / "minimal")
    yaml_path = bundled / "minimal" / "exercise.yaml"
    yaml_path.write_text(yaml_path.read_text(encoding="utf-8") + f"extra: {DEEP}\n", encoding="utf-8")
    monkeypatch.setattr(catalog, "BUNDLED_DIR", bundled)
    monkeypatch.chdir(tmp_path)
    (entry,) = find_exercises()
    assert not entry.ok and entry.error is not None and "nests" in entry.error


def test_a_control_character_is_reported_on_its_own_line(broken: Broken) -> None:
    broken.replace("level: beginner\n", "level: beginner\x07\n")
    problem = one_problem(broken)
    line = broken.line_of("level: beginner")
    assert problem.startswith(f"minimal/exercise.yaml:{line}: YAML syntax error:"), problem
    assert "#x0007" in problem and "position" not in problem


def test_a_nul_escape_in_exercise_sql_is_one_line(broken: Broken) -> None:
    broken.replace(
        "sql: SELECT value, version FROM config WHERE key = 'max_connections'\n",
        "sql: \"SELECT value, version FROM config WHERE key = 'max\\0connections'\"\n",
    )
    problem = one_problem(broken)
    assert "NUL" in problem and problem.startswith("minimal/exercise.yaml:")


def test_a_lone_surrogate_in_exercise_text_is_one_line(broken: Broken) -> None:
    broken.replace("title: Two writers, one row\n", 'title: "Two writers, one \\ud800 row"\n')
    problem = one_problem(broken)
    line = broken.line_of('title: "Two writers')
    assert problem.startswith(f"minimal/exercise.yaml:{line}:"), problem
    assert "surrogate" in problem


def test_a_nul_byte_in_world_sql_is_one_line_with_its_line(broken: Broken) -> None:
    broken.replace(
        "INSERT INTO automation VALUES ('writers', 1);",
        "INSERT INTO automation VALUES ('wri\x00ters', 1);",
        file="world.sql",
    )
    problem = one_problem(broken)
    line = broken.line_of("INSERT INTO automation", file="world.sql")
    assert problem.startswith(f"minimal/world.sql:{line}:"), problem
    assert "NUL" in problem


def test_a_huge_zeroblob_in_world_sql_is_refused_by_check_with_its_line(broken: Broken) -> None:
    broken.replace(
        "INSERT INTO automation VALUES ('writers', 1);",
        "INSERT INTO automation VALUES ('writers', 1);\n"
        "INSERT INTO change_log VALUES (1, 'x', zeroblob(900000000));",
        file="world.sql",
    )
    problem = one_problem(broken)
    line = broken.line_of("INSERT INTO change_log", file="world.sql")
    assert problem.startswith(f"minimal/world.sql:{line}:"), problem
    assert "too big" in problem


def test_a_world_bigger_than_the_limit_is_refused_by_check(
    broken: Broken, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raceday.store import world

    monkeypatch.setattr(world, "MAX_WORLD_BYTES", 1024 * 1024)
    broken.replace(
        "INSERT INTO automation VALUES ('writers', 1);",
        "INSERT INTO automation VALUES ('writers', 1);\n"
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 300)\n"
        "INSERT INTO change_log SELECT n, 'x', zeroblob(9000) FROM c;",
        file="world.sql",
    )
    problem = one_problem(broken)
    line = broken.line_of("WITH RECURSIVE c(n)", file="world.sql")
    assert problem.startswith(f"minimal/world.sql:{line}:"), problem
    assert "size limit" in problem


def test_writable_schema_in_world_sql_is_refused_by_check_with_its_line(broken: Broken) -> None:
    broken.replace(
        "INSERT INTO automation VALUES ('writers', 1);",
        "INSERT INTO automation VALUES ('writers', 1);\nPRAGMA writable_schema = ON;\n"
        "UPDATE sqlite_master SET sql = 'CREATE TABLE config (x)' WHERE name = 'config';",
        file="world.sql",
    )
    problem = one_problem(broken)
    line = broken.line_of("PRAGMA writable_schema", file="world.sql")
    assert problem.startswith(f"minimal/world.sql:{line}:"), problem
    assert "writable_schema" in problem


def test_the_store_refuses_writable_schema_in_world_sql_too(tmp_path: Path) -> None:
    from raceday.store.sqlite_store import WorldStore

    sql = (
        "CREATE TABLE t (x);\nPRAGMA writable_schema = ON;\n"
        "UPDATE sqlite_master SET sql = 'CREATE TABLE t (y)';"
    )
    with pytest.raises(ExerciseError) as info:
        WorldStore.create(tmp_path / "w.db", sql, ())
    (problem,) = info.value.problems
    assert "writable_schema" in problem
    assert not (tmp_path / "w.db").exists()


@needs_dev_zero
def test_dev_zero_as_an_exercise_is_one_line() -> None:
    with pytest.raises(ExerciseError) as info:
        load_exercise(Path("/dev/zero"))
    (problem,) = info.value.problems
    assert problem.startswith("/dev/zero") and "not a regular file" in problem


def test_an_exercise_file_too_big_to_be_one_is_refused(
    broken: Broken, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raceday import textfile

    monkeypatch.setattr(textfile, "MAX_TEXT_BYTES", 1000)
    problem = one_problem(broken)
    assert "larger than" in problem


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_world_sql_is_one_line_and_does_not_block(broken: Broken) -> None:
    (broken.folder / "world.sql").unlink()
    os.mkfifo(broken.folder / "world.sql")
    problem = one_problem(broken)
    line = broken.line_of("world: world.sql")
    assert problem == f'minimal/exercise.yaml:{line}: world file "world.sql" is not a regular file (a pipe)'


@needs_dev_zero
def test_dev_zero_linked_as_world_sql_is_one_line(broken: Broken) -> None:
    (broken.folder / "world.sql").unlink()
    (broken.folder / "world.sql").symlink_to("/dev/zero")
    problem = one_problem(broken)
    assert "must name a file inside the exercise folder" in problem


# -- play scripts -------------------------------------------------------------------------


def test_deeply_nested_script_is_one_line(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path, f"roles: [operator]\nsteps:\n  - as: operator\n    sql: {DEEP}\n", minimal
    )
    assert len(problems) == 1 and ":4: not valid YAML" in problems[0] and "nests" in problems[0]


def test_a_lone_surrogate_in_a_monitor_name_is_refused_at_load(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path,
        'roles: [operator]\nsteps:\n  - as: operator\n    monitor: {name: "m\\ud800", sql: "SELECT 1"}\n',
        minimal,
    )
    assert len(problems) == 1 and ":4:" in problems[0] and "surrogate" in problems[0]


def test_a_nul_in_script_sql_is_refused_at_load(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path,
        "roles: [operator]\nsteps:\n  - as: operator\n    sql: \"SELECT 1\\0; ATTACH 'x' AS y\"\n",
        minimal,
    )
    assert len(problems) == 1 and ":4:" in problems[0] and "NUL" in problems[0]


def test_monitor_and_edit_fields_must_be_text(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path,
        "roles: [operator]\nsteps:\n"
        "  - as: operator\n    monitor: {name: [1, 2], sql: {x: y}}\n"
        "  - as: operator\n    edit: {statement: writer-b-save, sql: [1]}\n",
        minimal,
    )
    assert len(problems) == 2, problems
    assert ":4:" in problems[0] and "text" in problems[0]
    assert ":6:" in problems[1] and "text" in problems[1]


def test_a_control_character_in_a_script_is_reported_on_its_line(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path, "roles: [operator]\nsteps:\n  - as: operator\n    sql: SELECT 1\x1b\n", minimal
    )
    assert len(problems) == 1 and ":4: not valid YAML" in problems[0] and "#x001b" in problems[0]


def test_a_latin1_script_is_one_line_with_its_line(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path, b"roles: [operator]\nsteps:\n  - as: operator\n    sql: SELECT 'caf\xe9'\n", minimal
    )
    assert len(problems) == 1 and ":4:" in problems[0] and "UTF-8" in problems[0]


@needs_dev_zero
def test_dev_zero_as_a_script_is_one_line(minimal: Exercise) -> None:
    from raceday.engine.script import load_script

    with pytest.raises(ScriptError) as info:
        load_script(Path("/dev/zero"), minimal)
    (problem,) = info.value.problems
    assert "not a regular file" in problem


# -- transcripts and session folders ------------------------------------------------------


@needs_dev_zero
def test_dev_zero_as_a_transcript_is_one_line() -> None:
    from raceday.transcript.log import read_events

    with pytest.raises(TranscriptError) as info:
        read_events(Path("/dev/zero"))
    (problem,) = info.value.problems
    assert "not a regular file" in problem


def test_a_transcript_folder_that_is_a_file_path_to_nowhere_is_one_line(tmp_path: Path) -> None:
    from raceday.transcript.log import read_events

    with pytest.raises(InputError):
        read_events(tmp_path / "nope")


def test_two_sessions_created_in_the_same_instant_get_two_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from raceday.transcript import log

    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    # The race: another session makes the same folder between our look and our mkdir.
    real_mkdir = Path.mkdir
    theirs: list[Path] = []

    def racing_mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.parent == tmp_path and not theirs:
            real_mkdir(self)
            theirs.append(self)
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    ours = log.session_folder(tmp_path, "x", now)
    monkeypatch.setattr(Path, "mkdir", real_mkdir)
    again = log.session_folder(tmp_path, "x", now)
    assert theirs and len({ours, again, *theirs}) == 3
    assert ours.name == "20261130T120000Z-x-2" and again.name == "20261130T120000Z-x-3"


def test_empty_monitor_names_and_sql_are_refused_at_load(tmp_path: Path, minimal: Exercise) -> None:
    problems = script_problems(
        tmp_path,
        "roles: [operator]\nsteps:\n"
        "  - as: operator\n    monitor: {name: '', sql: SELECT 1}\n"
        "  - as: operator\n    monitor: {name: x, sql: ''}\n"
        "  - as: operator\n    edit: {statement: writer-b-save, sql: ' '}\n",
        minimal,
    )
    assert [p.split(":")[-2] for p in problems] == ["4", "6", "8"], problems
    assert all("non-empty text" in p for p in problems)
