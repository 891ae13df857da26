"""A PostgreSQL server with no connection left is waited for, a while: a session's end logs
in some thirty times (each replayed night's roles), and a replay that could not log in
credited no guard at all. Any other refusal is said at once. No server needed: psycopg's
login is stood in for, under the driver every login goes through (worlds and team sessions)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("psycopg")

from raceday.store.base import StoreError  # noqa: E402
from raceday.store.postgres import driver, world  # noqa: E402

FULL = ('connection failed: connection to server at "127.0.0.1", port 5432 failed: FATAL:  '
        'remaining connection slots are reserved for non-replication superuser connections')


class Logins:
    """psycopg's Connection.connect as a server that refuses the first `refusals` logins with `message`."""

    def __init__(self, refusals: int, message: str) -> None:
        self.refusals, self.message, self.tried = refusals, message, 0

    def __call__(self, dsn: str, **options: Any) -> Any:
        self.tried += 1
        if self.tried <= self.refusals:
            raise driver.Error(self.message)
        return f"connection {self.tried}"


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []
    monkeypatch.setattr("raceday.store.postgres.driver.time.sleep", pauses.append)
    return pauses


def test_a_full_server_is_waited_for(monkeypatch: pytest.MonkeyPatch,
                                     slept: list[float]) -> None:
    logins = Logins(3, FULL)
    monkeypatch.setattr(driver.Connection, "connect", logins)
    got: object = world.connect("postgresql://x")
    assert got == "connection 4"
    assert slept == [0.05, 0.1, 0.2]


def test_a_server_full_for_good_is_said_once_the_wait_is_over(
        monkeypatch: pytest.MonkeyPatch, slept: list[float]) -> None:
    monkeypatch.setattr(driver.Connection, "connect", Logins(10_000, FULL))
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL: .*remaining connection"):
        world.connect("postgresql://x")
    assert driver.FULL_WAIT_S <= sum(slept) < driver.FULL_WAIT_S + 1.0
    assert max(slept) == 1.0


def test_any_other_refusal_is_said_at_once(monkeypatch: pytest.MonkeyPatch,
                                           slept: list[float]) -> None:
    monkeypatch.setattr(driver.Connection, "connect", Logins(1, 'FATAL:  password authentication failed '
                                                      'for user "raceday"'))
    with pytest.raises(StoreError, match="password authentication failed"):
        world.connect("postgresql://x")
    assert slept == []
