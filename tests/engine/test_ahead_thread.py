"""The background thread that plays a PostgreSQL replay's nights while the players play: an
answer it made is taken, one it has not begun is left to the replay, one that failed is
played again, and at exit the night being played is stopped and its worlds dropped."""

from __future__ import annotations

import threading
from typing import Any

from raceday.engine.ahead_thread import AheadThread


class World:
    """Stands for a world a night opened: `interrupt` cancels its statement running, `close`
    makes its next statement fail."""

    def __init__(self) -> None:
        self.closed, self.interrupted = threading.Event(), threading.Event()

    def interrupt(self) -> None:
        self.interrupted.set()

    def close(self) -> None:
        self.closed.set()


def begun(started: threading.Event, answer: Any) -> Any:
    """A job that says when it has begun (a replay takes only what has)."""
    def job(made: list[Any]) -> Any:
        started.set()
        return answer
    return job


class Held:
    """A night that says when it has begun and goes on only when released."""

    def __init__(self, played: list[str], name: str) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.played, self.name = played, name

    def __call__(self, made: list[Any]) -> int:
        self.started.set()
        self.release.wait(5)
        self.played.append(self.name)
        return len(self.played)


def test_an_answer_made_ahead_is_taken_once() -> None:
    ahead = AheadThread()
    started = threading.Event()
    ahead.start("baseline", begun(started, {"empty-answer": (24, 3)}))
    assert started.wait(5)
    assert ahead.take("baseline") == (True, {"empty-answer": (24, 3)})
    assert ahead.take("baseline") == (False, None)  # taken: the next replay plays its own


def test_a_night_not_begun_is_left_to_the_replay_and_never_played() -> None:
    ahead = AheadThread()
    played: list[str] = []
    first = Held(played, "first")
    ahead.start("first", first)
    ahead.start("second", lambda made: played.append("second"))
    assert first.started.wait(5)
    assert ahead.take("second") == (False, None)  # still queued behind the first
    first.release.set()
    assert ahead.take("first")[0] is True  # being played: waited for
    assert played == ["first"]


def test_a_night_that_failed_ahead_is_played_again_by_the_replay() -> None:
    ahead = AheadThread()
    started = threading.Event()

    def fails(made: list[Any]) -> None:
        started.set()
        raise RuntimeError("the server went away")

    ahead.start("baseline", fails)
    assert started.wait(5)
    assert ahead.take("baseline") == (False, None)


def test_the_same_night_is_not_queued_twice() -> None:
    ahead = AheadThread()
    runs: list[str] = []
    once = Held(runs, "first")
    ahead.start("baseline", once)
    ahead.start("baseline", lambda made: runs.append("second"))
    assert once.started.wait(5)
    once.release.set()
    assert ahead.take("baseline") == (True, 1)
    assert runs == ["first"]


def test_stop_closes_the_world_being_played_and_plays_nothing_more() -> None:
    ahead = AheadThread()
    world = World()
    dropped, started = threading.Event(), threading.Event()
    played: list[str] = []

    def night(made: list[Any]) -> None:
        made.append(world)
        started.set()
        try:
            world.closed.wait(5)  # the night's next statement fails once its world closes
        finally:
            dropped.set()

    ahead.start("playing", night)
    ahead.start("queued", lambda made: played.append("queued"))
    assert started.wait(5)
    ahead.stop()
    assert world.closed.is_set() and dropped.is_set()
    assert played == []
    assert ahead.take("queued") == (False, None)



def test_a_night_between_its_worlds_at_stop_ends_when_it_opens_the_next() -> None:
    # a variant's night nobody will read, copying its world (pg_dump: nothing to cancel) when
    # the run exits: it opens the copy and ends there, rather than play the night through
    ahead = AheadThread()
    source, copy = World(), World()
    copying, copied = threading.Event(), threading.Event()
    dropped: list[World] = []
    went_on: list[str] = []

    def night(made: list[Any]) -> None:
        try:
            made.append(source)
            copying.set()
            copied.wait(5)
            made.append(copy)
            went_on.append("played the night")
        finally:
            dropped.extend(made)  # what the night drops, whatever happens

    ahead.start("variant", night)
    assert copying.wait(5)
    stopping = threading.Thread(target=ahead.stop)
    stopping.start()
    assert source.closed.wait(5) and source.interrupted.is_set()
    copied.set()
    stopping.join(5)
    assert not stopping.is_alive()
    assert went_on == []
    assert copy.closed.is_set() and copy.interrupted.is_set()
    assert dropped == [source, copy]


def test_after_a_stop_the_thread_plays_again() -> None:
    ahead = AheadThread()
    ahead.stop()
    started = threading.Event()
    ahead.start("baseline", begun(started, {"empty-answer": (24, 3)}))
    assert started.wait(5)
    assert ahead.take("baseline") == (True, {"empty-answer": (24, 3)})
