"""Text from players and files made visible and inert before it reaches a terminal or a file.

SQL, result values, error messages (SQLite copies data into some), names, notes and exercise
titles can carry ESC, OSC (window title, clipboard), CSI (clear screen) and other controls.
There is one rule, `inert`: each control becomes a visible stand-in (ESC reads `␛`), so it is
seen and never obeyed. It is applied where text leaves raceday, so a new screen or command
cannot forget it: the TUI's draw edge (`raceday.tui.edge`), every printed line
(`InertStream`, `raceday.console`), every debrief format and every JSON raceday writes
(`json_text`, which escapes what `json.dumps` leaves raw: DEL, C1 and the bidi controls).
"""

from __future__ import annotations

import io
import re
from typing import Any, TextIO

# C0 controls and DEL have Unicode "control pictures"; C1 controls, bidi overrides and other
# format characters that reorder or hide text are shown by their code point.
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
_CONTROL_ONE_LINE = re.compile(_CONTROL.pattern[:1] + "\n\t" + _CONTROL.pattern[1:])
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def has_controls(text: str, *, one_line: bool = False) -> bool:
    """Does `text` hold anything `inert` would replace (newlines and tabs aside, unless
    `one_line`)?"""
    return (_CONTROL_ONE_LINE if one_line else _CONTROL).search(text) is not None


def drawn(text: str) -> str:
    """The rule where a cell's width is already decided (a line laid out for the screen):
    a control takes no cell, so it is left out; a lone surrogate took one, so it reads `�`.
    Text shown through a widget was made `inert` (visible) before it was laid out; this is
    the last guard, for text that was not."""
    return _CONTROL_ONE_LINE.sub(lambda m: "\ufffd" if _SURROGATE.match(m.group()) else "", text)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps` (readable UTF-8) with every control escaped, C1 and DEL too.

    `json.dumps` escapes C0 alone; U+009B (an 8-bit CSI) or U+202E would otherwise reach a
    terminal that shows the file. The escapes are JSON's own, so a reader gets the same value.
    """
    key = tuple(options.items())
    encode = _ENCODERS.get(key)
    if encode is None:
        import json  # not at import: `raceday --version` and `play` start without it

        encode = _ENCODERS[key] = json.JSONEncoder(ensure_ascii=False, **options).encode
    return _CONTROL.sub(_escape, encode(value))


_ENCODERS: dict[tuple[tuple[str, Any], ...], Any] = {}
"""One encoder per set of options, made once: `json.dumps` makes a new one for every call
with options, a third of the time of a transcript's line."""


class InertStream(io.TextIOBase):
    """A text stream that writes everything through `inert`: raceday's printed lines.

    `raw` is the stream underneath, for a console that cleans its own text (its colours are
    escape codes raceday wrote, not a player)."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(inert(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)
