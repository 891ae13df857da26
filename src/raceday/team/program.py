"""The command a player types to start raceday, as the join lines print it.

`raceday` when that name on the player's PATH is this raceday; otherwise the absolute path of
the program that is running (a venv's `bin/raceday`, which works from any shell without the
venv activated), so a line pasted into another terminal starts the same raceday.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

NAME = "raceday"


def program() -> str:
    """`raceday`, or the running raceday's absolute path (shell-quoted) when the name on
    PATH is missing or another program; `python -m raceday` in full when there is no
    `raceday` script at all."""
    on_path = shutil.which(NAME)
    running = _running()
    if on_path is not None and (running is None or _same(Path(on_path), running)):
        return NAME
    if running is not None:
        return shlex.quote(str(running))
    return f"{shlex.quote(sys.executable)} -m {NAME}"


def _running() -> Path | None:
    """The `raceday` script that started this process: argv[0] when it is one, else the one
    beside this Python (a venv's bin/), else None."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == NAME:
        found = shutil.which(argv0) if "/" not in argv0 else argv0
        if found:
            return Path(found).absolute()
    beside = Path(sys.executable).parent / NAME
    return beside.absolute() if beside.is_file() else None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
