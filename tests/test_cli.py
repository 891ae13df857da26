"""The command line: exit codes, data on stdout, one-line errors on stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from raceday.cli import main
from raceday.transcript.events import Statement
from raceday.transcript.log import of_kind, read_events

ROOT = Path(__file__).resolve().parent.parent
LOST = ROOT / "exercises" / "lost-update-basics"
REQUIRED = {"exercise", "session", "total", "max", "fault", "detection", "guards", "recovery",
            "reasons"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write_script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "play.yaml"
    path.write_text(text)
    return path


def test_version_is_printed() -> None:
    out = subprocess.run([sys.executable, "-m", "raceday", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip().startswith("raceday ")


def test_list_shows_every_bundled_exercise(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "dynamodb-dns-race" in out and "lost-update-basics" in out


def test_check_accepts_the_bundled_exercises(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(LOST), str(ROOT / "exercises" / "dynamodb-dns-race"))
    assert code == 0, err
    assert out.count(": ok") == 2


def test_check_reports_a_broken_exercise_as_file_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "lost-update-basics"
    broken.mkdir()
    for name in ("world.sql", "briefing.md"):
        (broken / name).write_text((LOST / name).read_text())
    text = (LOST / "exercise.yaml").read_text().replace("level: beginner", "level: expert", 1)
    (broken / "exercise.yaml").write_text(text)
    code, _, err = run(capsys, "check", str(broken))
    assert code == 2
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith("level:"))
    assert f"exercise.yaml:{line}:" in err and "expert" in err
    assert "Traceback" not in err


def test_run_prints_one_json_object_with_the_contract_keys(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, "roles: [operator]\nsteps:\n  - as: operator\n"
                                    "    sql: SELECT * FROM config\n")
    code, out, err = run(capsys, "run", "lost-update-basics", "--script", str(script), "--json",
                         "--transcripts", str(tmp_path / "t"))
    assert code == 0, err
    result = json.loads(out)
    assert REQUIRED <= set(result)
    for section in ("detection", "guards", "recovery"):
        assert {"points", "max"} <= set(result[section])
    assert "latency_minutes" in result["detection"]
    assert "prevented" in result["guards"] and "restored" in result["recovery"]
    assert Path(result["session"]).parent == tmp_path / "t"
    assert (Path(result["session"]) / "events.jsonl").exists()


def test_a_players_sql_error_is_play_and_exits_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, "steps:\n  - as: operator\n    sql: SELEC broken\n  - end: true\n")
    code, out, _ = run(capsys, "run", str(LOST), "--script", str(script), "--json",
                       "--transcripts", str(tmp_path / "t"))
    assert code == 0
    events = read_events(Path(json.loads(out)["session"])).events
    statement = next(e for e in of_kind(events, Statement) if "SELEC" in e.sql)
    assert statement.ok is False


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("steps:\n  - as: operator\n    sqll: SELECT 1\n", 3, "unknown step key 'sqll'"),
        ("steps:\n  - as: chef\n    sql: SELECT 1\n", 2, "unknown role 'chef'"),
        ("steps:\n  - as: writer-a\n    sql: SELECT 1\n", 2, "not held by the players"),
        ("steps:\n  - as: operator\n    declare: aliens\n", 3, "unknown finding 'aliens'"),
        ("steps:\n  - wait: soon\n", 2, "wait must be a clock time"),
        ("exercise: other\nsteps: []\n", 1, "this script is for exercise 'other'"),
        ("steps:\n  - as: operator\n   sql: [unbalanced\n", 3, "not valid YAML"),
        ("steps:\n  - wait: \"09:10\"\n  - at: \"09:05\"\n    as: operator\n    sql: SELECT 1\n",
         3, "has already passed"),
    ],
)
def test_a_bad_script_exits_two_with_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, message: str,
) -> None:
    script = write_script(tmp_path, text)
    code, out, err = run(capsys, "run", "lost-update-basics", "--script", str(script),
                         "--transcripts", str(tmp_path / "t"))
    assert code == 2
    assert f"{script}:{line}:" in err and message in err, err
    assert "Traceback" not in err and out == ""


def test_an_unknown_exercise_lists_the_known_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, "steps: []\n")
    code, _, err = run(capsys, "run", "no-such-exercise", "--script", str(script))
    assert code == 2
    assert "no-such-exercise" in err and "dynamodb-dns-race" in err


def test_transcript_prints_a_session_and_its_score(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, "steps:\n  - as: operator\n    sql: SELECT * FROM config\n")
    _, out, _ = run(capsys, "run", "lost-update-basics", "--script", str(script), "--json",
                    "--transcripts", str(tmp_path / "t"))
    session = json.loads(out)["session"]
    code, out, _ = run(capsys, "transcript", session)
    assert code == 0
    assert "SELECT * FROM config" in out and "Score" in out


def test_transcript_of_a_missing_folder_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "transcript", str(tmp_path / "nothing"))
    assert code == 2 and "no such transcript" in err


def test_brief_prints_the_roles_and_the_scoring(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "brief", "dynamodb-dns-race")
    assert code == 0
    assert "responder" in out and "Detection" in out and "dns_answer" in out


EXAMPLE = ROOT / "transcripts" / "examples" / "lost-update-basics-solo-complete"


def test_the_committed_example_transcript_still_reads(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "transcript", str(EXAMPLE))
    assert code == 0, err
    assert "Score 100/100" in out
    assert "FAULT: primary_db" in out and "RESTORED" in out and "applied (1 row)" in out


def test_the_committed_example_transcript_still_has_a_debrief(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "debrief", str(EXAMPLE), "--format", "md")
    assert code == 0, err
    assert out.startswith("# Debrief: The lost update")


def test_run_prints_the_score_and_where_the_session_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, "steps:\n  - as: operator\n    sql: SELECT * FROM config\n"
                                    "  - end: true\n")
    code, out, err = run(capsys, "run", "lost-update-basics", "--script", str(script),
                         "--transcripts", str(tmp_path / "t"))
    assert code == 0, err
    assert "Score " in out and "Fault began at 09:03." in out  # the night played itself out
    assert f"Transcript: {tmp_path / 't'}" in out.replace("\n", "")


def test_check_plays_the_reference_scripts_far_enough_to_find_a_missing_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(ROOT / "exercises" / "shared", tmp_path / "shared")
    copy = tmp_path / "lost-update-basics"
    shutil.copytree(LOST, copy)
    script = copy / "scripts" / "solo-complete.yaml"
    text = script.read_text()
    text = text.replace("SELECT name, status FROM host;", "SELECT name, status FROM hosts;", 1)
    script.write_text(text)
    code, _, err = run(capsys, "check", str(copy))
    assert code == 2
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "FROM hosts" in t)
    step = max(n for n, t in enumerate(text.splitlines()[:line], 1) if t.startswith("  - "))
    assert f"solo-complete.yaml:{step}: sql as operator: no such table: hosts" in err, err
    assert err.count("\n") == 1  # one problem, one line
    again = run(capsys, "check", str(copy))  # the answer kept: the same, read back
    assert again == (code, _, err)
    script.write_text(text.replace("FROM hosts;", "FROM host;", 1))  # fixed: checked again
    code, out, err = run(capsys, "check", str(copy))
    assert code == 0 and "ok" in out and err == "", err


def _flagship_copy(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(ROOT / "exercises" / "shared", tmp_path / "shared")
    copy = tmp_path / "dynamodb-dns-race"
    shutil.copytree(ROOT / "exercises" / "dynamodb-dns-race", copy)
    return copy


def test_check_names_a_practice_baselines_value_it_does_not_know(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _flagship_copy(tmp_path)
    yaml = copy / "exercise.yaml"
    text = yaml.read_text().replace("practice_baselines: once", "practice_baselines: sometimes")
    yaml.write_text(text)
    code, _, err = run(capsys, "check", str(copy))
    assert code == 2
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "practice_baselines:" in t)
    assert f"exercise.yaml:{line}: replay: \"practice_baselines\" must be one of per-variant, " \
        'once, not the text "sometimes"' in err, err


def test_check_plays_the_practice_baselines_an_exercise_says_are_the_same_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The flagship says `practice_baselines: once`: sessions then play each practice night's
    # baseline once, unshifted. A world whose trigger reads the clock's text (writes after
    # '21:00' ignored) makes the unshifted night (23:00) differ from a variant (12:00-20:30):
    # check says which night, which variant and which harm, and what to do.
    copy = _flagship_copy(tmp_path)
    world = copy / "world.sql"
    world.write_text(world.read_text() + "\nCREATE TRIGGER by_the_clock BEFORE UPDATE ON "
                     "endpoint WHEN NEW.updated_at >= '21:00' BEGIN SELECT RAISE(IGNORE); END;\n")
    yaml = copy / "exercise.yaml"
    # In this world no update of endpoint takes after 21:00, so no hint's play could earn:
    # the hints' plays are another test's (tests/engine/test_hint_plays.py).
    text = "".join(line for line in yaml.read_text().splitlines(keepends=True)
                   if not line.lstrip().startswith(("play: scripts/hints/", "earns: ")))
    # nor has its race any harm (its family of nights is night_check's: test_unknown_night.py)
    family = text.index("  nights:\n")
    text = text[:family] + text[text.index("\n# The world panel", family) + 1:]
    yaml.write_text(text)
    code, _, err = run(capsys, "check", str(copy))
    assert code == 2
    night = next(n for n, t in enumerate(text.splitlines(), 1)
                 if t.strip() == "- id: dangling-pointer")
    assert err.count("\n") == 1  # one problem, one line
    assert f"exercise.yaml:{night}: practice night \"dangling-pointer\": its baseline differs " \
        "on the variant starting 12:00, 'enactor-a' traded with 'enactor-b'" in err, err
    assert re.search(r"\((empty-answer|stale-plan): \d+ min( from minute \d+)? unshifted, "
                     r"\d+ min( from minute \d+)? there\)", err), err  # the first that differs
    assert err.rstrip().endswith('but replay: practice_baselines is "once"; remove that line so '
                                 "each session plays its own")
    yaml.write_text(text.replace("  practice_baselines: once\n", ""))  # as it says: then ok
    code, out, err = run(capsys, "check", str(copy))
    assert code == 0 and ": ok" in out and err == "", err


def test_a_script_played_on_the_other_database_names_its_twin(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A play's guards are in one dialect; played on the other database they are refused and
    it scores as unguarded: the line says which file is written for that database."""
    from raceday.cli import _dialect_twin

    monkeypatch.delenv("RACEDAY_DB", raising=False)
    sqlite_play = LOST / "scripts" / "solo-complete.yaml"
    postgres_play = LOST / "scripts" / "postgres" / "solo-complete.yaml"
    said = _dialect_twin(sqlite_play, "postgresql://raceday@127.0.0.1/raceday")
    assert said is not None and f"its PostgreSQL twin is {postgres_play}" in said
    assert _dialect_twin(sqlite_play, None) is None  # SQLite's play on SQLite
    assert _dialect_twin(postgres_play, "postgresql://raceday@127.0.0.1/raceday") is None
    lone = write_script(tmp_path, "roles: [operator]\nsteps: []\n")  # no twin: nothing said
    assert _dialect_twin(lone, "postgresql://raceday@127.0.0.1/raceday") is None

    code, out, err = run(capsys, "run", "lost-update-basics", "--script", str(postgres_play),
                         "--json", "--transcripts", str(tmp_path / "t"))
    assert code == 0 and json.loads(out)["exercise"] == "lost-update-basics"
    assert err.splitlines()[0] == (
        f"raceday: {postgres_play} is written for PostgreSQL; its SQLite twin is {sqlite_play} "
        "(played as it is, its guards in PostgreSQL's dialect will be refused)")
