"""`collector.settle`: what the process holds is kept out of the collector's full walks, and
what it lets go of later is still freed at the next settle that collects."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from raceday.engine import collector


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_what_is_held_is_kept_out_of_the_walks() -> None:
    held = [_Node() for _ in range(100)]
    collector.settle()
    assert gc.get_freeze_count() >= len(held)


def test_what_is_let_go_after_a_settle_is_freed_by_the_next_that_collects() -> None:
    node = _Node()
    gone = weakref.ref(node)
    collector.settle()
    del node
    gc.collect()
    assert gone() is not None  # kept out of the walks: not freed by one
    collector.settle(collect=True)
    assert gone() is None
    assert gc.get_freeze_count() > 0  # and the rest kept out again
