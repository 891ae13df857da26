"""Hostile and broken input (sql-safety.md §7): each gets one clear line and changes nothing.

Every case checks that (1) the result is an error of the expected kind with a one-line
message, (2) the store stays usable (a following SELECT works) and the world is unchanged,
and (3) no file appears outside tmp_path: not at the paths the SQL names (in /tmp and in a
directory used as the current directory), and nothing new next to world.db.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from store_fixtures import one, snapshot

from raceday.store.results import StatementResult
from raceday.store.sqlite_store import WorldStore

RUNAWAY_COUNT = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
RUNAWAY_ROWS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"


@dataclass
class Sandbox:
    """Where a hostile statement might try to write, outside the world's folder."""

    store: WorldStore
    world_dir: Path
    outside: Path  # also the current directory, so relative paths land here
    tmp_name: Path  # a fresh, unique path directly in /tmp

    def sql(self, text: str) -> str:
        return text.format(outside=self.outside, tmp=self.tmp_name)


@pytest.fixture
def sandbox(
    store: WorldStore, world_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Sandbox]:
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    tmp_name = Path("/tmp") / f"raceday-hostile-{uuid.uuid4().hex}.db"
    box = Sandbox(store, world_path.parent, outside, tmp_name)
    world_files = sorted(p.name for p in box.world_dir.iterdir())
    yield box
    assert list(outside.iterdir()) == [], "a file was created outside the world"
    assert not tmp_name.exists(), f"{tmp_name} was created"
    assert sorted(p.name for p in box.world_dir.iterdir()) == world_files


def assert_clear_error(result: StatementResult, kind: str, *needles: str) -> None:
    assert result.error is not None, result
    assert result.error_kind in kind.split("|"), (result.error_kind, result.error)
    assert "\n" not in result.error and 0 < len(result.error) <= 300
    for needle in needles:
        assert needle in result.error, (needle, result.error)


def assert_still_usable(store: WorldStore) -> None:
    follow = one(store, "planner", "SELECT count(*) FROM plan")
    assert follow.ok and follow.rows == ((3,),)
    assert store.app_query("PRAGMA integrity_check")[1] == [("ok",)]
    assert store.app_query("PRAGMA foreign_keys")[1] == [(1,)]


