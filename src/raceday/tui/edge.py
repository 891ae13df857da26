"""The TUI's draw edge: no line reaches the terminal with a control character in its text.

Widgets show data `inert` (an ESC reads `␛`), but a new widget, a toast or a built-in one
fed a title could forget; so every update the compositor sends is looked over on its way
out, where geometry is already fixed: a control that reached a line (zero cells wide) is
left out by `drawn`, and a link carrying one is dropped. Textual's own escape codes are
written around the lines, never inside their text, so they pass untouched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.segment import Segment
from textual._compositor import ChopsUpdate, InlineUpdate, LayoutUpdate
from textual.strip import Strip

from raceday.inert import drawn, has_controls


def clean_strip(strip: Strip) -> Strip:
    """`strip` as it may be drawn: the same object when it is clean (the usual case)."""
    dirty = False
    for text, style, control in strip:
        if control is None and (has_controls(text, one_line=True)
                                or (style is not None and style.link
                                    and has_controls(style.link, one_line=True))):
            dirty = True
            break
    if not dirty:
        return strip
    segments = []
    for text, style, control in strip:
        if control is None:
            text = drawn(text)
            if style is not None and style.link and has_controls(style.link, one_line=True):
                style = style.update_link(None)
        segments.append(Segment(text, style, control))
    return Strip(segments, strip.cell_length)


def _line(strips: Iterable[Strip]) -> list[Strip]:
    return [clean_strip(s) for s in strips]


def _chops(chops: Mapping[int, Strip | None]) -> dict[int, Strip | None]:
    return {x: None if s is None else clean_strip(s) for x, s in chops.items()}


def clean_update(update: object) -> object:
    """The compositor's update with every line cleaned (other renderables pass as they are)."""
    if isinstance(update, LayoutUpdate):
        update.strips = [_line(line) for line in update.strips]
    elif isinstance(update, ChopsUpdate):
        update.chops = [_chops(line) for line in update.chops]
    elif isinstance(update, InlineUpdate):
        update.strips = _line(update.strips)
    return update
