"""A process that dies with the one that started it, however that one dies.

`raceday serve` starts a `raceday play` (or a seat) for each browser. Ctrl-C ends them, but
a server killed outright (`kill -9`, the OOM killer) ran no code: its children lived on,
re-parented, each holding a session. The server names itself in the child's environment;
the child asks the kernel to kill it when its parent goes (Linux: PR_SET_PDEATHSIG), or,
elsewhere, watches for being re-parented."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

PARENT_VARIABLE = "RACEDAY_DIE_WITH_PARENT"
"""The parent's process id, set by the parent for each child that must not outlive it."""
_PR_SET_PDEATHSIG = 1
WATCH_S = 1.0
"""How often a child without PR_SET_PDEATHSIG looks whether its parent is still there."""


def die_with_parent() -> None:
    """When this process was started to die with its parent, arrange it (once, at start).

    The variable is taken out of the environment: this process's own children are its
    business, not the server's."""
    value = os.environ.pop(PARENT_VARIABLE, None)
    if not value or not value.isdigit():
        return
    parent = int(value)
    if not _ask_the_kernel():
        threading.Thread(target=_watch, args=(parent,), daemon=True,
                         name="raceday-parent-watch").start()
    if os.getppid() != parent:  # it died before the kernel was asked
        os._exit(1)


def _ask_the_kernel() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_S)
    os._exit(1)
