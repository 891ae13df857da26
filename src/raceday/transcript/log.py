"""The append-only event log of a session: `events.jsonl`.

Each event is written and flushed before anyone is told its outcome, so a crash loses
nothing that a player saw. Reading validates every line once, here, at the edge: what comes
back is typed events in order, or one line naming what is wrong and where. A torn last line
(a killed process) is dropped with a warning, not an error.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from raceday.errors import TranscriptError
from raceday.textfile import MAX_TRANSCRIPT_BYTES, UnreadableText, read_bytes
from raceday.transcript.events import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    Event,
    EventError,
    SessionStart,
    check_base,
    from_record,
    to_json_line,
)

EVENTS_FILE = "events.jsonl"
E = TypeVar("E", bound=Event)


def session_folder(root: Path, exercise_id: str, now: datetime | None = None) -> Path:
    """A new folder `<root>/<UTC timestamp>-<exercise id>/`, never reusing an existing one."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    root.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        folder = root / (f"{stamp}-{exercise_id}" if n == 1 else f"{stamp}-{exercise_id}-{n}")
        try:
            folder.mkdir()  # atomic: of two sessions started in the same second, one gets it
            return folder
        except FileExistsError:
            n += 1


class EventLog:
    """Writes events with `seq` 1, 2, 3 … and no gaps."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / EVENTS_FILE
        self._file = self.path.open("a", encoding="utf-8")
        self._seq = 0

    def append(self, event: E) -> E:
        """Number and time-stamp the event, write it, flush it, and give it back."""
        wall = event.wall_time or datetime.now(UTC).isoformat(timespec="milliseconds")
        record = dataclasses.replace(event, seq=self._seq + 1, wall_time=wall)
        line = to_json_line(record) + "\n"  # encoded whole before the number is taken
        self._file.write(line)
        self._file.flush()
        self._seq += 1
        return record

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


@dataclass(frozen=True)
class ReadLog:
    """Events read back, with a warning when the last line was cut short."""

    events: tuple[Event, ...]
    warning: str | None = None

    @property
    def start(self) -> SessionStart | None:
        first = self.events[0] if self.events else None
        return first if isinstance(first, SessionStart) else None


def read_events(folder: Path) -> ReadLog:
    """Read and validate a session's events (see the module's docstring)."""
    path = folder / EVENTS_FILE if folder.is_dir() else folder
    try:
        data = read_bytes(path, MAX_TRANSCRIPT_BYTES)
    except FileNotFoundError:
        raise TranscriptError([f"{path}: no such transcript (expected {EVENTS_FILE})"]) from None
    except UnreadableText as exc:
        raise TranscriptError([f"{path}: {exc.reason}"]) from None
    lines = data.decode("utf-8", errors="replace").splitlines()
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    events: list[Event] = []
    warning = None
    length: int | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except RecursionError:
            raise TranscriptError([f"{where}: not a valid event: nested too deeply"]) from None
        except ValueError as exc:
            if number == last:
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
