"""The client's last word on a statement the server did not stop in time.

The server's own `statement_timeout` stops a runaway statement; this cancels it from the
client when that did not happen (a lost packet, a server too busy to notice). One thread
watches every connection of the process: a timer thread per statement cost about 0.6 ms
each, a few percent of a night on PostgreSQL."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Watchdog:
    """Calls a statement's `cancel` once its deadline passes, unless it finished first."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: dict[int, tuple[float, Callable[[], object]]] = {}
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watching(self, seconds: float, cancel: Callable[[], object]) -> Iterator[None]:
        token = next(self._tokens)
        with self._wake:
            at = time.monotonic() + seconds
            sooner = not self._due or at < min(due for due, _c in self._due.values())
            self._due[token] = (at, cancel)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="raceday-pg-watchdog",
                                                daemon=True)
                self._thread.start()
            elif sooner:  # a later deadline than one it waits for needs no waking
                self._wake.notify()
        try:
            yield
        finally:
            with self._wake:
                self._due.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due:
                    self._wake.wait()
                now = time.monotonic()
                late = [t for t, (at, _c) in self._due.items() if at <= now]
                cancels = [self._due.pop(t)[1] for t in late]
                if not cancels:
                    self._wake.wait(min(at for at, _c in self._due.values()) - now)
                    continue
            for cancel in cancels:  # outside the lock: a cancel is a round trip
                cancel()


WATCHDOG = Watchdog()
