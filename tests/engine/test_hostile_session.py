"""Hostile SQL through a whole session: a clear refusal, in the transcript, and play goes on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from raceday.engine.headless import open_session
from raceday.engine.load import load_named_exercise
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

CASES = [
    ("ATTACH '/etc/passwd' AS p", "ATTACH"),
    ("ATTACH '{outside}/new.db' AS e", "ATTACH"),
    ("SELECT load_extension('libm.so.6')", "load_extension"),
    ("SELECT hex(fts3_tokenizer('simple'))", "fts3_tokenizer"),
    ("PRAGMA foreign_keys=OFF", "foreign_keys"),
    ("PRAGMA writable_schema=ON", "writable_schema"),
    ("VACUUM INTO '{outside}/copy.db'", "VACUUM"),
    (RUNAWAY, "time limit"),
    ("SELECT zeroblob(1000000000)", "too big"),
    ("SELECT length(randomblob(900000000))", "too big"),
    ("SELECT " + "(" * 10_000 + "1" + ")" * 10_000, "parser stack"),
    ("SELECT 'caf\udce9'", "UTF-8"),
    ("DELETE FROM automation", "may not write table automation"),
    ("SELECT * FROM _raceday_world", "internal to raceday"),
]


def _files(root: Path) -> set[Path]:
    return {Path(d) / f for d, _, files in os.walk(root) for f in files}


@pytest.mark.parametrize(("sql", "needle"), CASES)
def test_hostile_sql_is_refused_recorded_and_play_goes_on(
        tmp_path: Path, sql: str, needle: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    exercise = load_named_exercise("dynamodb-dns-race")
    session = open_session(exercise, ("responder", "planner"), tmp_path / "t", time_limit_s=0.5)
    before = _files(tmp_path)
    role = "planner" if "automation" in sql else "responder"
    results = session.execute(role, sql.format(outside=outside))
    assert not results[0].ok
    assert needle in (results[0].error or ""), results[0].error
    assert "\n" not in (results[0].error or "")
    after = session.execute("responder", "SELECT count(*) FROM endpoint")
    assert after[0].ok and after[0].rows[0][0] >= 4
    session.end()
    created = _files(tmp_path) - before - {tmp_path / "t" / "history.db"}  # the index of sessions
    assert all(session.folder in p.parents for p in created), created
    assert not any(outside.iterdir())
    events = read_events(session.folder).events
    refused = [e for e in of_kind(events, ev.Statement) if not e.ok and not e.automated]
    assert refused and needle in (refused[0].error or "")


def test_a_read_of_ravedays_own_state_finds_nothing_to_read(tmp_path: Path) -> None:
    """The score, the findings and the transcript live outside world.db."""
    session = open_session(load_named_exercise("dynamodb-dns-race"), ("responder",), tmp_path)
    results = session.execute("responder", "SELECT name FROM sqlite_master")
    names = {row[0] for row in results[0].rows}
    assert not any("finding" in n or "score" in n or "session" in n for n in names)
    session.end()
