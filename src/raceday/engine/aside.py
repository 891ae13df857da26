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
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar

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


def _fork_into(write_answers: Callable[[BinaryIO], None]) -> tuple[int, int] | None:
    """Fork a child that writes its answers to a pipe with `write_answers` and leaves with
    `os._exit` (nothing of the parent's runs there); (pid, the pipe's read end), or None when
    no child could be forked. A child that fails leaves with status 1 and what it wrote."""
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:
        code = 1
        try:
            os.close(read)
            _quiet_signals()
            with os.fdopen(write, "wb") as pipe:
                write_answers(pipe)
            code = 0
        except BaseException:  # noqa: BLE001 - the parent makes what it did not get
            pass
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


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
        def answer(pipe: BinaryIO) -> None:  # pickled whole before a byte is written
            pipe.write(pickle.dumps(self._call(), protocol=pickle.HIGHEST_PROTOCOL))

        forked = _fork_into(answer)
        if forked is not None:
            self._pid, self._fd = forked

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


class Chain(Generic[T]):
    """Several calls made one after another in one forked child, each answer sent back as
    soon as it is made: asking for one waits only for the calls before it. One child, not
    one each: work that is only perhaps needed, put last, never takes a core from the work
    before it, nor from this process.

    `child_answer(i)` is the answer of call `i` (in a tuple), or None when no child was
    forked, or that call failed in it, or the child died first, or this process took the
    call over (`take_over`): the caller then does what it needs itself. Only the process
    that forked the child reads its pipe and reaps it.

    `perhaps_from`: the calls from this one on are only perhaps needed; the child makes them
    at the lowest priority (`os.nice`), so they take only a core nothing else wants: not one
    from the replay that decides whether they are needed, nor from the screen."""

    _HEADER = 8

    def __init__(self, calls: Sequence[Callable[[], T]], *, perhaps_from: int | None = None,
                 ) -> None:
        self._calls = list(calls)
        self._perhaps_from = perhaps_from
        self._answers: list[tuple[T] | None] = []  # received so far, in order
        self._pid: int | None = None
        self._fd: int | None = None
        self._parent = os.getpid()
        self._claims: Path | None = None  # call i is made by whoever creates the file i first
        self.forked = False
        if self._calls and can_fork():
            self._claims = Path(tempfile.mkdtemp(prefix="raceday-chain-"))
            self._fork()
            if not self.forked:
                self._forget_claims()

    def take_over(self, index: int) -> bool:
        """Make call `index` here if the child has not begun it (it will skip it): True when
        this process is to make it, False when the child is making or has made it. A caller
        that would wait for the calls before it works beside the child instead."""
        if self._pid is None or os.getpid() != self._parent or index < len(self._answers):
            return self._pid is None and index >= len(self._answers)
        return self._claims is not None and _claim(self._claims / str(index))

    def _forget_claims(self) -> None:
        if self._claims is not None:
            shutil.rmtree(self._claims, ignore_errors=True)
            self._claims = None

    def _fork(self) -> None:
        claims = self._claims

        def answers(pipe: BinaryIO) -> None:  # each as it is made
            for index, call in enumerate(self._calls):
                if index == self._perhaps_from:
                    _lowest_priority()
                payload = b""  # no answer: taken over, or it failed (made there)
                try:
                    if claims is not None and _claim(claims / str(index)):
                        payload = pickle.dumps(call(), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 - this one is made by the parent
                    payload = b""
                pipe.write(len(payload).to_bytes(self._HEADER, "big") + payload)
                pipe.flush()

        forked = _fork_into(answers)
        if forked is not None:
            self._pid, self._fd = forked
            self.forked = True

    def child_answer(self, index: int) -> tuple[T] | None:
        if os.getpid() != self._parent:
            return None
        while len(self._answers) <= index and self._fd is not None:
            self._receive()
        return self._answers[index] if index < len(self._answers) else None

    def _receive(self) -> None:
        header = self._read(self._HEADER)
        size = int.from_bytes(header, "big") if header is not None else -1
        payload = self._read(size) if size > 0 else b""
        if size < 0 or payload is None:  # the child is gone: the rest is made here
            _log.info("a chain of nights played aside stopped after %d answers",
                      len(self._answers))
            self._reap()
            return
        answer: tuple[T] | None = None
        if payload:
            try:
                answer = (pickle.loads(payload),)
            except Exception:  # noqa: BLE001 - a garbled answer is no answer
                _log.info("a night played aside gave an unreadable answer", exc_info=True)
        self._answers.append(answer)
        if len(self._answers) == len(self._calls):
            self._reap()

    def _read(self, size: int) -> bytes | None:
        """Exactly `size` bytes from the pipe, or None at its end."""
        assert self._fd is not None
        chunks: list[bytes] = []
        left = size
        while left:
            chunk = os.read(self._fd, min(left, 1 << 16))
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _reap(self) -> None:
        pid, fd = self._pid, self._fd
        self._pid = self._fd = None
        self._forget_claims()
        if fd is not None:
            os.close(fd)
        if pid is not None:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    def discard(self) -> None:
        """Stop the child if it is still making answers nobody will ask for."""
        if self._pid is not None and self._fd is not None and os.getpid() == self._parent:
            os.close(self._fd)
            _stop(self._pid)
            self._pid = self._fd = None
            self._forget_claims()


def _lowest_priority() -> None:
    """This process runs only when nothing else wants the core (where the OS can say so)."""
    try:
        os.nice(19)
    except (AttributeError, OSError):
        pass


def _claim(path: Path) -> bool:
    """Create `path`, once: True for the one process that did."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


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