# role, SQL (with {outside} and {tmp} placeholders), error kind, words the error must contain
CASES: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("planner", "ATTACH '/etc/passwd' AS p", "refused", ("ATTACH is not allowed",)),
    ("responder", "ATTACH '{outside}/new.db' AS e", "refused", ("ATTACH",)),
    ("responder", "ATTACH 'relative.db' AS e", "refused", ("ATTACH",)),
    ("responder", "ATTACH '{tmp}' AS e", "refused", ("ATTACH",)),
    ("responder", "ATTACH 'file:{outside}/uri.db?mode=rwc' AS e", "refused", ("ATTACH",)),
    ("planner", "DETACH main", "refused", ("DETACH",)),
    ("planner", "SELECT load_extension('libm.so.6')", "refused", ("load_extension",)),
    ("planner", "SELECT hex(fts3_tokenizer('simple'))", "refused", ("fts3_tokenizer",)),
    ("planner", "PRAGMA foreign_keys=OFF", "refused", ("PRAGMA foreign_keys",)),
    ("planner", "PRAGMA writable_schema=ON", "refused", ("PRAGMA writable_schema",)),
    ("planner", "PRAGMA ignore_check_constraints=ON", "refused", ("ignore_check_constraints",)),
    ("responder", "PRAGMA trusted_schema=ON", "refused", ("trusted_schema",)),
    ("responder", "PRAGMA query_only=ON", "refused", ("query_only",)),
    ("responder", "PRAGMA journal_mode=OFF", "refused", ("journal_mode",)),
    ("responder", "PRAGMA synchronous=OFF", "refused", ("synchronous",)),
    ("responder", "PRAGMA recursive_triggers=OFF", "refused", ("recursive_triggers",)),
    ("responder", "PRAGMA cache_size=-100000000", "refused", ("cache_size",)),
    ("responder", "SELECT * FROM pragma_foreign_keys", "refused", ("foreign_keys",)),
    ("responder", "VACUUM", "refused", ("VACUUM is not allowed",)),
    ("responder", "VACUUM INTO '{tmp}'", "refused", ("VACUUM",)),
    ("responder", "VACUUM INTO '{outside}/copy.db'", "refused", ("VACUUM",)),
    ("planner", RUNAWAY_COUNT, "timeout", ("0.5 s (time limit)",)),
    ("planner", "SELECT zeroblob(1000000000)", "error", ("too big",)),
    ("planner", "SELECT length(randomblob(900000000))", "error", ("too big",)),
    ("planner", "SELECT length(printf('%.*c', 900000000, 'x'))", "refused", ("printf",)),
    ("planner", "SELECT printf('%900000000d', 1)", "refused", ("printf",)),
    ("planner", "SELECT format('%.*c', 900000000, 'x')", "refused", ("format",)),
    ("planner", "SELECT " + "(" * 10_000 + "1" + ")" * 10_000, "syntax", ("parser stack",)),
    ("planner", "SELECT " + "1+" * 5000 + "1", "error", ("too large",)),
    ("planner", "SELECT '" + "x" * 2_000_000 + "'", "error", ("too long",)),
    ("planner", "SELECT 'a\x00b'", "syntax", ("NUL",)),
    ("planner", "SELECT 'caf\udce9'", "syntax", ("UTF-8", "\\udce9")),
    ("planner", "BEGIN IMMEDIATE", "refused", ("BEGIN is not allowed",)),
    ("planner", "BEGIN", "refused", ("BEGIN",)),
    ("planner", "COMMIT", "refused", ("COMMIT",)),
    ("planner", "SAVEPOINT a", "refused", ("SAVEPOINT",)),
    (
        "responder",
        "CREATE TEMP TRIGGER evil AFTER INSERT ON main.plan BEGIN DELETE FROM audit; END",
        "refused",
        ("TEMP",),
    ),
    ("responder", "CREATE TEMP TABLE t (x)", "refused", ("temp",)),
    ("responder", "CREATE TEMP VIEW v AS SELECT 1", "refused", ("temp",)),
    ("responder", "CREATE VIRTUAL TABLE f USING fts5(x)", "refused", ("virtual tables",)),
    (
        "enactor-a",
        "WITH trg_audit AS (SELECT * FROM audit) SELECT * FROM trg_audit",
        "refused",
        ("role enactor-a may not read table audit",),
    ),
    (
        "enactor-a",
        "WITH dns_answer AS (SELECT * FROM audit) SELECT * FROM dns_answer",
        "refused",
        ("role enactor-a may not read table audit",),
    ),
    ("enactor-a", "SELECT * FROM audit", "refused", ("role enactor-a may not read table audit",)),
    (
        "enactor-a",
        "UPDATE plan SET created_at = 'x'",
        "refused",
        ("role enactor-a may not write table plan",),
    ),
    (
        "planner",
        "INSERT OR REPLACE INTO endpoint (name) VALUES ('ddb')",
        "refused",
        ("role planner may not write table endpoint",),
    ),
    (
        "enactor-a",
        "INSERT INTO plan VALUES (9, 'x') ON CONFLICT (id) DO UPDATE SET created_at = 'y'",
        "refused",
        ("role enactor-a may not write table plan",),
    ),
    ("planner", "DROP TABLE endpoint", "refused", ("role planner may not change the schema",)),
    ("planner", "ALTER TABLE plan RENAME TO p2", "refused", ("may not change the schema",)),
    ("planner", "UPDATE sqlite_master SET sql = 'x'", "refused", ("sqlite_master",)),
    ("responder", "UPDATE sqlite_master SET sql = 'x'", "refused", ("sqlite_master",)),
    ("responder", "DELETE FROM sqlite_sequence", "refused", ("sqlite_sequence",)),
    ("planner", "SELECT * FROM sqlite_temp_master", "refused", ("temp",)),
    ("planner", "SELECT count(*) FROM dbstat", "refused", ("dbstat",)),
    # Not compiled into every SQLite: either refused or absent.
    ("planner", "SELECT * FROM sqlite_dbpage", "refused|error", ("sqlite_dbpage",)),
    ("planner", "SELECT * FROM sqlite_stmt", "refused", ("sqlite_stmt",)),
    ("responder", "SELECT * FROM _raceday_world", "refused", ("internal to raceday",)),
    ("responder", "DROP TABLE _raceday_world", "refused", ("internal to raceday",)),
    ("planner", "ANALYZE", "refused", ()),
    ("planner", "REINDEX", "refused", ()),
]


