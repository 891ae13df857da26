"""What a browser may ask of `raceday serve`, and the processes it keeps in hand.

textual-serve trusts its browser: a message of any size is read (a 3 MB paste kept a child
at 100% CPU), a resize of any size is passed on (10000x10000 sent 402 MB in 4 s), a
malformed message ends in a traceback, `/static/` lists its folder, and a child that does
not quit when asked outlives its browser and the server. Here a message is at most
MAX_MESSAGE_BYTES, a screen at most MAX_COLUMNS x MAX_ROWS, anything malformed is one line,
and each child runs in a process group of its own that is ended, surely, when its browser
goes or the server stops.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import signal
from typing import Any

from raceday.parent_watch import PARENT_VARIABLE

_log = logging.getLogger("raceday.serve")

MAX_MESSAGE_BYTES = 64 * 1024
"""A browser's largest message: a long paste, well past any statement typed by hand."""
MAX_COLUMNS, MAX_ROWS = 400, 150
"""The largest screen a browser may ask for (a 4K display at a small font is about 380x110)."""
QUIT_GRACE_S = 2.0
"""How long a child has to quit when asked, before it is ended."""
KILL_GRACE_S = 1.0
"""How long a child has to end after SIGTERM, before SIGKILL."""
ENDING_WAIT_S = 10.0
"""How long a child's screen may be gone before it writes its last line (its stderr silent
meanwhile): the seat closed with its host says why only once its app has shut down, which
took more than 2 s on a loaded machine. A child asked to quit is ended sooner than this."""
ENVELOPES = ("stdin", "resize", "ping", "blur", "focus")


class Refused(ValueError):
    """A browser's message that no textual-serve page sends (one line says what)."""


def screen_size(width: object, height: object) -> tuple[int, int]:
    """A browser's screen, each side between 1 and its bound."""
    return (_bounded(width, 80, MAX_COLUMNS), _bounded(height, 24, MAX_ROWS))


def _bounded(value: object, default: int, most: int) -> int:
    try:
        number: int = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return default
    return max(1, min(number, most))


def envelope(text: str) -> tuple[str, Any]:
    """`["kind", data]` as the page sends it, or Refused."""
    if len(text) > MAX_MESSAGE_BYTES:
        raise Refused(f"a message of {len(text)} characters (at most {MAX_MESSAGE_BYTES})")
    try:
        value = json.loads(text)
    except ValueError:
        raise Refused("a message that is not JSON") from None
    if (not isinstance(value, list) or not value or not isinstance(value[0], str)
            or value[0] not in ENVELOPES):
        raise Refused("a message that is not one the page sends")
    data = value[1] if len(value) > 1 else None
    if value[0] == "stdin" and not isinstance(data, str):
        raise Refused("keys that are not text")
    if value[0] == "resize" and not isinstance(data, dict):
        raise Refused("a resize without a size")
    return value[0], data


async def end_group(process: asyncio.subprocess.Process) -> None:
    """End a child and everything it started: SIGTERM to its group, then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        if process.returncode is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(process.wait(), grace)
        except TimeoutError:
            continue


def end_group_now(pid: int) -> None:
    """SIGKILL a child's group at once (the server is stopping; nobody waits for it)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def open_child(command: str, environment: dict[str, str]) -> asyncio.subprocess.Process:
    """A browser's process, in a session (and group) of its own, with no shell between; it
    dies with the server however the server dies (raceday/parent_watch.py)."""
    environment = {**environment, PARENT_VARIABLE: str(os.getpid())}
    return await asyncio.create_subprocess_exec(
        *shlex.split(command), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=environment, start_new_session=True)


async def unread(stream: asyncio.StreamReader | None, quiet_s: float) -> bytes:
    """What the child wrote to `stream` that nobody read, to its end (or `quiet_s` of
    silence). textual-serve stops reading a child's stderr the moment its stdout ends, so the
    line a child writes as it exits (a browser's seat closed with its host) was printed only
    when the server's loop happened to read it first."""
    if stream is None:
        return b""
    rest = bytearray()
    while True:
        try:
            chunk = await asyncio.wait_for(stream.read(64 * 1024), quiet_s)
        except (TimeoutError, ConnectionError, ValueError):
            break
        if not chunk:
            break
        rest += chunk
    return bytes(rest)


def refused_line(peer: str, why: Refused) -> str:
    return f"raceday serve: a browser ({peer}) was disconnected: it sent {why}"
