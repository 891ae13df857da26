"""One browser's seat under `raceday serve --join`: claim the next free token, become
`raceday join` with it.

textual-serve starts this once per browser. A seat is claimed with a lock file named after the
token's place, holding this process's id; `raceday join` keeps the id (this process execs it),
so the seat is free again once that browser's process is gone.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from raceday.web.serve import SEATS_VARIABLE


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
    pool = json.loads(os.environ[SEATS_VARIABLE])
    tokens: list[str] = pool["tokens"]
    place = claim(Path(pool["locks"]), len(tokens))
    if place is None:
        sys.stderr.write(f"raceday: every seat of {pool['session']} is taken "
                         f"({len(tokens)} seats); ask the host for another token\n")
        return 2
    env = {k: v for k, v in os.environ.items() if k != SEATS_VARIABLE}
    env["RACEDAY_TOKEN"] = tokens[place]  # not on the command line
    argv = [sys.executable, "-m", "raceday", "join", pool["session"], "--as",
            f"browser-{place + 1}", *(["--team", pool["team"]] if pool["team"] else [])]
    os.execve(sys.executable, argv, env)


if __name__ == "__main__":
    raise SystemExit(main())
