"""Rich renderables drawn once, at a known width, in a worker: Markdown's cost paid off the
event loop and once, however often the screen asks for it (a Static holding Markdown renders
it twice, once for its height and once to draw it)."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment


class Prerendered:
    """Segments rendered once (in a worker) and drawn as they are."""

    def __init__(self, segments: list[Segment]) -> None:
        self.segments = segments

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.segments
