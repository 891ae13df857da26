"""The one Rich console raceday prints through: its own colours pass, a player's controls
never do.

Rich writes the escape codes of raceday's styles itself; the text inside them (a monitor's
name, a title, SQL, an error) is made `inert` segment by segment, so a clipboard-writing
OSC 52 in a name is shown as `␛]52;…`, never obeyed. The console writes past `InertStream`
(whose rule would make Rich's own colours visible) because it has already cleaned its text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from rich.console import Console
from rich.segment import Segment

from raceday.inert import InertStream, has_controls, inert


def _clean(buffer: Iterable[Segment]) -> Iterable[Segment]:
    for segment in buffer:
        text, style, control = segment
        if control is not None:  # Rich's own cursor moves, never a player's text
            yield segment
            continue
        if style is not None and style.link and has_controls(style.link):
            style = style.update_link(None)
        yield Segment(inert(text) if has_controls(text) else text, style)


class InertConsole(Console):
    """A Rich console whose every printed character passed `inert`."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(_clean(buffer))

    @property
    def file(self) -> IO[str]:
        file = Console.file.fget(self)  # type: ignore[attr-defined]
        return file.raw if isinstance(file, InertStream) else file

    @file.setter
    def file(self, new_file: IO[str]) -> None:
        Console.file.fset(self, new_file)  # type: ignore[attr-defined]
