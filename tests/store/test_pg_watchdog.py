"""The PostgreSQL store's client-side watchdog: one thread cancels a statement the server
did not stop by its deadline, and leaves alone one that finished."""

from __future__ import annotations

import threading
import time

from raceday.store.postgres.watchdog import Watchdog


def test_a_statement_past_its_deadline_is_cancelled_and_a_finished_one_is_not() -> None:
    dog = Watchdog()
    cancelled: list[str] = []
    stuck = threading.Event()
    with dog.watching(60, lambda: cancelled.append("quick")):
        pass  # finished long before its deadline
    def cancel_stuck() -> None:
        cancelled.append("stuck")
        stuck.set()

    with dog.watching(0.05, cancel_stuck):
        assert stuck.wait(5), "the watchdog never cancelled a statement past its deadline"
    time.sleep(0.1)
    assert cancelled == ["stuck"]


def test_many_statements_share_one_thread() -> None:
    dog = Watchdog()
    before = threading.active_count()
    for _ in range(200):
        with dog.watching(60, lambda: None):
            pass
    assert threading.active_count() <= before + 1