@pytest.mark.parametrize(("role", "sql", "kind", "needles"), CASES, ids=lambda v: repr(v)[:60])
def test_hostile_input(sandbox: Sandbox, role: str, sql: str, kind: str, needles: tuple[str, ...]) -> None:
    store = sandbox.store
    before = snapshot(store)
    started = time.perf_counter()
    results = store.execute(role, sandbox.sql(sql) if "{" in sql else sql)
    elapsed = time.perf_counter() - started
    assert len(results) == 1
    assert_clear_error(results[0], kind, *needles)
    assert elapsed < 0.5 + 0.4, f"took {elapsed:.2f} s"
    assert snapshot(store) == before
    assert_still_usable(store)


def test_foreign_keys_off_is_refused_and_they_stay_on(sandbox: Sandbox) -> None:
    store = sandbox.store
    results = store.execute("planner", "PRAGMA foreign_keys=OFF; DELETE FROM plan WHERE id = 1")
    assert len(results) == 1 and results[0].error_kind == "refused"
    # Plan 1 is every endpoint's rollback: deleting it must still fail.
    delete = one(store, "planner", "DELETE FROM plan WHERE id = 1")
    assert_clear_error(delete, "constraint", "FOREIGN KEY constraint failed")
    assert_still_usable(store)


def test_writable_schema_then_schema_edit_is_refused(sandbox: Sandbox) -> None:
    store = sandbox.store
    before = snapshot(store)
    for role in ("planner", "responder"):
        assert one(store, role, "PRAGMA writable_schema=ON").error_kind == "refused"
        edit = one(store, role, "UPDATE sqlite_master SET sql = 'CREATE TABLE plan(x)'")
        assert_clear_error(edit, "refused", "sqlite_master")
    assert snapshot(store) == before


def test_ignore_check_constraints_is_refused_and_checks_still_fire(sandbox: Sandbox) -> None:
    store = sandbox.store
    assert one(store, "responder", "PRAGMA ignore_check_constraints=ON").error_kind == "refused"
    bad = one(store, "responder", "UPDATE automation SET enabled = 5")
    assert_clear_error(bad, "constraint", "CHECK constraint failed")
    assert_still_usable(store)


def test_infinite_rows_are_capped_and_truncated_fast(sandbox: Sandbox) -> None:
    store = sandbox.store
    started = time.perf_counter()
    result = one(store, "planner", RUNAWAY_ROWS)
    assert result.ok and result.truncated
    assert len(result.rows) == store.row_cap and result.rows[-1] == (store.row_cap,)
    assert time.perf_counter() - started < 0.3
    assert_still_usable(store)


def test_invalid_utf8_stored_then_read_by_another_role(sandbox: Sandbox) -> None:
    store = sandbox.store
    write = one(store, "responder", "UPDATE endpoint SET updated_by = CAST(X'C3FF41' AS TEXT)")
    assert write.ok and write.rowcount == 2
    for role in ("enactor-a", "planner"):
        read = one(store, role, "SELECT updated_by FROM endpoint")
        assert read.ok
        assert all("\ufffd" in row[0] and row[0].endswith("A") for row in read.rows)
    # Trusted reads decode it the same way instead of failing.
    assert "\ufffd" in store.app_query("SELECT updated_by FROM endpoint")[1][0][0]


