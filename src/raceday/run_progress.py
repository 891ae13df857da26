"""`raceday run` on a terminal: one line on stderr saying how far the night has got.

recovery-under-load's night takes 15 s and more headless, and `raceday run` said nothing
until the score. The line is rewritten in place a few times a second and wiped before the
score is printed; a pipe or a file (scripts, CI, `--json` read by a program) gets nothing.
"""

from __future__ import annotations

import time
from typing import TextIO

from raceday.transcript import events as ev

EVERY_S = 0.25
"""How often at most the line is rewritten (a night shorter than this shows none)."""

_WIPE = "\r\x1b[K"


class RunProgress:
    """A session listener (`Session.subscribe`) that keeps the progress line up to date."""

    def __init__(self, stream: TextIO, until: str, *, night_minutes: int) -> None:
        self.stream = stream
        self.until = until
        self.night_minutes = night_minutes
        self.shown = False
        self._told_at = time.monotonic()
        self._judging = False

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.ScoreEvent):
            self.wipe()
            return
        over = event.minute >= self.night_minutes or isinstance(event, ev.Chart)
        if over and self._judging:
            return
        now = time.monotonic()
        if not over and now - self._told_at < EVERY_S:
            return
        self._told_at = now
        if over:
            self._judging = True
            line = "raceday: the night is over: replaying it to judge the guards, then the score"
        else:
            line = f"raceday: playing the night: {event.sim_time} of {self.until}"
        self.stream.write(_WIPE + line)
        self.stream.flush()
        self.shown = True

    def wipe(self) -> None:
        """Take the line away (the score or an error is printed where it was)."""
        if self.shown:
            self.stream.write(_WIPE)
            self.stream.flush()
            self.shown = False
