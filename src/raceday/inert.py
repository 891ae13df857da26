"""Text from players and files made visible and inert before it reaches a terminal.

SQL, result values, error messages (SQLite copies data into some), names, notes and exercise
titles can carry ESC, OSC (window title, clipboard), CSI (clear screen) and other controls.
Every path that shows such text to a person passes it through `inert` first: each control
becomes a visible stand-in (ESC reads `␛`), so it is seen and never obeyed.
"""

from __future__ import annotations

import re

# C0 controls and DEL have Unicode "control pictures"; C1 controls, bidi overrides and other
# format characters that reorder or hide text are shown by their code point.
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
_CONTROL_ONE_LINE = re.compile(_CONTROL.pattern[:1] + "\n\t" + _CONTROL.pattern[1:])


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return _PICTURES.get(code) or f"<U+{code:04X}>"


def inert(text: object, *, one_line: bool = False) -> str:
    """`text` with every control character replaced by a visible stand-in.

    Newlines and tabs are kept unless `one_line` (a table cell, a title, a status line), where
    they are shown too.
    """
    s = text if isinstance(text, str) else str(text)
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(_show, s)


def has_controls(text: str) -> bool:
    """Does `text` hold anything `inert` would replace (newlines and tabs aside)?"""
    return _CONTROL.search(text) is not None
