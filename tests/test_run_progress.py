"""`raceday run` on a terminal says how far the night has got (recovery-under-load's takes
15 s and more); a pipe gets nothing but the score."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from raceday import run_progress
from raceday.run_progress import RunProgress
from raceday.transcript import events as ev

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "exercises" / "dynamodb-dns-race" / "scripts" / "as-it-happened.yaml"


def _at(minute: int, face: str) -> ev.Event:
    return ev.stamped(ev.Inject(id="x", inject_kind="status", title="t"), minute=minute,
                      sim_time=face)


def test_the_line_is_rewritten_a_few_times_a_second_and_wiped_for_the_score(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [50.0]
    monkeypatch.setattr("raceday.run_progress.time.monotonic", lambda: clock[0])
    stream = io.StringIO()
    progress = RunProgress(stream, "14:20", night_minutes=715)
    for minute in range(5):  # all in the first instant: nothing yet
        progress(_at(minute, "02:2" + str(minute)))
    assert stream.getvalue() == ""
    clock[0] += run_progress.EVERY_S
    progress(_at(200, "05:45"))
    progress(_at(201, "05:46"))  # too soon after: not written
    assert stream.getvalue() == "\r\x1b[Kraceday: playing the night: 05:45 of 14:20"
    progress(_at(715, "14:20"))  # the night's end: said at once, and once
    progress(ev.Chart(label="fleet"))
    assert stream.getvalue().count("the night is over") == 1
    progress(ev.ScoreEvent(reason="ended", score=None))  # type: ignore[arg-type]
    assert stream.getvalue().endswith("\r\x1b[K") and not progress.shown


def _run(stderr: int, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    tmp_path.mkdir()
    return subprocess.run(
        [sys.executable, "-m", "raceday", "run", "dynamodb-dns-race", "--script", str(SCRIPT),
         "--json", "--transcripts", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=stderr, cwd=tmp_path, check=True, timeout=120)


def test_a_terminal_sees_the_progress_and_a_pipe_does_not(tmp_path: Path) -> None:
    piped = _run(subprocess.PIPE, tmp_path / "piped")
    assert piped.stderr == b""
    assert piped.stdout.startswith(b'{"exercise": "dynamodb-dns-race"')

    leader, follower = pty.openpty()
    try:
        on_terminal = _run(follower, tmp_path / "terminal")
        os.close(follower)
        follower = -1
        said = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    # the flagship's night is short: the line at its end at least, then wiped for the score
    assert b"raceday: the night is over: replaying it" in said
    assert said.endswith(b"\r\x1b[K")
    assert on_terminal.stdout.startswith(b'{"exercise": "dynamodb-dns-race"')
