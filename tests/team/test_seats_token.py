"""A seat's token is pasted after `--token`: it must never read as an option."""

from __future__ import annotations

from raceday.team.seats import new_token


def test_no_token_starts_with_a_dash() -> None:
    assert not any(new_token().startswith("-") for _ in range(2_000))

