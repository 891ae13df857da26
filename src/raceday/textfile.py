"""Reading a text file a person named: an exercise, a world, a play script, a transcript.

A path can name anything: `/dev/zero` (endless), a FIFO (blocks), a folder, a 2 GB log. Each
is refused with one sentence before it is read, and a file is never read past its limit, so
a bad path costs neither memory nor time. Text must be UTF-8; the line of the first bad
byte is given, as an editor shows it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_TEXT_BYTES = 16 * 1024 * 1024
"""The largest exercise file, world SQL, briefing or play script raceday reads."""

MAX_TRANSCRIPT_BYTES = 1024 * 1024 * 1024
"""The largest events.jsonl raceday reads."""


class UnreadableText(Exception):
    """The file cannot be read as text; `line` is where the bad byte is (None: not about a line)."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def read_text(path: Path, limit: int | None = None) -> str:
    """The UTF-8 text of the regular file at `path`, at most `limit` bytes (MAX_TEXT_BYTES).

    Raises FileNotFoundError when nothing is there, UnreadableText for anything else.
    """
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UnreadableText(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}: {exc.reason})", line
        ) from None


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` (MAX_TEXT_BYTES); as read_text."""
    most = MAX_TEXT_BYTES if limit is None else limit
    try:
        # Look before opening: opening a FIFO would wait for a writer.
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableText(_kind(info.st_mode))
        if info.st_size > most:
            raise UnreadableText(_too_big(most))
        with open(path, "rb") as handle:
            data = handle.read(most + 1)  # a file that grew meanwhile (or was swapped): still capped
    except (FileNotFoundError, UnreadableText):
        raise
    except OSError as exc:
        raise UnreadableText(f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > most:
        raise UnreadableText(_too_big(most))
    return data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        what = "a folder"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        what = "a device"
    elif stat.S_ISFIFO(mode):
        what = "a pipe"
    elif stat.S_ISSOCK(mode):
        what = "a socket"
    else:
        what = "not a file"
    return f"not a regular file ({what})"


def _too_big(most: int) -> str:
    return f"larger than {most / (1024 * 1024):,.0f} MB, too large to be one"
