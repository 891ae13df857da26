"""Resources are bounded and honest: the world's size and the statements per submission.

Each refusal is one line, the world is unchanged, and the next statement works.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixtures import ROLES, WORLD_SQL, one, snapshot

from raceday.errors import ExerciseError
from raceday.store.base import MAX_STATEMENTS
from raceday.store.sqlite_store import WorldStore

SMALL = 2 * 1024 * 1024


@pytest.fixture
def small(tmp_path: Path) -> Iterator[WorldStore]:
    path = tmp_path / "world" / "world.db"
    path.parent.mkdir()
    with WorldStore.create(
        path, WORLD_SQL, ROLES, row_cap=20, time_limit_s=2.0, max_world_bytes=SMALL
    ) as built:
        yield built


def test_a_statement_that_would_pass_the_world_size_limit_is_refused_in_one_line(small: WorldStore) -> None:
    before = snapshot(small)
    # 500 rows of 9 kB: more than the 2 MB the world may hold.
    result = one(
        small,
        "planner",
        "WITH RECURSIVE c(n) AS (SELECT 100 UNION ALL SELECT n + 1 FROM c WHERE n < 600) "
        "INSERT INTO plan (id, created_at) SELECT n, hex(zeroblob(4500)) FROM c",
    )
    assert result.error is not None and "\n" not in result.error
    assert result.error.startswith("the world is full"), result.error
    assert "2 MB" in result.error and "nothing was changed" in result.error
    assert snapshot(small) == before
    assert one(small, "planner", "SELECT count(*) FROM plan").rows == ((3,),)
    assert one(small, "planner", "INSERT INTO plan VALUES (50, 'x')").ok


def test_a_table_made_during_play_cannot_pass_the_limit_either(small: WorldStore) -> None:
    one(small, "responder", "CREATE TABLE junk (b BLOB)")
    errors = [one(small, "responder", "INSERT INTO junk VALUES (zeroblob(900000))").error for _ in range(4)]
    assert errors[0] is None
    assert any(e is not None and e.startswith("the world is full") for e in errors), errors
    assert small.app_query("PRAGMA integrity_check")[1] == [("ok",)]


def test_the_world_sql_itself_cannot_pass_the_limit(tmp_path: Path) -> None:
    huge = "CREATE TABLE t (b BLOB);\n" + "INSERT INTO t VALUES (zeroblob(900000));\n" * 4
    with pytest.raises(ExerciseError) as info:
        WorldStore.create(tmp_path / "w.db", huge, ROLES, max_world_bytes=SMALL)
    assert info.value.problems == [
        "world SQL failed: line 4: the world would grow past its size limit (2 MB)"]
    assert not (tmp_path / "w.db").exists()


def test_too_many_statements_in_one_submission_are_refused_whole(small: WorldStore) -> None:
    before = snapshot(small)
    flood = "INSERT INTO plan VALUES (NULL, 'x');" * (MAX_STATEMENTS + 1)
    results = small.execute("planner", flood)
    assert len(results) == 1
    error = results[0].error
    assert error is not None and "\n" not in error
    assert f"{MAX_STATEMENTS + 1:,} statements" in error and "nothing was run" in error
    assert snapshot(small) == before
    assert len(small.execute("planner", "SELECT 1;" * MAX_STATEMENTS)) == MAX_STATEMENTS


def test_too_many_statements_in_a_probe_are_refused_too(small: WorldStore) -> None:
    results = small.probe("planner", ["SELECT 1;" * (MAX_STATEMENTS + 5)])
    assert len(results) == 1 and results[0].error is not None
    assert "the limit is" in results[0].error