def test_select_then_drop_runs_the_select_and_refuses_the_drop(sandbox: Sandbox) -> None:
    store = sandbox.store
    results = store.execute("planner", "SELECT 1; DROP TABLE endpoint")
    assert results[0].ok and results[0].rows == ((1,),)
    assert_clear_error(results[1], "refused", "may not change the schema")
    assert "endpoint" in {t.name for t in store.tables()}


def test_begin_left_open_blocks_no_one(sandbox: Sandbox) -> None:
    store = sandbox.store
    assert one(store, "planner", "BEGIN IMMEDIATE").error_kind == "refused"
    assert one(store, "enactor-b", "UPDATE endpoint SET updated_at = '23:00'").rowcount == 2
    assert one(store, "planner", "INSERT INTO plan VALUES (4, '23:01')").rowcount == 1


def test_hostile_text_in_a_longer_submission_stops_it_cleanly(sandbox: Sandbox) -> None:
    store = sandbox.store
    results = store.execute("planner", "SELECT 1; SELECT 'a\x00b'; SELECT 2")
    assert len(results) == 1  # the whole submission is refused before anything runs
    assert_clear_error(results[0], "syntax", "NUL")
    assert "\x00" not in results[0].sql  # safe to show and to log


def test_huge_submission_is_refused_before_splitting(sandbox: Sandbox) -> None:
    store = sandbox.store
    started = time.perf_counter()
    results = store.execute("planner", "SELECT 1;" * 200_000)
    assert time.perf_counter() - started < 1
    assert len(results) == 1
    assert_clear_error(results[0], "error", "too long")
    assert len(results[0].sql) < 300


def test_many_hostile_inputs_in_a_row_never_raise(sandbox: Sandbox) -> None:
    store = sandbox.store
    weird = [
        "\udcff",
        "'",
        '"',
        "/*",
        "--",
        ")",
        "END;",
        "CREATE TRIGGER",
        "SELECT :",
        "SELECT ?999999",
        "SELECT $x",
        "SELECT @x",
        "SELECT char(" + ",".join(["65"] * 40) + ")",
        "EXPLAIN DELETE FROM plan",
        "EXPLAIN QUERY PLAN SELECT * FROM audit",
        "SELECT * FROM pragma_table_info('audit')",
        "PRAGMA table_info(audit)",
        "PRAGMA foreign_key_check",
        "SELECT value FROM json_each('[1,2,3]')",
        "SELECT replace(hex(zeroblob(400000)), '0', '00000')",
        "SELECT group_concat(x) FROM (" + RUNAWAY_ROWS + ")",
    ]
    for sql in weird:
        for role in ("planner", "enactor-a", "responder"):
            results = store.execute(role, sql)
            for result in results:
                assert result.error is None or "\n" not in result.error
    assert_still_usable(store)


def test_explain_does_not_change_anything(sandbox: Sandbox) -> None:
    store = sandbox.store
    before = snapshot(store)
    result = one(store, "planner", "EXPLAIN DELETE FROM plan_record")
    assert result.ok and result.rowcount is None and result.writes == ()
    assert snapshot(store) == before


def test_fat_rows_are_capped_by_size_not_only_by_count(sandbox: Sandbox) -> None:
    store = sandbox.store
    started = time.perf_counter()
    result = one(store, "planner", "SELECT zeroblob(999999), zeroblob(999999) FROM numbers")
    assert result.ok and result.truncated
    assert 8 <= len(result.rows) < store.row_cap  # about 16 MB, then cut
    assert time.perf_counter() - started < 0.5 + 0.4
    assert_still_usable(store)
