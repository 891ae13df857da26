"""The append-only event log of a session: `events.jsonl`.

Each event is written and flushed before anyone is told its outcome, so a crash loses
nothing that a player saw. Reading tolerates a torn last line (a killed process) and says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from raceday.errors import TranscriptError
from raceday.textfile import MAX_TRANSCRIPT_BYTES, UnreadableText, read_bytes

EVENTS_FILE = "events.jsonl"
# What json.dumps(record, ensure_ascii=False, default=str) uses, built once, not per event.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


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

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        self._seq += 1
        record = {"seq": self._seq, **event}
        record.setdefault("wall_time", datetime.now(UTC).isoformat(timespec="milliseconds"))
        self._file.write(_ENCODER.encode(record) + "\n")
        self._file.flush()
        return record

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


@dataclass(frozen=True)
class ReadLog:
    """Events read back, with a warning when the last line was cut short."""

    events: tuple[dict[str, Any], ...]
    warning: str | None = None


def read_events(folder: Path) -> ReadLog:
    """Read a session's events; a torn final line is dropped with a warning, not an error."""
    path = folder / EVENTS_FILE if folder.is_dir() else folder
    try:
        data = read_bytes(path, MAX_TRANSCRIPT_BYTES)
    except FileNotFoundError:
        raise TranscriptError([f"{path}: no such transcript (expected {EVENTS_FILE})"]) from None
    except UnreadableText as exc:
        raise TranscriptError([f"{path}: {exc.reason}"]) from None
    events: list[dict[str, Any]] = []
    warning = None
    lines = data.decode("utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            if not isinstance(event, dict) or "kind" not in event:
                raise ValueError("not an event object")
        except ValueError as exc:
            if number == len(lines):
                warning = f"{path}:{number}: last line cut short (session interrupted?); ignored"
                break
            raise TranscriptError([f"{path}:{number}: not a valid event: {exc}"]) from None
        events.append(event)
    return ReadLog(tuple(events), warning)


def iter_kind(events: tuple[dict[str, Any], ...], kind: str) -> Iterator[dict[str, Any]]:
    return (e for e in events if e.get("kind") == kind)
