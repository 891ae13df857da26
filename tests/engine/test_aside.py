"""A call made in a forked child gives the answer the same call gives here, whatever happens
to the child: it fails, dies or cannot be forked, and the call is made here instead."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from raceday.engine import aside
from raceday.engine.aside import Aside

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
