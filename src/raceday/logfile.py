"""Every session leaves a trace: standard `logging` to `raceday.log` in its folder.

The session folder holds what a run did (events.jsonl) and, next to it, what went wrong
while it ran: the tracebacks of unexpected errors, which the TUI also shows in its crash
panel with this file's path. raceday's loggers all live under the `raceday` logger, and the
PostgreSQL driver's (`psycopg`) warnings go to the same file; one process plays one session
at a time, so opening a session's log closes the previous one.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

LOG_FILE = "raceday.log"
"""The log's name inside a session folder, next to events.jsonl."""

FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"

_ROOT = logging.getLogger("raceday")
_DRIVER = logging.getLogger("psycopg")
_lock = threading.Lock()
_handler: logging.FileHandler | None = None


def log_to(folder: Path) -> Path:
    """Send raceday's log records to `<folder>/raceday.log` from now on; return its path."""
    global _handler
    path = Path(folder) / LOG_FILE
    handler = logging.FileHandler(path, encoding="utf-8", delay=False)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.INFO)
    with _lock:
        previous, _handler = _handler, handler
        _ROOT.addHandler(handler)
        _DRIVER.addHandler(handler)  # at its own level (warnings)
        if _ROOT.level == logging.NOTSET or _ROOT.level > logging.INFO:
            _ROOT.setLevel(logging.INFO)
        if previous is not None:
            _ROOT.removeHandler(previous)
            _DRIVER.removeHandler(previous)
            previous.close()
    return path


def current_log() -> Path | None:
    """The log file records go to now (None before any session opened one)."""
    handler = _handler
    return Path(handler.baseFilename) if handler is not None else None


def stop_logging() -> None:
    """Close the session's log (the app quits, or a test is done with it)."""
    global _handler
    with _lock:
        if _handler is not None:
            _ROOT.removeHandler(_handler)
            _DRIVER.removeHandler(_handler)
            _handler.close()
            _handler = None
