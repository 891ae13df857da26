"""The machine fails under a session: a full disk, a file-size limit, a read-only or
missing transcripts folder, the world deleted. One line, nothing torn (every line of
events.jsonl whole, seq without gaps), the session closed without a score, and resumable."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from raceday.cli import main
from raceday.engine.headless import open_session, run_script
from raceday.engine.load import load_exercise
from raceday.engine.resume import resume_session
from raceday.engine.script import load_script
from raceday.errors import MachineError
from raceday.transcript import events as ev
from raceday.transcript.log import EVENTS_FILE, EventLog, TranscriptWriteError, read_events

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
SCRIPT = FLAGSHIP / "scripts" / "textbook.yaml"


def _whole(folder: Path) -> list[dict[str, object]]:
    """Every line of the log parses and seq runs 1, 2, 3 … (nothing torn)."""
    data = (folder / EVENTS_FILE).read_text(encoding="utf-8")
    assert data.endswith("\n")
    records = [json.loads(line) for line in data.splitlines()]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    return records


def test_a_transcripts_folder_that_cannot_be_made_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the transcripts folder should be")
    status = main(["run", str(FLAGSHIP), "--script", str(SCRIPT), "--transcripts",
                   str(blocked / "t")])
    err = capsys.readouterr().err.strip()
    assert status == 1
    assert err.startswith("raceday: ") and "\n" not in err and "Traceback" not in err
    assert "cannot make the transcripts folder" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_transcripts_folder_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path.chmod(0o555)
    try:
        status = main(["run", str(FLAGSHIP), "--script", str(SCRIPT), "--transcripts",
                       str(tmp_path / "t")])
    finally:
        tmp_path.chmod(0o755)
    err = capsys.readouterr().err.strip()
    assert status == 1 and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("limit", [40_000, 120_000, 400_000, 1_000_000])
def test_a_file_size_limit_mid_session_is_one_line_and_resumable(tmp_path: Path,
                                                                  limit: int) -> None:
    code = ("import resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
            "from raceday.cli import main\n"
            f"sys.exit(main(['run', {str(FLAGSHIP)!r}, '--script', {str(SCRIPT)!r}, "
            f"'--transcripts', {str(tmp_path / 't')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    err = done.stderr.strip()
    assert err.startswith("raceday: ") and "\n" not in err and "Traceback" not in err
    [folder] = (tmp_path / "t").iterdir()
    if not (folder / EVENTS_FILE).exists():  # stopped while the world was built
        assert "cannot build the world here" in err
        return
    records = _whole(folder)
    assert records[-1]["kind"] != "score"
    assert "raceday resume" in err
    resumed = resume_session(folder, load_exercise(FLAGSHIP))  # no limit now: it goes on
    resumed.session.end()
    assert isinstance(read_events(folder).events[-1], ev.ScoreEvent)
    _whole(folder)


def test_a_write_the_disk_refuses_is_taken_back(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    log = EventLog(tmp_path)
    log.append(ev.Note(text="first"))
    real_write = os.write

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(TranscriptWriteError, match="No space left on device") as caught:
        log.append(ev.Note(text="second"))
    assert "whole up to event 1" in str(caught.value)
    monkeypatch.setattr(os, "write", real_write)
    with pytest.raises(TranscriptWriteError):  # broken for good: no later event sneaks in
        log.append(ev.Note(text="third"))
    log.close()
    assert [r["text"] for r in _whole(tmp_path)] == ["first"]


def test_a_world_deleted_mid_session_stops_it_and_resume_goes_on(tmp_path: Path) -> None:
    exercise = load_exercise(FLAGSHIP)
    session = open_session(exercise, ("responder",), tmp_path)
    session.execute("responder", "UPDATE automation SET enabled = 0")
    for part in session.folder.glob("world.db*"):
        part.unlink()
    with pytest.raises(MachineError, match="gone"):
        session.execute("responder", "SELECT 1")
    session.close()
    _whole(session.folder)
    resumed = resume_session(session.folder, exercise)
    assert "world.db was missing" in resumed.note
    rows = resumed.session.store.app_query("SELECT DISTINCT enabled FROM automation")[1]
    assert rows == [(0,)]
    resumed.session.end()


def test_a_script_stopped_by_the_machine_says_how_to_resume(tmp_path: Path) -> None:
    exercise = load_exercise(FLAGSHIP)
    script = load_script(SCRIPT, exercise)
    original = EventLog.append
    count = [0]

    def fail_at_100(self: EventLog, event: ev.Event) -> ev.Event:
        count[0] += 1
        if count[0] == 100:
            for part in self.folder.glob("world.db*"):
                part.unlink()
        return original(self, event)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EventLog, "append", fail_at_100)
        with pytest.raises(MachineError) as caught:
            run_script(exercise, script, tmp_path)
    message = str(caught.value)
    assert "\n" not in message and "raceday resume" in message
    records = _whole(next(tmp_path.iterdir()))
    assert records[-1]["kind"] != "score"
