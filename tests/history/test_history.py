"""The history of sessions: indexed when a session ends, rebuilt identically from the
transcripts, and shown by `raceday history` and the launcher's best and last score."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import sqlite_utils

from raceday.cli import main
from raceday.engine.headless import open_session
from raceday.engine.load import load_named_exercise
from raceday.history.index import (
    HISTORY_FILE,
    PEOPLE_COLUMNS,
    SCORES_COLUMNS,
    SESSIONS_COLUMNS,
    dump,
    rebuild,
    record_session,
    rows_for,
    sync,
)
from raceday.history.report import best_and_last, best_and_last_of, load_attempts
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

ROOT = Path(__file__).resolve().parent.parent.parent
LOST = ROOT / "exercises" / "lost-update-basics"
EXAMPLE = ROOT / "transcripts" / "examples" / "lost-update-basics-solo-complete"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def score_of(folder: Path) -> ev.ScoreEvent:
    return next(e for e in reversed(read_events(folder).events) if isinstance(e, ev.ScoreEvent))


def play(capsys: pytest.CaptureFixture[str], root: Path, script: str) -> None:
    code, _, err = run(capsys, "run", str(LOST), "--script", str(LOST / "scripts" / script),
                       "--transcripts", str(root))
    assert code == 0, err


def test_the_committed_example_is_indexed_with_its_score_by_part(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / EXAMPLE.name)
    db, warnings = sync(tmp_path)
    assert warnings == []
    score = score_of(EXAMPLE).score
    (session,) = db["sessions"].rows
    assert (session["id"], session["exercise"]) == (EXAMPLE.name, "lost-update-basics")
    assert (session["total"], session["max"]) == (score.total, score.max)
    assert session["detect_minutes"] == (score.detection.latency_minutes
                                         if score.detection else None)
    parts = {r["part"]: (r["points"], r["max"]) for r in db["scores"].rows}
    assert parts == {name: (part.points, part.max) for name, part in score.parts}
    roles = {r["role"]: bool(r["automated"]) for r in db["people"].rows}
    start = read_events(EXAMPLE).start
    assert start is not None
    assert roles == {**{r: False for r in start.players}, **{r: True for r in start.automated}}


def test_a_session_is_indexed_when_it_ends_and_a_deleted_history_comes_back_the_same(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "t"
    for script in ("solo-complete.yaml", "no-guards.yaml", "wrong-finding.yaml"):
        play(capsys, root, script)
    assert (root / HISTORY_FILE).exists()
    db = sqlite_utils.Database(root / HISTORY_FILE)
    before = dump(db)
    db.close()
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert [row[0] for row in before["sessions"]] == folders  # every run, before any rebuild
    assert rebuild(root) == []
    assert not (root / HISTORY_FILE).with_suffix(".db-journal").exists()
    db = sqlite_utils.Database(root / HISTORY_FILE)
    assert dump(db) == before
    db.close()


def test_a_session_end_writes_the_history_sqlite_utils_would_have_written(
        tmp_path: Path) -> None:
    """A session's end indexes through plain sqlite3 (no sqlite-utils to import): the file's
    schema and rows are those sqlite-utils' create, upsert and insert_all gave, and indexing
    the same session twice changes nothing."""
    events = read_events(EXAMPLE).events
    ours = tmp_path / "ours" / EXAMPLE.name
    ours.mkdir(parents=True)
    assert record_session(ours, events) and record_session(ours, events)
    theirs = sqlite_utils.Database(tmp_path / HISTORY_FILE)
    theirs.table("sessions").create(SESSIONS_COLUMNS, pk="id")
    theirs.table("scores").create(SCORES_COLUMNS, pk=("session_id", "part"),
                                  foreign_keys=[("session_id", "sessions", "id")])
    theirs.table("people").create(PEOPLE_COLUMNS, pk=("session_id", "role"),
                                  foreign_keys=[("session_id", "sessions", "id")])
    rows = rows_for(EXAMPLE.name, events)
    assert rows is not None
    theirs.table("sessions").upsert(rows.session, pk="id")
    theirs.table("scores").insert_all(rows.scores, pk=("session_id", "part"))
    theirs.table("people").insert_all(rows.people, pk=("session_id", "role"))
    mine = sqlite_utils.Database(ours.parent / HISTORY_FILE)
    schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    assert list(mine.query(schema)) == list(theirs.query(schema))
    assert dump(mine) == dump(theirs)
    assert len(dump(mine)["scores"]) == len(rows.scores) > 0
    mine.close()
    theirs.close()


def test_history_with_no_sessions_says_so_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "history", "--transcripts", str(tmp_path / "none"))
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1
    assert "No finished sessions" in out
    assert not (tmp_path / "none").exists()  # looking creates nothing


def test_history_shows_each_attempt_and_the_launcher_the_best_and_last(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "t"
    for script in ("no-guards.yaml", "solo-complete.yaml", "wrong-finding.yaml"):
        play(capsys, root, script)
    totals = [score_of(p).score for p in sorted(p for p in root.iterdir() if p.is_dir())]
    code, out, err = run(capsys, "history", "--transcripts", str(root), "--all")
    assert code == 0, err
    assert "3 attempts" in out
    lines = [line for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert all(f"{s.total}/{s.max}" in line for s, line in zip(totals, lines, strict=True))
    best = max(s.total for s in totals)
    (summary,) = best_and_last_of(load_attempts(root, scripts=True)[0]).values()
    assert (summary.best, summary.last, summary.attempts) == (best, totals[-1].total, 3)


def test_sessions_of_a_named_player_are_shown_by_player(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = open_session(load_named_exercise("lost-update-basics"), ("operator",), tmp_path)
    session.record(ev.Cast(names={"operator": "Ana"}))
    session.end()
    code, out, _ = run(capsys, "history", "--transcripts", str(tmp_path), "--player", "Ana")
    assert code == 0 and "Ana" in out and "1 attempt" in out
    code, out, _ = run(capsys, "history", "--transcripts", str(tmp_path), "--player", "Bo")
    assert code == 0 and out.startswith("No finished sessions by Bo")


def test_by_player_a_team_session_counts_for_each_of_its_players(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = open_session(load_named_exercise("lost-update-basics"), ("operator", "writer-a"),
                           tmp_path)
    session.record(ev.Cast(names={"operator": "Ana", "writer-a": "Bo"}))
    session.end()
    code, out, _ = run(capsys, "history", "--transcripts", str(tmp_path), "--by", "player")
    assert code == 0 and "player: Ana" in out and "player: Bo" in out
    code, out, _ = run(capsys, "history", "--transcripts", str(tmp_path))
    assert "team: Ana, Bo" in out
    code, out, _ = run(capsys, "history", "--transcripts", str(tmp_path), "--by", "player",
                       "--player", "Bo")
    assert "player: Bo" in out and "player: Ana" not in out


def test_an_unreadable_transcript_is_skipped_with_a_warning_and_the_rest_indexed(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / EXAMPLE.name)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "events.jsonl").write_text('{"seq": 1, "kind": "nope"}\n{}\n')
    code, out, err = run(capsys, "history", "--transcripts", str(tmp_path))
    assert code == 0, err
    assert "warning: skipped:" in err and "broken" in err
    assert "1 attempt" in out


def test_a_damaged_history_is_rebuilt_from_the_transcripts(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / EXAMPLE.name)
    (tmp_path / HISTORY_FILE).write_bytes(b"not a database at all" * 100)
    code, out, err = run(capsys, "history", "--transcripts", str(tmp_path))
    assert code == 0, err
    assert "damaged" in err and "rebuilt" in err
    assert "1 attempt" in out


def test_headless_runs_of_scripts_are_kept_apart_from_plays_unless_all(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "t"
    play(capsys, root, "no-guards.yaml")  # an author's headless run
    session = open_session(load_named_exercise("lost-update-basics"), ("operator",), root)
    session.end()  # a session played (the TUI opens sessions this way)
    code, out, err = run(capsys, "history", "--transcripts", str(root))
    assert code == 0, err
    assert "1 attempt" in out and "1 headless run of play scripts left out: --all shows it" in out
    code, out, err = run(capsys, "history", "--transcripts", str(root), "--all")
    assert "2 attempts" in out and "left out" not in out
    assert best_and_last(root)["lost-update-basics"].attempts == 1  # the launcher: plays only


def test_a_history_from_before_origins_is_rebuilt_with_them(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "t"
    play(capsys, root, "no-guards.yaml")
    db = sqlite_utils.Database(root / HISTORY_FILE)
    db.table("sessions").transform(drop={"origin"})
    db.close()
    attempts, _ = load_attempts(root, scripts=True)
    assert [a.scripted for a in attempts] == [True]


def test_team_sessions_hosted_together_are_in_the_history_by_team(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`raceday host --teams red,blue`: each team's session sits two folders down; both are
    indexed where the transcripts are, and the history files them under the team's name."""
    from raceday.engine.clock import Pace
    from raceday.team.group import Teams, TeamSpec
    from raceday.team.seats import SeatSpec

    exercise = load_named_exercise(str(LOST))
    seats = (SeatSpec(exercise.default_roles[0], exercise.default_roles[0]),)
    for _ in range(2):  # two game days
        group = Teams(exercise, [TeamSpec("red", seats), TeamSpec("blue", seats)],
                      transcripts=tmp_path, pace=Pace.TURNS)
        group.start()
        group.end()
        group.close()
    assert not list(tmp_path.glob("*/*/history.db"))  # not beside the team's folder
    attempts, _ = load_attempts(tmp_path)
    assert sorted(a.team_name for a in attempts) == ["blue", "blue", "red", "red"]
    assert len({a.session for a in attempts}) == 4  # same folder names, keys apart
    code, out, _ = run(capsys, "history", "--transcripts", str(tmp_path))
    assert code == 0 and "team: red" in out and "team: blue" in out
    assert "4 attempts" in out
    before = dump(sqlite_utils.Database(tmp_path / HISTORY_FILE))
    rebuild(tmp_path)  # the same rows from the transcripts alone
    assert dump(sqlite_utils.Database(tmp_path / HISTORY_FILE)) == before
