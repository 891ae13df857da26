"""One browser's seat under `raceday serve --join`: claim the next free token, then play
`raceday join`'s seat screen with it.

textual-serve starts this once per browser; its player is asked their name before the seat is
taken (the others see it, the transcript keeps it). A seat is claimed with a lock file named after the
token's place, holding this process's id, so the seat is free again once that browser's
process is gone. What stops a browser from taking a seat (none free, a token the session does
not know) is shown in that browser: a page that never draws would tell its player nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from raceday.errors import RacedayError
from raceday.inert import inert
from raceday.parent_watch import die_with_parent
from raceday.web.browser_server import SEATS_VARIABLE


def claim(locks: Path, count: int) -> int | None:
    """The place of the first token no live process holds, now held by this one."""
    for place in range(count):
        lock = locks / str(place)
        for _ in range(2):  # a stale lock (its process is gone) is taken over once
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                if _alive(lock):
                    break
                lock.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as held:
                held.write(str(os.getpid()))
            return place
    return None


def _alive(lock: Path) -> bool:
    try:
        pid = int(lock.read_text() or "0")
    except (OSError, ValueError):
        return True  # being written by its claimant: not ours
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main() -> int:
    die_with_parent()  # the server killed outright takes this browser's seat with it
    pool = json.loads(os.environ.pop(SEATS_VARIABLE))
    tokens: list[str] = pool["tokens"]
    try:
        place = claim(Path(pool["locks"]), len(tokens))
        if place is None:
            raise RacedayError(f"every seat of {pool['session']} is taken ({len(tokens)} "
                               "seats): ask the host for another token")
        from raceday.tui.team.start_team import join

        return join(Path(pool["session"]), f"browser-{place + 1}", None, tokens[place],
                    team=pool["team"], host_gone_closes=True, ask_name=True)
    except RacedayError as exc:
        sys.stderr.write(inert(f"raceday: {exc}", one_line=True) + "\n")
        _tell(inert(f"raceday: {exc}", one_line=True))
        return 2


def _tell(line: str) -> None:
    """The one line in the browser, until its player closes it (q)."""
    from textual.app import ComposeResult
    from textual.widgets import Footer, Static

    from raceday.tui.notify import InertNotifications

    class Told(InertNotifications):
        BINDINGS = [("q", "quit", "Close")]

        def compose(self) -> ComposeResult:
            yield Static(line, markup=False)
            yield Footer()

    Told().run()


if __name__ == "__main__":
    raise SystemExit(main())
