"""Python's cyclic garbage collector, held off while a replay plays, and kept off what the
process holds for good.

A replay makes hundreds of thousands of short-lived objects (events, results, rows), and
every so many of them the collector walks every object the process holds. In the TUI that
is all of Textual's and Rich's (~650k objects): measured, 10-15% of a replay's CPU, and in a
child forked for a night each walk also copies every memory page it touches. A night makes
few reference cycles (its objects are freed by their counts as they go), so the collector
runs again once the replay is over, with little left for it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pausing = [0, False]
"""How many callers are inside `paused()`, and whether the collector was on before the
first of them came in (it is switched back on only then, when the last one leaves)."""


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block (other threads' included: there is one
    collector per process); it is switched back on as it was when the last block ends."""
    with _lock:
        if _pausing[0] == 0:
            _pausing[1] = gc.isenabled()
            gc.disable()
        _pausing[0] += 1
    try:
        yield
    finally:
        with _lock:
            _pausing[0] -= 1
            if _pausing[0] == 0 and _pausing[1]:
                gc.enable()


def settle(*, collect: bool = False) -> None:
    """What the process holds now stays for good (modules, the app, the exercise, the open
    session): the collector's full walks stop visiting it (`gc.freeze`). Measured in the
    TUI, the walks it saves took 20-50 ms each, one while the exercise loaded and one while
    the play screen opened, both while the player waited.

    What was held then and let go since (a screen popped) is not freed by the collector
    until the next `collect`: everything is let out again, the garbage freed in one full
    walk, and the rest kept again. Only where nobody waits on that walk."""
    if collect:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
