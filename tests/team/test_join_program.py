"""Join lines name the program as it was started: `raceday` when that name on PATH is this
raceday, else the running program's absolute path, so a player outside the venv can paste
the line into their own terminal."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from raceday.team import program as prog

VENV_RACEDAY = Path(sys.executable).parent / "raceday"


def test_the_name_alone_when_it_is_this_raceday_on_path(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    script = tmp_path / "bin" / "raceday"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script), "host"])
    monkeypatch.setenv("PATH", str(script.parent))
    assert prog.program() == "raceday"
    monkeypatch.setenv("PATH", "/nonexistent")
    assert prog.program() == str(script)  # not on PATH: where it is
    other = tmp_path / "other" / "raceday"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", str(other.parent))
    assert prog.program() == str(script)  # another raceday on PATH: this one, by its path


def test_python_dash_m_names_the_venv_s_script_or_python(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "argv", ["/x/raceday/__main__.py"])
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "py" / "python3"))
    assert prog.program() == f"{tmp_path / 'py' / 'python3'} -m raceday"
    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "raceday").write_text("#!/bin/sh\n")
    assert prog.program() == str(tmp_path / "py" / "raceday")


@pytest.mark.skipif(not VENV_RACEDAY.is_file(), reason="raceday is not installed as a script")
def test_raceday_host_started_by_its_path_prints_join_lines_that_work_from_any_shell(
        tmp_path: Path) -> None:
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # a shell outside the venv
    process = subprocess.Popen(
        [str(VENV_RACEDAY), "host", "dynamodb-dns-race", "--headless", "--seats",
         "responder", "--pace", "turns", "--transcripts", str(tmp_path / "t")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    try:
        lines = [process.stdout.readline() for _ in range(6)]
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    join = next(line for line in lines if " join /" in line)
    words = shlex.split(join)
    assert words[0] == str(VENV_RACEDAY) and words[1] == "join", join
    projector = next(line for line in lines if "projector:" in line)
    assert f"{VENV_RACEDAY} watch " in projector
    # pasted into a shell without the venv, the program runs
    done = subprocess.run([words[0], "--version"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("raceday ")
