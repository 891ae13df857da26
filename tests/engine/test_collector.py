"""The garbage collector is held off during a replay and back as it was afterwards; what the
process holds is kept out of its full walks (`settle`), and what it lets go of later is still
freed at the next settle that collects."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raceday.engine import collector


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_holds_the_collector_off_and_switches_it_back_on() -> None:
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():  # a replay inside a prepare, or two threads
            assert not gc.isenabled()
        assert not gc.isenabled(), "the inner block switched it on under the outer one"
    assert gc.isenabled()


def test_a_collector_switched_off_by_someone_else_stays_off() -> None:
    gc.disable()
    with collector.paused():
        pass
    assert not gc.isenabled()


def test_an_error_inside_still_switches_it_back_on() -> None:
    with pytest.raises(ZeroDivisionError), collector.paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_the_last_of_two_threads_to_leave_switches_it_back_on() -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collector.paused():
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(5)
    with collector.paused():
        pass
    assert not gc.isenabled(), "switched on while the other thread's replay still runs"
    leave.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_replay_plays_with_the_collector_off_and_leaves_it_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from raceday.engine import replay
    from raceday.engine.headless import open_session
    from raceday.engine.load import load_exercise

    exercise = load_exercise(Path(__file__).resolve().parents[2] / "exercises"
                             / "dynamodb-dns-race")
    session = open_session(exercise, (), tmp_path)
    seen: list[bool] = []
    real = replay.play_night

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(replay, "play_night", watched)
    event = session.replay()
    assert event.result is not None and seen
    assert not any(seen), "a night played with the collector on"
    assert gc.isenabled()


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
