"""Clock times and durations as exercises write them, and back.

Exercises write times as the clock shows them ("23:48") because that is how the night is
remembered; the engine counts whole minutes since the clock's start, because that is easy to
compare. A written time means the next moment the clock shows it (at or after a reference
moment), so a night from "23:00" to "02:40" crosses midnight without anyone writing a date.
"""

from __future__ import annotations

import re
from datetime import datetime

MINUTES_PER_DAY = 24 * 60

_HHMM = re.compile(r"(\d{1,2}):(\d{2})")
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?")


def parse_hhmm(text: str) -> int:
    """Minutes after midnight of "HH:MM" (00:00 to 23:59); ValueError if it is not one."""
    match = _HHMM.fullmatch(text.strip())
    if not match:
        raise ValueError(f'"{text}" is not a time "HH:MM"')
    hours, minutes = int(match.group(1)), int(match.group(2))
    if hours > 23 or minutes > 59:
        raise ValueError(f'"{text}" is not a time of day (00:00 to 23:59)')
    return hours * 60 + minutes


def _minute_of_day(start: datetime | int) -> int:
    if isinstance(start, datetime):
        return start.hour * 60 + start.minute
    return start % MINUTES_PER_DAY


def parse_time(text: str, start: datetime | int, after: int = 0) -> int:
    """Minutes since `start` of the first moment at or after `after` the clock shows `text`.

    `start` is the clock's start (a datetime, or minutes after midnight); `after` is in
    minutes since the start. The result is in [after, after + 1440).
    """
    target = parse_hhmm(text)
    now_of_day = (_minute_of_day(start) + after) % MINUTES_PER_DAY
    return after + (target - now_of_day) % MINUTES_PER_DAY


def parse_duration(value: str | int) -> int:
    """Minutes in "10m", "2h", "1h30m" or a whole number of minutes; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is not a duration (negative)")
        return value
    text = value.strip().replace(" ", "")
    if text.isdigit():
        return int(text)
    match = _DURATION.fullmatch(text)
    if not text or not match or not (match.group(1) or match.group(2)):
        raise ValueError(f'"{value}" is not a duration (expected "10m", "2h", "1h30m" or minutes)')
    return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)


def format_time(minutes: int, start: datetime | int) -> str:
    """The clock's "HH:MM" `minutes` after `start` (wrapping past midnight)."""
    of_day = (_minute_of_day(start) + minutes) % MINUTES_PER_DAY
    return f"{of_day // 60:02d}:{of_day % 60:02d}"


def format_duration(minutes: int) -> str:
    """A duration as exercises write it: "45m", "2h", "2h37m"."""
    sign = "-" if minutes < 0 else ""
    hours, rest = divmod(abs(minutes), 60)
    if hours and rest:
        return f"{sign}{hours}h{rest}m"
    if hours:
        return f"{sign}{hours}h"
    return f"{sign}{rest}m"
