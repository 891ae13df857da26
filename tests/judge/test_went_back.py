"""A `went_back` harm: a value below the highest its key has had tonight, asked after every
write; the same rows asked again give the same answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from raceday.judge.harms import History


def test_a_value_below_its_highest_is_harm_until_it_is_back_up() -> None:
    history = History()
    assert history.went_back("stale", [("dns", 140), ("fips", 140)]) == []
    assert history.went_back("stale", [("dns", 145), ("fips", 140)]) == []
    assert history.went_back("stale", [("dns", 110), ("fips", 140)]) == [("dns", 110, 145)]
    # asked again with nothing written: the same answer, and 110 is no new high
    assert history.went_back("stale", [("dns", 110), ("fips", 140)]) == [("dns", 110, 145)]
    assert history.went_back("stale", [("dns", 145), ("fips", 140)]) == []
    assert history.went_back("stale", [("dns", 144), ("fips", 140)]) == [("dns", 144, 145)]


def test_the_same_rows_asked_again_answer_as_a_walk_would() -> None:
    """Against a history that walks every time (a fresh copy of the highs each time)."""
    asked: list[list[tuple[str, object]]] = [[("a", 1), ("b", 5)], [("a", 3), ("b", 2)], [("a", 3), ("b", 2)],
             [("a", 3), ("b", None)], [("a", 3), ("b", None)], [("a", 0), ("b", 9)],
             [("a", 0), ("b", 9)], [("a", "x"), ("b", 9)], [("a", "x"), ("b", 9)]]
    quick, walked = History(), History()
    for rows in asked:
        given: list[Sequence[Any]] = list(rows)
        expected = walked._compare("h", given)
        assert quick.went_back("h", given) == expected


def test_a_key_twice_in_one_answer_is_walked_each_time() -> None:
    """Its second value is compared with its first: asked again, the first is now the high."""
    history = History()
    assert history.went_back("h", [("a", 3), ("a", 5)]) == []
    assert history.went_back("h", [("a", 3), ("a", 5)]) == [("a", 3, 5)]


def test_harms_keep_their_own_highs() -> None:
    history = History()
    assert history.went_back("one", [("a", 5)]) == []
    assert history.went_back("two", [("a", 1)]) == []
    assert history.went_back("one", [("a", 1)]) == [("a", 1, 5)]
