"""Clock times cross midnight; durations read the way people write them."""

from __future__ import annotations

from datetime import datetime

import pytest

from raceday.exercise.times import (
    format_duration,
    format_time,
    parse_duration,
    parse_hhmm,
    parse_time,
)

NIGHT = datetime(2025, 10, 19, 23, 0)


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("23:00", 0), ("23:48", 48), ("00:00", 60), ("02:40", 220), ("22:59", 1439)],
)
def test_time_is_the_next_time_the_clock_shows_it(text: str, minutes: int) -> None:
    assert parse_time(text, NIGHT) == minutes
    assert parse_time(text, 23 * 60) == minutes


def test_time_after_a_later_moment() -> None:
    assert parse_time("23:50", NIGHT, after=60) == 50 + 1440
    assert parse_time("00:30", NIGHT, after=60) == 90
    assert parse_time("00:00", NIGHT, after=60) == 60


@pytest.mark.parametrize("text", ["24:00", "12:60", "noon", "1230", "", "12:5", "-1:00"])
def test_bad_times(text: str) -> None:
    with pytest.raises(ValueError):
        parse_hhmm(text)


def test_single_digit_hours() -> None:
    assert parse_hhmm("9:05") == 545


@pytest.mark.parametrize(
    ("value", "minutes"),
    [("10m", 10), ("2h", 120), ("1h30m", 90), (45, 45), ("45", 45), ("0m", 0), (" 2h 5m ", 125)],
)
def test_durations(value: str | int, minutes: int) -> None:
    assert parse_duration(value) == minutes


@pytest.mark.parametrize("value", ["", "m", "h", "1d", "10 minutes", "1m30h", -5, True, "1.5h"])
def test_bad_durations(value: str | int) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


def test_format_time_wraps_past_midnight() -> None:
    assert format_time(0, NIGHT) == "23:00"
    assert format_time(48, NIGHT) == "23:48"
    assert format_time(220, NIGHT) == "02:40"
    assert format_time(1440 + 5, NIGHT) == "23:05"
    assert format_time(5, 9 * 60) == "09:05"


def test_round_trip() -> None:
    for minutes in range(0, 3 * 1440, 7):
        assert parse_time(format_time(minutes, NIGHT), NIGHT, after=minutes) == minutes


def test_format_duration() -> None:
    assert [format_duration(m) for m in (0, 45, 120, 157, -10)] == [
        "0m",
        "45m",
        "2h",
        "2h37m",
        "-10m",
    ]
    assert all(parse_duration(format_duration(m)) == m for m in range(0, 500))
