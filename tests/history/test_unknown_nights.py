"""The history of unknown nights: time to detect by night, so a person sees it improve."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from raceday.engine.headless import run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.script import load_script
from raceday.engine.unknown_night import named_night
from raceday.history.report import print_history

SCRIPTS = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race" / "scripts"


def test_the_history_shows_time_to_detect_by_night(tmp_path: Path) -> None:
    exercise = load_named_exercise("dynamodb-dns-race")
    plays = [("nothing.yaml", "empty-plan"), ("unknown/broad-monitor.yaml", "empty-plan"),
             ("unknown/broad-monitor.yaml", "quiet")]
    for script, night in plays:
        run_script(exercise, load_script(SCRIPTS / script, exercise), tmp_path,
                   night=named_night(exercise, night, 0))
    out = io.StringIO()
    print_history(tmp_path, Console(file=out, width=120), scripts=True)
    text = out.getvalue()
    assert "unknown nights: time to detect by night" in text
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()
            if line.startswith(("empty-plan ", "quiet "))}
    assert rows["empty-plan"] == ["2", "1/2", "never", "0", "min", "0", "min"]  # first, last, best
    assert rows["quiet"][:2] == ["1", "no"]
    assert "quiet night" in text  # the chart's row says what the night was, not "prevented"
