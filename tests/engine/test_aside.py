"""A call made in a forked child gives the answer the same call gives here, whatever happens
to the child: it fails, dies or cannot be forked, and the call is made here instead."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from raceday.engine import aside
from raceday.engine.aside import Aside, Chain

FORKS = hasattr(os, "fork") and aside._cores() >= 2
pytestmark = pytest.mark.skipif(not FORKS, reason="needs os.fork and two cores")


@pytest.fixture(autouse=True)
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """On, whatever an earlier test in this process did (a team host switches it off)."""
    monkeypatch.setattr(aside, "_enabled", [True])

HERE = os.getpid()


def where() -> tuple[str, int]:
    return ("answer", os.getpid())


def test_the_answer_is_worked_out_in_a_child() -> None:
    started = Aside(where)
    assert started.forked
    text, pid = started.result()
    assert text == "answer" and pid != HERE


def test_a_child_that_raises_is_answered_here() -> None:
    made_here: list[bool] = []

    def call() -> tuple[str, int]:
        if os.getpid() != HERE:
            raise RuntimeError("a fault only the child meets")
        return where()

    assert Aside(call, before_here=lambda: made_here.append(True)).result() == ("answer", HERE)
    assert made_here == [True]  # the caller cleaned up after the child first


def test_a_child_that_dies_is_answered_here() -> None:
    def call() -> tuple[str, int]:
        if os.getpid() != HERE:
            os._exit(3)
        return where()

    assert Aside(call).result() == ("answer", HERE)


def test_an_answer_that_cannot_be_sent_is_made_here() -> None:
    def call() -> object:
        if os.getpid() != HERE:
            return lambda: None  # cannot be pickled
        return "made here"

    assert Aside(call).result() == "made here"


def test_a_discarded_child_is_stopped() -> None:
    def call() -> None:
        time.sleep(30)

    started = Aside(call)
    child = started._pid
    assert child is not None
    started.discard()
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)


def test_switched_off_the_call_is_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "_enabled", [True])
    aside.set_enabled(False)
    started = Aside(where)
    assert not started.forked
    assert started.result() == ("answer", HERE)


def test_a_child_finishes_its_call_when_the_terminal_closes(tmp_path: Path) -> None:
    """SIGHUP (a terminal closed, sent to the whole group) does not stop a child half-way:
    it finishes, so it removes its scratch folder and keeps what it worked out."""
    inside = tmp_path / "inside"

    def call() -> tuple[str, int]:
        inside.touch()
        time.sleep(0.5)
        return where()

    started = Aside(call)
    assert started._pid is not None
    deadline = time.monotonic() + 30
    while not inside.exists():  # the child is inside its call
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(started._pid, signal.SIGHUP)
    text, pid = started.result()
    assert text == "answer" and pid != HERE  # the child's answer, not one made here


# -- a chain: several calls in one child, each answer sent as it is made ------------------------


def test_a_chain_answers_each_call_in_one_child() -> None:
    chain = Chain([lambda n=n: (n, os.getpid()) for n in range(4)])  # type: ignore[misc]
    answers = [chain.child_answer(n) for n in range(4)]
    assert [a[0][0] for a in answers if a is not None] == [0, 1, 2, 3]
    pids = {a[0][1] for a in answers if a is not None}
    assert len(pids) == 1 and HERE not in pids
    assert chain._pid is None  # every answer read: the child is reaped


def test_a_chains_perhaps_needed_calls_take_only_a_core_nothing_else_wants() -> None:
    """The calls from `perhaps_from` on (the variant's nights) run at the lowest priority,
    the ones before at this process's own."""
    chain = Chain([lambda: os.nice(0) for _ in range(3)], perhaps_from=1)
    answers = [chain.child_answer(n) for n in range(3)]
    own = os.nice(0)
    assert answers == [(own,), (19,), (19,)]


def test_a_chain_sends_an_answer_before_the_next_call_ends(tmp_path: Path) -> None:
    """The first answer is not held back by the calls after it: the second call waits for a
    file this process makes only once it has the first answer."""
    told = tmp_path / "told"

    def second() -> str:
        deadline = time.monotonic() + 20
        while not told.exists():
            if time.monotonic() > deadline:
                return "never told"
            time.sleep(0.01)
        return "told"

    chain: Chain[str] = Chain([lambda: "first", second])
    assert chain.child_answer(0) == ("first",)
    told.touch()
    assert chain.child_answer(1) == ("told",)


def test_a_chain_call_that_fails_is_left_to_the_caller_and_the_rest_go_on() -> None:
    def fails() -> str:
        raise RuntimeError("only this one")

    chain: Chain[str] = Chain([lambda: "a", fails, lambda: "c"])
    assert [chain.child_answer(n) for n in range(3)] == [("a",), None, ("c",)]


def test_a_chain_whose_child_dies_gives_what_it_sent() -> None:
    chain: Chain[str] = Chain([lambda: "a", lambda: os._exit(9), lambda: "c"])
    assert chain.child_answer(2) is None  # asked first for the last: waits, finds the end
    assert chain.child_answer(0) == ("a",)
    assert chain.child_answer(1) is None


def test_a_discarded_chain_is_stopped() -> None:
    chain: Chain[None] = Chain([lambda: time.sleep(30)])
    child = chain._pid
    assert child is not None
    chain.discard()
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)
    assert chain.child_answer(0) is None


def test_a_chain_is_read_only_by_the_process_that_forked_it() -> None:
    chain: Chain[str] = Chain([lambda: "a"])
    in_another = Aside(lambda: chain.child_answer(0))  # a later child forked from here
    assert in_another.forked
    assert in_another.result() is None  # it was told nothing, and took nothing
    assert chain.child_answer(0) == ("a",)


def test_a_call_the_child_has_not_begun_can_be_taken_over(tmp_path: Path) -> None:
    """This process makes call 2 itself while the child is still in call 1: the child skips
    call 2, and call 1, begun, stays the child's."""
    inside, told, made = tmp_path / "inside", tmp_path / "told", tmp_path / "made"

    def second() -> str:
        inside.touch()
        deadline = time.monotonic() + 20
        while not told.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return "second"

    def third() -> str:
        made.touch()  # only if the child made it
        return "third"

    chain: Chain[str] = Chain([lambda: "first", second, third])
    assert chain.child_answer(0) == ("first",)
    deadline = time.monotonic() + 20
    while not inside.exists():  # the child is in call 1
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not chain.take_over(1)  # begun: the child's
    assert chain.take_over(2)
    told.touch()
    assert chain.child_answer(1) == ("second",)
    assert chain.child_answer(2) is None  # skipped: this process makes it
    assert not made.exists()
    assert chain._pid is None  # every answer read: reaped, its claims removed
