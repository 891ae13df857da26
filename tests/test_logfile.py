"""A session's log file holds raceday's records and the PostgreSQL driver's warnings; none
of them is ever written on the terminal (the TUI draws there; a headless run's output is
read by programs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LOGS = """
import logging, sys
from pathlib import Path
from raceday.logfile import log_to, stop_logging
logging.getLogger("psycopg").warning("before any session: nowhere")
log_to(Path(sys.argv[1]))
logging.getLogger("psycopg").warning("error ignored terminating <psycopg.Pipeline [BAD]>")
logging.getLogger("raceday.engine.replay").info("a night played ahead was stopped")
stop_logging()
logging.getLogger("psycopg").warning("after the session: nowhere")
"""


def test_the_drivers_warnings_go_to_the_session_log_never_the_terminal(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", LOGS, str(tmp_path)], capture_output=True,
                          text=True, check=True)
    assert done.stderr == "" and done.stdout == ""
    log = (tmp_path / "raceday.log").read_text(encoding="utf-8")
    assert "WARNING psycopg [MainThread] error ignored terminating" in log
    assert "a night played ahead was stopped" in log
    assert "nowhere" not in log
