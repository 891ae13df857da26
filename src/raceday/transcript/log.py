"""The append-only event log of a session: `events.jsonl`.

Each event is written and flushed before anyone is told its outcome, so a crash loses
nothing that a player saw. Reading validates every line once, here, at the edge: what comes
back is typed events in order, or one line naming what is wrong and where. A torn last line
(a killed process) is dropped with a warning, not an error.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import weakref
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from raceday.errors import MachineError, TranscriptError
from raceday.textfile import MAX_TRANSCRIPT_BYTES, UnreadableText, read_bytes
from raceday.transcript.events import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    Event,
    EventError,
    SessionStart,
    check_base,
    from_record,
    stamped,
    to_json_line,
)
from raceday.value import Value, frozen

EVENTS_FILE = "events.jsonl"
E = TypeVar("E", bound=Event)


def session_folder(root: Path, exercise_id: str, now: datetime | None = None) -> Path:
    """A new folder `<root>/<UTC timestamp>-<exercise id>/`, never reusing an existing one."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TranscriptWriteError(f"{root}: cannot make the transcripts folder "
                                   f"({exc.strerror or exc})") from None
    n = 1
    while True:
        folder = root / (f"{stamp}-{exercise_id}" if n == 1 else f"{stamp}-{exercise_id}-{n}")
        try:
            folder.mkdir()  # atomic: of two sessions started in the same second, one gets it
            return folder
        except FileExistsError:
            n += 1
        except OSError as exc:
            raise TranscriptWriteError(f"{root}: cannot write a session folder here "
                                       f"({exc.strerror or exc})") from None


class TranscriptWriteError(MachineError):
    """The transcript cannot be written (disk full, folder read-only): the session ends.

    The file is left whole: a line that could not be written completely is taken back, so
    every line in events.jsonl is an event and the last one is the last acknowledged."""


_OPEN_LOGS: weakref.WeakSet[EventLog] = weakref.WeakSet()
"""Every log open in this process: a forked child (engine/aside.py) lets go of them."""


def _let_go_in_child() -> None:
    """In a forked child: close the inherited descriptors of the parent's logs. The lock a
    log holds (flock) is the open file's, shared with every copy of its descriptor: a child
    still playing a night after its parent was killed kept the session "still running" for
    `raceday resume`. Closing the child's copy leaves the parent's lock as it is."""
    for log in list(_OPEN_LOGS):
        log._inherited()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_let_go_in_child)


class EventLog:
    """Writes events with `seq` 1, 2, 3 … and no gaps.

    `seq` is where an existing log left off: `raceday resume` continues a log, numbering on
    from its last whole line (`repair_tail` first takes back a line cut short)."""

    def __init__(self, folder: Path, seq: int = 0, *, durable: bool = True) -> None:
        self.folder = folder
        self._durable = durable  # False: not synced on close (a replay's race, rebuilt at will)
        self.path = folder / EVENTS_FILE
        self.broken: str | None = None  # why the log can no longer be written
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise TranscriptWriteError(_cannot_write(self.path, exc)) from None
        try:  # one writer per log: `raceday resume` must not write beside a live session
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(self._fd)
                raise TranscriptWriteError(f"{self.path}: the transcript is in use by another "
                                           "raceday (a session still running)") from None
            # a filesystem without locks: write unlocked
        self._size = os.fstat(self._fd).st_size
        self._seq = seq
        self._closed = False
        _OPEN_LOGS.add(self)

    def _inherited(self) -> None:
        """This process is a fork's child: the log is the parent's, never written here."""
        if not self._closed:
            self._closed = True
            self.broken = "the log belongs to the process that forked this one"
            try:
                os.close(self._fd)
            except OSError:
                pass

    def append(self, event: E) -> E:
        """Number and time-stamp the event, write it whole, and give it back.

        Written with one unbuffered write (what the OS holds survives a killed process); a
        write that fails (disk full, a file-size limit) is taken back, so no line is torn,
        and raises TranscriptWriteError: the log then refuses every later event."""
        if self.broken is not None:
            raise TranscriptWriteError(self.broken)
        if self._closed:
            raise TranscriptWriteError(f"{self.path}: the transcript is closed")
        wall = event.wall_time or datetime.now(UTC).isoformat(timespec="milliseconds")
        record = stamped(event, seq=self._seq + 1, wall_time=wall)
        data = (to_json_line(record) + "\n").encode("utf-8")  # encoded whole before the number
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self._take_back()
            self.broken = _cannot_write(self.path, exc) + (
                f"; the transcript is whole up to event {self._seq}")
            raise TranscriptWriteError(self.broken) from None
        self._size += len(data)
        self._seq += 1
        return record

    def _take_back(self) -> None:
        """Cut the file back to its last whole line after a failed write."""
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            pass

    @property
    def seq(self) -> int:
        """The number of the last event written."""
        return self._seq

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._durable:
                os.fsync(self._fd)
        except OSError:
            pass  # a full disk: what was written stays; nothing more can be
        finally:
            os.close(self._fd)


