"""What the briefing's first frame shows (title, summary, the clock's start and zone), read
from exercise.yaml without YAML, the exercise model or the loader.

`raceday play ID` draws its briefing before the exercise is loaded: the load (PyYAML, the
model's dataclasses, the world built and every statement compiled: about 30 ms) runs in a
worker right after the first frame. Only the plainest forms of the four values are read
here; anything else (escapes, anchors, tags, flow collections, a plain scalar over several
lines, a duplicate key) gives None, and the exercise is then loaded before the first frame,
as it always was. The loaded exercise is what the briefing shows from then on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.exercise import EXERCISE_FILE
from raceday.exercise.times import format_time, parse_hhmm

if TYPE_CHECKING:
    from raceday.exercise.model import Exercise

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?$")
_CHILD = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?$")
_BLOCK = re.compile(r"[>|][-+]?(?:[ \t]+#.*)?$")
_PLAIN = re.compile(r"[A-Za-z][^:#\x00-\x1f\x7f]*")
_NOT_TEXT = re.compile(r"(?i)(?:y|yes|n|no|true|false|on|off|null|nan|inf)")
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class BriefingHead:
    """The briefing's first frame: the bar and the title with the summary."""

    title: str
    summary: str  # its whitespace as shown: runs of it are one space
    start: str  # the clock's face at the start, "23:00"
    zone: str

    @classmethod
    def of(cls, exercise: Exercise) -> BriefingHead:
        clock = exercise.clock
        return cls(exercise.title, " ".join(exercise.summary.split()),
                   format_time(0, clock.start), clock.zone)


def _scalar(text: str) -> str | None:
    """A one-line scalar in its plainest forms; None for anything YAML may read otherwise."""
    text = text.strip()
    if text.startswith('"'):
        end = text.find('"', 1)
        if end < 0 or "\\" in text[:end] or not _rest_is_comment(text[end + 1:]):
            return None
        return text[1:end]
    if text.startswith("'"):
        match = re.match(r"'((?:[^']|'')*)'(.*)$", text)
        if match is None or not _rest_is_comment(match.group(2)):
            return None
        return match.group(1).replace("''", "'")
    plain = text.split(" #", 1)[0].rstrip()
    if not _PLAIN.fullmatch(plain) or _NOT_TEXT.fullmatch(plain):
        return None
    return plain


def _rest_is_comment(rest: str) -> bool:
    rest = rest.strip()
    return not rest or rest.startswith("#")


def _block(lines: list[str], after: int) -> tuple[str, int] | None:
    """A block scalar's words (folded or literal, its whitespace made single spaces) from the
    line after `after`; and the index of the line that ends it."""
    words: list[str] = []
    indent = 0
    index = after + 1
    while index < len(lines):
        line = lines[index]
        if line.strip():
            here = len(line) - len(line.lstrip(" "))
            if here == 0:
                break
            if indent == 0:
                indent = here
            elif here < indent:
                return None  # less indented, not at the margin: YAML may read it otherwise
            words.extend(line.split())
        index += 1
    return " ".join(words), index


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def read_head(path: Path) -> BriefingHead | None:
    """The first frame's values from the exercise at `path` (a folder or its file), or None."""
    file = path if path.is_file() else path / EXERCISE_FILE
    try:
        with open(file, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if len(data) > _MAX_BYTES or "\t" in text or "\r" in text or text.startswith("\ufeff"):
        return None
    lines = text.split("\n")
    found: dict[str, str] = {}
    clock: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        if _blank_or_comment(line) or line.startswith(" "):
            index += 1
            continue
        match = _KEY.match(line)
        if match is None:
            return None  # a document marker, a directive, a flow or sequence top level
        key, value = match.group(1), (match.group(2) or "").strip()
        if key in found or (key == "clock" and clock):
            return None
        if key == "clock":
            if value and not value.startswith("#"):
                return None
            index += 1
            indent = ""
            while index < len(lines) and (_blank_or_comment(lines[index])
                                          or lines[index].startswith(" ")):
                child = _CHILD.match(lines[index])
                if child is not None:
                    indent = indent or child.group(1)
                if child is not None and child.group(2) in ("start", "zone"):
                    if child.group(2) in clock or child.group(1) != indent:
                        return None
                    got = _scalar(child.group(3) or "")
                    if got is None:
                        return None
                    clock[child.group(2)] = got
                index += 1
            continue
        if key in ("title", "summary"):
            if key == "summary" and _BLOCK.match(value):
                block = _block(lines, index)
                if block is None:
                    return None
                found[key], index = block
                continue
            got = _scalar(value)
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if got is None or (following.startswith(" ") and not _blank_or_comment(following)):
                return None  # a scalar continued on the next line
            found[key] = got
        index += 1
    try:
        start = format_time(0, parse_hhmm(clock["start"]))
        return BriefingHead(found["title"], " ".join(found["summary"].split()), start,
                            clock.get("zone", ""))
    except (KeyError, ValueError):
        return None
