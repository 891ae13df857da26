"""Answers a later replay will need, made meanwhile in one background thread.

On PostgreSQL a session's final replay plays nights that depend only on the exercise and the
session's variant (the practice nights' baselines, drawn for each session; the original
world's nights, until the cache folder holds them). They are known when the session opens,
so they are played then, while the players play, and the replay takes their answers instead
of playing them at the end. A night on PostgreSQL mostly waits on the server, so a thread is
enough (SQLite's nights are forked: `aside`).

An answer is never decided here: the replay that asks for one whose night has not begun
plays it itself (and the thread skips it), and one whose night failed is played again.
At exit the night being played is stopped at its next statement (`stop`), or as soon as it
opens its next world: a headless run's exit waited 1.1-1.8 s for a variant's night nobody
would read to get through its copy of the world and its play."""

from __future__ import annotations

import atexit
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

_log = logging.getLogger(__name__)


Job = Callable[[list[Any]], Any]
"""Makes an answer; appends each world it opens to the list it is given, so `stop` can close
them (the job drops them itself, whatever happens)."""


class Stopped(Exception):
    """The thread is stopping: the job that opened a world ends here (and drops it)."""


class _Opened(list[Any]):
    """The worlds of the job being played. Once the thread stops, a world the job opens is
    still kept here (the job drops what it holds) but closed at once, and the job stopped."""

    def __init__(self, stopping: threading.Event) -> None:
        super().__init__()
        self._stopping = stopping

    def append(self, world: Any) -> None:
        super().append(world)
        if self._stopping.is_set():
            _close(world)
            raise Stopped("the replay's nights played ahead are stopping")


def _close(world: Any) -> None:
    """Its statement running is cancelled (where the world can) and its connections closed."""
    interrupt = getattr(world, "interrupt", None)
    try:
        if interrupt is not None:
            interrupt()
        world.close()
    except Exception:  # noqa: BLE001 - best effort: the job drops what it made
        pass

_STOP_WAIT_S = 10.0
"""How long exit waits for the night being played to drop its worlds once stopped."""


class AheadThread:
    """A queue of jobs by key, played one after another in one daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[tuple[str, Job, Future[Any]]] = deque()
        self._futures: dict[str, Future[Any]] = {}
        self._stopping = threading.Event()  # while `stop` runs: jobs end at their next world
        self._open: list[Any] = _Opened(self._stopping)  # the worlds of the job being played
        self._thread: threading.Thread | None = None

    def start(self, key: str, job: Job) -> None:
        """Queue `job` unless its answer is being made already."""
        with self._lock:
            if self._stopping.is_set() or key in self._futures:
                return
            from concurrent.futures import Future  # PostgreSQL's only: a SQLite run never loads it

            future: Future[Any] = Future()
            self._futures[key] = future
            self._queue.append((key, job, future))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="replay-ahead",
                                                daemon=True)
                self._thread.start()

    def take(self, key: str) -> tuple[bool, Any]:
        """(True, the answer) when the thread made it (waiting for a night being played);
        (False, None) when it has not begun (it never will: the caller plays it), it
        failed, or it was never asked for."""
        with self._lock:
            future = self._futures.pop(key, None)
        if future is None or future.cancel():
            return False, None
        try:
            return True, future.result()
        except Exception:  # the night failed here: played again by the caller, which reports
            _log.info("a replay night played ahead failed; it is played again", exc_info=True)
            return False, None

    def forget(self, keys: list[str]) -> None:
        """Nobody will take these (the session's final replay is over): those not begun are
        not played; one being played finishes (its answer still goes to the cache)."""
        with self._lock:
            for key in keys:
                future = self._futures.pop(key, None)
                if future is not None:
                    future.cancel()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._queue or self._stopping.is_set():
                    self._thread = None
                    return
                key, job, future = self._queue.popleft()
                if not future.set_running_or_notify_cancel():
                    continue  # taken by a replay before it began
                self._open = made = _Opened(self._stopping)
            try:
                future.set_result(job(made))
            except BaseException as exc:  # noqa: BLE001 - the taker plays it again
                future.set_exception(exc)

    def stop(self) -> None:
        """Play nothing more; close the worlds of the night being played (it stops at its
        next statement, or when it opens its next world, and drops them), and wait a little
        for that."""
        with self._lock:
            self._stopping.set()
            thread = self._thread
            for _, _, future in self._queue:
                future.cancel()
            self._queue.clear()
            self._futures.clear()
            worlds = list(self._open)
        for world in worlds:
            _close(world)
        if thread is not None:
            thread.join(_STOP_WAIT_S)
        with self._lock:
            self._stopping.clear()


AHEAD = AheadThread()
atexit.register(AHEAD.stop)
