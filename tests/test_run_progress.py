"""How far a night has got (engine.progress), and `raceday run` on a terminal saying it
(recovery-under-load's night takes 15 s and more); a pipe gets nothing but the score."""

from __future__ import annotations

import dataclasses
import io
import os
import pty
import subprocess
import sys
from pathlib import Path

from raceday.engine.load import load_exercise
from raceday.engine.progress import EVERY_S, NightProgress
from raceday.exercise.model import Exercise
from raceday.terminal_progress import TerminalProgress
from raceday.transcript import events as ev

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "exercises" / "dynamodb-dns-race"
SCRIPT = FLAGSHIP / "scripts" / "as-it-happened.yaml"


def _at(minute: int, face: str, *, after_team_left: bool = False) -> ev.Event:
    return ev.stamped(ev.Inject(id="x", inject_kind="status", title="t"), minute=minute,
                      sim_time=face, after_team_left=after_team_left)


def _flagship() -> Exercise:
    return load_exercise(FLAGSHIP)


def test_the_line_comes_a_few_times_a_second_at_most_and_the_nights_end_once() -> None:
    clock = [100.0]
    exercise = _flagship()
    end = exercise.clock.length_minutes
    until = exercise.clock.end.strftime("%H:%M")
    progress = NightProgress(exercise, clock=lambda: clock[0])
    lines = []
    assert progress.line(_at(0, "23:00")) is None  # the first instant: nothing yet
    clock[0] += EVERY_S
    for minute in range(10):  # ten events in the same instant: one line
        clock[0] += 0.01
        lines.append(progress.line(_at(minute, f"23:0{minute}", after_team_left=True)))
    assert [line for line in lines if line] == [
        f"23:00 of {until}: the rest of the night plays itself out, with only the automation"]
    clock[0] += EVERY_S
    assert progress.line(_at(20, "23:20")) == f"playing the night: 23:20 of {until}"
    assert progress.line(_at(21, "23:21")) is None  # too soon after
    # past the night: said at once (whatever the time since), and once
    assert progress.line(_at(end, until)) == (
        "the night is over: replaying the race on a copy of your world, to judge your guards")
    assert progress.line(ev.Chart(label="fleet")) is None
    assert progress.line(ev.Chart(label="knobs")) is None
    plain = dataclasses.replace(exercise, replay=None)  # an exercise with no replay
    assert NightProgress(plain).line(ev.Chart(label="fleet")) == "the night is over: judging it"


def test_the_terminal_line_is_rewritten_and_wiped_for_the_score() -> None:
    clock = [50.0]
    stream = io.StringIO()
    progress = TerminalProgress(stream, NightProgress(_flagship(), clock=lambda: clock[0]))
    for minute in range(5):  # all in the first instant: nothing yet
        progress(_at(minute, "23:0" + str(minute)))
    assert stream.getvalue() == ""
    clock[0] += EVERY_S
    progress(_at(200, "02:20"))
    progress(_at(201, "02:21"))  # too soon after: not written
    until = _flagship().clock.end.strftime("%H:%M")
    assert stream.getvalue() == f"\r\x1b[Kraceday: playing the night: 02:20 of {until}"
    progress(ev.Chart(label="fleet"))  # the night's end: said at once, and once
    progress(ev.Chart(label="more"))
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
    assert b"raceday: the night is over: replaying the race" in said
    assert said.endswith(b"\r\x1b[K")
    assert on_terminal.stdout.startswith(b'{"exercise": "dynamodb-dns-race"')
