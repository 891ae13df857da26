"""`raceday resume DIR --end` of a killed team host (issue 56): it ends the session headless,
the night playing itself out with the automation, and prints the score; it used to open the
console (hanging without a terminal) or, with `--headless`, wait for seats for ever."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from team_fixtures import joined, make_host, send

from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import read_events


def _killed_host(flagship: Exercise, root: Path) -> Path:
    host = make_host(flagship, root)
    rita = joined(host, "responder", "Rita")
    send(host, rita, "sql", sql="UPDATE automation SET enabled = 0")
    folder = host.folder
    host.need().close()  # killed: no score
    host.close()
    return folder


@pytest.mark.parametrize("extra", [(), ("--headless",)])
def test_resume_end_of_a_killed_team_host_scores_it_headless(
        flagship: Exercise, tmp_path: Path, extra: tuple[str, ...]) -> None:
    folder = _killed_host(flagship, tmp_path / "transcripts")
    done = subprocess.run([sys.executable, "-m", "raceday", "resume", str(folder), "--end",
                           "--json", *extra], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["session"] == str(folder) and result["max"] == 100
    events = read_events(folder).events
    assert sum(isinstance(e, ev.ScoreEvent) for e in events) == 1
    assert any(isinstance(e, ev.TeamLeft) for e in events)  # the night played itself out
    assert (folder / "debrief.md").is_file()
