"""Issue 59: `raceday review --help`, `transcript`, `check` and `play --pace` had no
description line, or arguments without help. Every command says what it does, and every
argument what it is."""

from __future__ import annotations

import argparse

import pytest

from raceday.cli import _parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_and_argument_says_what_it_is(name: str) -> None:
    command = _commands()[name]
    assert command.description, name
    bare = [a.dest for a in command._actions
            if not isinstance(a, argparse._HelpAction) and not a.help]
    assert bare == [], f"raceday {name}: {bare} have no help"