def _cannot_write(path: Path, exc: OSError) -> str:
    why = exc.strerror or str(exc)
    if exc.errno == errno.EFBIG:
        why = "the file-size limit is reached"
    return f"{path}: cannot write the transcript ({why})"


def repair_tail(folder: Path) -> str | None:
    """Make events.jsonl end with a whole line, for `raceday resume` to append after it.

    A last line cut short by a killed process (no newline, not valid JSON) is taken back and
    kept aside in `events.jsonl.torn`; a whole last line missing only its newline gets one.
    Returns what was done, or None when the file already ended whole."""
    path = folder / EVENTS_FILE
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return None
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    try:
        json.loads(tail)
    except ValueError:
        (folder / (EVENTS_FILE + ".torn")).write_bytes(tail)
        with path.open("r+b") as f:
            f.truncate(cut)
        return "the last line was cut short by the crash; it is kept in events.jsonl.torn"
    with path.open("ab") as f:
        f.write(b"\n")
    return None


@frozen
class ReadLog(Value):
    """Events read back, with a warning when the last line was cut short."""

    events: tuple[Event, ...]
    warning: str | None = None

    @property
    def start(self) -> SessionStart | None:
        first = self.events[0] if self.events else None
        return first if isinstance(first, SessionStart) else None


_JSON_SPACE = " \t\r"
"""What JSON calls whitespace on a line (besides the newline that ends it)."""


def read_events(folder: Path) -> ReadLog:
    """Read and validate a session's events (see the module's docstring)."""
    path = folder / EVENTS_FILE if folder.is_dir() else folder
    try:
        data = read_bytes(path, MAX_TRANSCRIPT_BYTES)
    except FileNotFoundError:
        raise TranscriptError([f"{path}: no such transcript (expected {EVENTS_FILE})"]) from None
    except UnreadableText as exc:
        raise TranscriptError([f"{path}: {exc.reason}"]) from None
    # one event a line, split on newlines only (splitlines() would also split inside a line
    # on characters JSON may leave raw, and call a line of control characters blank)
    lines = data.decode("utf-8", errors="replace").split("\n")
    last = max((n for n, line in enumerate(lines, start=1) if line.strip(_JSON_SPACE)),
               default=0)
    events: list[Event] = []
    warning = None
    length: int | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip(_JSON_SPACE):
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except RecursionError:
            raise TranscriptError([f"{where}: not a valid event: nested too deeply"]) from None
        except ValueError as exc:
            if number == last and events:  # a cut first line leaves nothing to read
                warning = f"{where}: last line cut short (session interrupted?); ignored"
                break
            raise TranscriptError([f"{where}: not a valid event: {exc}"]) from None
        try:
            if not events and isinstance(record, dict):
                _check_version(record.get("schema", 1))
            event = from_record(record)
            if not events:
                length = _check_start(event)
            check_base(event, event.kind, length)
        except RecursionError:
            raise TranscriptError([f"{where}: not a valid event: nested too deeply"]) from None
        except EventError as exc:
            raise TranscriptError([f"{where}: not a valid event: {exc}"]) from None
        expected = len(events) + 1
        if event.seq != expected:
            problem = ("a duplicate" if event.seq < expected else "a gap before it")
            raise TranscriptError([f"{where}: seq {event.seq} where {expected} was expected "
                                   f"({problem}); the log is damaged"])
        events.append(event)
    return ReadLog(tuple(events), warning)


def _check_start(event: Event) -> int | None:
    if not isinstance(event, SessionStart):
        raise EventError(f"the first event must be session_start, not {event.kind}")
    return event.length_minutes


def _check_version(version: object) -> None:
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise EventError(f"transcript schema version {version!r} is not one this raceday reads "
                         f"(it reads {', '.join(map(str, READABLE_VERSIONS))}; it writes "
                         f"{SCHEMA_VERSION})")


def of_kind(events: Sequence[Event], kind: type[E]) -> Iterator[E]:
    """The events of one kind, in order, typed as that kind."""
    return (e for e in events if isinstance(e, kind))
