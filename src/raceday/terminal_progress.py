"""`raceday run` on a terminal: engine.progress's line on stderr, rewritten in place and
wiped before the score is printed. A pipe or a file (scripts, CI, `--json` read by a
program) is never given one (cli._run_progress)."""

from __future__ import annotations

from typing import TextIO

from raceday.engine.progress import NightProgress
from raceday.transcript import events as ev

_WIPE = "\r\x1b[K"


class TerminalProgress:
    """A session listener (`Session.subscribe`) that keeps the progress line up to date."""

    def __init__(self, stream: TextIO, progress: NightProgress) -> None:
        self.stream = stream
        self.progress = progress
        self.shown = False

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.ScoreEvent):
            self.wipe()
            return
        line = self.progress.line(event)
        if line is not None:
            self.stream.write(f"{_WIPE}raceday: {line}")
            self.stream.flush()
            self.shown = True

    def wipe(self) -> None:
        """Take the line away (the score or an error is printed where it was)."""
        if self.shown:
            self.stream.write(_WIPE)
            self.stream.flush()
            self.shown = False
