"""`raceday play` is read by the play command's parser alone (a shortcut to the first screen):
what it is given, its help and its errors are what the whole parser makes of them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from raceday import cli

CASES = [
    [],
    ["play"],
    ["play", "dynamodb-dns-race"],
    ["play", "--mode", "team", "--pace", "live", "--length", "30", "x"],
    ["play", "--db", "postgresql://db/x", "--keep-world", "--transcripts", "t", "--speed", "2"],
    ["play", "--mod", "onboarding"],
    ["play", "-h"],
    ["play", "--mode", "bogus"],
    ["play", "--speed", "fast"],
    ["play", "one", "two"],
    ["play", "--version"],
]


def outcome(parse: Callable[[list[str]], argparse.Namespace], argv: list[str],
            capsys: pytest.CaptureFixture[str]) -> object:
    try:
        got: object = vars(parse(argv))
    except SystemExit as exc:
        got = exc.code
    return got, capsys.readouterr()


@pytest.mark.parametrize("argv", CASES, ids=lambda argv: " ".join(argv) or "(none)")
def test_play_reads_as_the_whole_parser_reads_it(argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    whole = outcome(cli._parser().parse_args, argv, capsys)
    assert outcome(cli._parse, argv, capsys) == whole
