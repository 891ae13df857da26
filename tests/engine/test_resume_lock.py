"""One resume at a time (issue 56): two `raceday resume --end` of one killed session started
together used to both fail ("disk image is malformed") and delete world.db."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.engine.resume import _in_use, resuming
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import read_events

FLAGSHIP = Path(__file__).parents[2] / "exercises" / "dynamodb-dns-race"


@pytest.fixture(scope="module")
def flagship() -> Exercise:
    return load_exercise(FLAGSHIP)


def _killed(flagship: Exercise, root: Path) -> Path:
    session = open_session(flagship, ("responder",), root)
    session.execute("responder", "UPDATE automation SET enabled = 0")
    session.close()  # as a kill leaves it: no score
    deadline = time.monotonic() + 60  # the nights forked at its start hold its log a while
    while _in_use(session.folder) and time.monotonic() < deadline:
        time.sleep(0.1)
    return session.folder


def test_a_second_resume_while_one_runs_is_one_line_and_touches_nothing(
        tmp_path: Path, flagship: Exercise, capsys: pytest.CaptureFixture[str]) -> None:
    from raceday.cli import main

    folder = _killed(flagship, tmp_path)
    world = (folder / "world.db").read_bytes()
    capsys.readouterr()
    with resuming(folder):  # another resume holds it
        assert main(["resume", str(folder), "--end", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "already being resumed" in err and "\n" not in err
    assert (folder / "world.db").read_bytes() == world
    assert main(["resume", str(folder), "--end", "--json"]) == 0  # once it is free


def test_two_resumes_started_together_end_the_session_once(tmp_path: Path,
                                                            flagship: Exercise) -> None:
    folder = _killed(flagship, tmp_path)
    command = [sys.executable, "-m", "raceday", "resume", str(folder), "--end", "--json"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env) for _ in range(2)]
    outcomes = [(run.wait(timeout=300), *run.communicate()) for run in runs]
    codes = sorted(code for code, _, _ in outcomes)
    assert codes == [0, 2], outcomes
    for code, out, err in outcomes:
        assert "malformed" not in err and "Traceback" not in err, err
        if code == 0:
            assert json.loads(out)["max"] == 100
        else:
            assert len(err.strip().splitlines()) == 1, err
            assert ("already being resumed" in err or "is finished" in err
                    or "still running" in err), err
    assert (folder / "world.db").is_file()
    events = read_events(folder).events
    assert sum(isinstance(e, ev.ScoreEvent) for e in events) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_child_still_playing_does_not_keep_a_dead_session_running(tmp_path: Path) -> None:
    """A night played aside in a forked child held the transcript's lock (flock belongs to
    the open file, which the child shared): killed, the session stayed "still running" for
    `raceday resume` until the child finished. The child lets go of the parent's logs."""
    from raceday.transcript.log import EventLog

    log = EventLog(tmp_path)
    read, write = os.pipe()
    started_read, started_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child playing on: it waits until the parent has let go
        os.close(write)
        os.write(started_write, b"!")  # its at-fork hooks have run by now
        os.read(read, 1)
        os._exit(0)
    os.close(read)
    os.close(started_write)
    assert os.read(started_read, 1) == b"!"  # (the check raced the child's own start)
    os.close(started_read)
    try:
        log.close()  # the parent dies: its descriptor goes
        assert not _in_use(tmp_path)
    finally:
        os.close(write)
        os.waitpid(pid, 0)
