"""A call made in a forked child while this process goes on with other work.

The replay plays nights that do not depend on each other (the race, and the normal night on
the team's world); they are Python and SQLite bound, so two threads would only take turns on
the GIL, but a child forked at the moment they part plays on a second core. Nothing here is
shared: the child plays on files of its own, sends its answer back pickled through a pipe,
and leaves with `os._exit` (no atexit, no flush of the parent's buffers).

A child never decides an answer: when a fork is not possible (no `os.fork`, one core, switched
off), or the child fails or dies, the same call is made in this process when the answer is
asked for, so the answer is the same either way (the engine is deterministic); only where the
time goes differs.

A fork copies one thread. It is safe while no other thread of the process can be inside
SQLite (whose locks the child would find held): a headless run has no other thread, and the
TUI makes every call to a session and its store on its runner, one at a time. A process that
is not so (the team host) switches forking off. There is no time limit on the answer: a night
may legitimately wait on locks for minutes (a team that never commits), as it would here.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

_log = logging.getLogger(__name__)

T = TypeVar("T")

_enabled = [True]


def set_enabled(enabled: bool) -> None:
    """Switch forking off (or on again) for this process: a process whose other threads may
    hold SQLite's locks at any moment (a server) plays everything in-process."""
    _enabled[0] = enabled


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    return _enabled[0] and hasattr(os, "fork") and _cores() >= 2


class Aside(Generic[T]):
    """The answer of `call()`, worked out in a child when one could be forked."""

    def __init__(self, call: Callable[[], T], *, before_here: Callable[[], None] | None = None
                 ) -> None:
        self._call = call
        self._before_here = before_here
        self._pid: int | None = None
        self._fd: int | None = None
        self._parent = os.getpid()
        if can_fork():
            self._fork()

    @property
    def forked(self) -> bool:
        return self._pid is not None

    def _fork(self) -> None:
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: answer, and leave without running anything of the parent's
            code = 1
            try:
                os.close(read)
                _quiet_signals()
                payload = pickle.dumps(self._call(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
                code = 0
            except BaseException:  # noqa: BLE001 - the parent makes the call again and reports
                pass
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._fd = pid, read

    def result(self) -> T:
        """The call's answer: the child's when it gave one, else made here and now."""
        answer = self.child_answer()
        if answer is not None:
            return answer[0]
        if self._before_here is not None:
            self._before_here()
        return self._call()

    def child_answer(self) -> tuple[T] | None:
        """The child's answer (in a tuple: None is an answer too), waited for; None when no
        child was forked or it gave none, so the caller does only the part it needs itself.
        Asked in another process (a later child forked from this one), None: only the
        process that forked a child reads its pipe and reaps it."""
        if self._pid is None or os.getpid() != self._parent:
            return None
        return self._collect()

    def _collect(self) -> tuple[T] | None:
        pid, fd = self._pid, self._fd
        assert pid is not None and fd is not None
        self._pid = self._fd = None
        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0 or not chunks:
            _log.info("a night played aside failed (status %s): played here", status)
            return None
        try:
            return (pickle.loads(b"".join(chunks)),)
        except Exception:  # noqa: BLE001 - a garbled answer is no answer
            _log.info("a night played aside gave an unreadable answer: played here",
                      exc_info=True)
            return None

    def discard(self) -> None:
        """Stop the child if its answer will not be asked for (the caller failed)."""
        if self._pid is not None and self._fd is not None and os.getpid() == self._parent:
            os.close(self._fd)
            _stop(self._pid)
            self._pid = self._fd = None


def _quiet_signals() -> None:
    """In the child: a signal it gets (a terminal resized) must not wake the parent's event
    loop through the wake-up descriptor they share, nor run the parent's handlers here. A
    terminal closed (SIGHUP, to the whole group) lets it finish its night and remove its
    scratch folder: a fraction of a second, and nothing is left in the temp folder."""
    try:
        signal.set_wakeup_fd(-1)
        if hasattr(signal, "SIGHUP"):
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing was set up here
        return
    for name in ("SIGWINCH", "SIGTSTP", "SIGCONT", "SIGTERM"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, signal.SIG_DFL)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
