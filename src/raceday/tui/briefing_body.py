"""The briefing's first screenful as it was last drawn, kept in raceday's cache folder so the
next `raceday play ID` shows it in its first frames, before the exercise is loaded and its
Markdown rendered (PyYAML, the loader and Rich's Markdown parser: about 300 ms of CPU).

A kept screenful is only a first look: the briefing renders its Markdown as always once the
exercise is loaded, and that rendering replaces it (the same lines, unless the file changed).
It is kept under a digest of exercise.yaml's bytes, the settings the text names (mode, pace,
speed), the width it was drawn at and the console's colours, with raceday's version: any of
them different is a miss, and a miss only means the body comes when it is rendered. Stored as
JSON (text and style strings), never as pickled objects: the cache folder is data, not code.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from raceday import __version__
from raceday.cache import cache_folder, write_atomically
from raceday.tui.briefing_head import exercise_bytes

if TYPE_CHECKING:
    from rich.segment import Segment

FORMAT = 1
"""The kept screenful's format: a change to what it holds starts every cache afresh."""

_STARTED = time.time()
"""When this process began (about): an exercise file written since may have been loaded before
the write, so what was rendered from it is not kept under its new bytes."""

MOST_BYTES = 512 * 1024
"""A kept file larger than this is not read (a screenful is a few kilobytes)."""


def _body_file(data: bytes, view: str, width: int) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(f"raceday {__version__} body {FORMAT}\n{view}\n{width}\n".encode())
    digest.update(data)
    return folder / "briefing-bodies" / f"{digest.hexdigest()}.json"


def read_body(path: Path, view: str, width: int) -> list[Segment] | None:
    """The screenful kept for the exercise at `path` (a folder or its file) drawn with `view`
    (the settings and colours, as one string) at `width` columns, or None."""
    data = exercise_bytes(path)
    kept = _body_file(data, view, width) if data is not None else None
    if kept is None:
        return None
    try:
        if kept.stat().st_size > MOST_BYTES:
            return None
        raw = json.loads(kept.read_bytes())
    except (OSError, ValueError):
        return None  # absent, unreadable or damaged: a miss
    if not isinstance(raw, list) or not all(
            isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], str) for item in raw):
        return None
    from rich.errors import StyleSyntaxError
    from rich.segment import Segment
    from rich.style import Style

    try:
        return [Segment(text, Style.parse(style) if style else None) for text, style in raw]
    except StyleSyntaxError:
        return None


def keep_body(source: Path, view: str, width: int, segments: list[Segment]) -> bool:
    """Keep `segments` (a screenful rendered from the exercise file `source`) for the next
    start; False when nothing was kept (no cache, the file written since this process began,
    a control segment, a write refused)."""
    if any(segment.control for segment in segments):
        return False  # a cursor move has no place in a kept page
    try:
        if source.stat().st_mtime >= _STARTED:
            return False
    except OSError:
        return False
    data = exercise_bytes(source)
    kept = _body_file(data, view, width) if data is not None else None
    if kept is None:
        return False
    return write_atomically(kept, json.dumps(
        [[segment.text, str(segment.style) if segment.style else ""] for segment in segments]))
