"""No control byte from data reaches a terminal: `inert` shows them instead."""

from __future__ import annotations

import pytest

from raceday.inert import has_controls, inert

ATTACKS = {
    "window title (OSC 0)": "\x1b]0;pwned\x07",
    "clipboard (OSC 52)": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "clear screen (CSI)": "\x1b[2J\x1b[H",
    "C1 CSI": "\x9b2J",
    "bell and backspace": "ok\x07\x08\x08",
    "bidi override": "user\u202egnp.exe",
    "lone surrogate": "a\ud800b",
    "NUL": "a\x00b",
}


@pytest.mark.parametrize("text", ATTACKS.values(), ids=ATTACKS.keys())
def test_controls_are_shown_not_obeyed(text: str) -> None:
    out = inert(text)
    assert not has_controls(out)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in out)


def test_escape_reads_as_a_visible_sign() -> None:
    assert inert("\x1b[2J") == "\u241b[2J"
    assert inert("\x9b") == "<U+009B>"
    assert inert("a\u202eb") == "a<U+202E>b"


def test_ordinary_text_is_untouched() -> None:
    text = "SELECT name, 'é ✓ 東京' FROM endpoint\n\tWHERE x = 1 -- [bold]not markup[/]"
    assert inert(text) == text


def test_one_line_shows_newlines_and_tabs() -> None:
    assert inert("a\nb\tc", one_line=True) == "a\u240ab\u2409c"


def test_non_text_values_are_turned_into_text() -> None:
    assert inert(None) == "None" and inert(3.5) == "3.5" and inert(b"\x1b") == "b'\\x1b'"
