"""A read-only grid of result rows that renders only the lines on screen.

A statement can return a thousand rows. `DataTable` measures every cell of every row as it
is added and again when it is idle, which costs more than running the statement. This grid
turns each value into a string once, sizes the columns from those strings, and builds
strips for the visible lines only (the header stays on the first line).

A cell is cut to fit its column; the grid keeps the values themselves, and Enter on a cell
says which one was chosen (`CellChosen`: the results show it whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from raceday.inert import inert

MAX_COLUMN_WIDTH = 48
"""A column is never wider than this; longer values end in an ellipsis."""
_CONTROL = str.maketrans({"\n": "↵", "\r": "↵", "\t": " "})
_NULL = "NULL"


def cell_text(value: Any) -> str:
    """A value as one line of text: NULL, <n bytes>, or its str() with newlines and other
    control characters shown."""
    if value is None:
        return _NULL
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = str(value)
    if "\n" in text or "\r" in text or "\t" in text:
        text = text.translate(_CONTROL)
    return inert(text, one_line=True)  # a value can carry escape codes: shown, never obeyed


def _fit(text: str, width: int) -> str:
    """`text` in exactly `width` cells: cut with an ellipsis, or padded."""
    if text.isascii():
        if len(text) > width:
            return text[: width - 1] + "…"
        return text.ljust(width)
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


class ResultGrid(ScrollView, can_focus=True):
    """Rows under a sticky header; a row cursor, and focused, a cell cursor in it (← and →
    go from column to column); zebra stripes; numbers to the right."""

    COMPONENT_CLASSES = {
        "result-grid--header",
        "result-grid--even-row",
        "result-grid--cursor",
        "result-grid--cell-cursor",
        "result-grid--null",
    }

    DEFAULT_CSS = """
    ResultGrid {
        background: $surface;
        color: $foreground;
        & > .result-grid--header { text-style: bold; background: $panel; color: $foreground; }
        & > .result-grid--even-row { background: $surface-lighten-1 50%; }
        & > .result-grid--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
        }
        & > .result-grid--null { color: $text-muted; text-style: italic; }
        & > .result-grid--cell-cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("left", "column(-1)", "Left", show=False),
        Binding("right", "column(1)", "Right", show=False),
        Binding("enter", "choose", "Whole value"),
    ]

    @dataclass
    class CellChosen(Message):
        """Enter on a cell: its value (not the text the grid shows), column and row."""

        grid: ResultGrid
        row: int
        column: int
        value: Any

        @property
        def control(self) -> ResultGrid:
            return self.grid

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.columns: tuple[str, ...] = ()
        self._rows: Sequence[Sequence[Any]] = ()
        self._cells: list[list[str]] = []
        self._nulls: list[set[int]] = []
        self._widths: list[int] = []
        self._right: list[bool] = []
        self.cursor_row = 0
        self.cursor_column = 0

    # -- data ------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._cells)

    def cell(self, row: int, column: int) -> str:
        """The text a cell shows (before it is fitted to its column)."""
        return self._cells[row][column]

    def value(self, row: int, column: int) -> Any:
        """The value itself (None for NULL; "" past the end of a short row)."""
        values = self._rows[row]
        return values[column] if column < len(values) else ""

    def clear(self) -> None:
        self.show_rows((), ())

    def show_rows(self, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Replace everything: one pass turns each value into text and sizes the columns."""
        self.columns = tuple(str(c) for c in columns)
        count = len(self.columns)
        widths = [cell_len(c) for c in self.columns]
        numeric = [bool(rows)] * count
        cells: list[list[str]] = []
        nulls: list[set[int]] = []
        for row in rows:
            texts = [cell_text(v) for v in row[:count]]
            texts += [""] * (count - len(texts))
            empty: set[int] = set()
            for i, (value, text) in enumerate(zip(row, texts, strict=False)):
                if value is None:
                    empty.add(i)
                elif numeric[i] and not isinstance(value, int | float):
                    numeric[i] = False
                size = len(text) if text.isascii() else cell_len(text)
                if size > widths[i]:
                    widths[i] = size
            cells.append(texts)
            nulls.append(empty)
        self._rows = rows
        self._cells = cells
        self._nulls = nulls
        self._widths = [max(1, min(w, MAX_COLUMN_WIDTH)) for w in widths]
        self._right = numeric
        self.cursor_row = 0
        self.cursor_column = 0
        width = sum(w + 2 for w in self._widths)
        self.virtual_size = Size(width, len(cells) + 1 if count else 0)
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    # -- drawing ---------------------------------------------------------------------------

    def _line(self, texts: Sequence[str], base: Style, nulls: set[int] | None = None,
              right: Sequence[bool] = (), cell: int = -1) -> list[Segment]:
        null_style = base + self.get_component_rich_style("result-grid--null") if nulls else base
        segments: list[Segment] = []
        for i, (text, width) in enumerate(zip(texts, self._widths, strict=False)):
            fitted = _fit(text, width)
            if right and right[i] and len(text) <= width:
                fitted = text.rjust(width)
            style = null_style if nulls and i in nulls else base
            if i == cell:
                style += self.get_component_rich_style("result-grid--cell-cursor")
            segments.append(Segment(f" {fitted} ", style))
        return segments

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.rich_style
        if not self.columns:
            return Strip.blank(width, base)
        total = sum(w + 2 for w in self._widths)
        if y == 0:
            style = base + self.get_component_rich_style("result-grid--header")
            segments = self._line(self.columns, style)
        else:
            index = scroll_y + y - 1
            if index >= len(self._cells):
                return Strip.blank(width, base)
            style = base
            cell = -1
            if index == self.cursor_row:
                style = base + self.get_component_rich_style("result-grid--cursor")
                cell = self.cursor_column if self.has_focus else -1
            elif index % 2 == 0:
                style = base + self.get_component_rich_style("result-grid--even-row")
            segments = self._line(self._cells[index], style, self._nulls[index], self._right,
                                  cell)
        strip = Strip(segments, total)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    # -- moving ----------------------------------------------------------------------------

    def _show_cursor(self) -> None:
        visible = max(1, self.size.height - 1)
        top = self.scroll_offset.y
        if self.cursor_row < top:
            top = self.cursor_row
        elif self.cursor_row >= top + visible:
            top = self.cursor_row - visible + 1
        self.scroll_to(y=top, animate=False, immediate=True)
        self.refresh()

    def move_cursor(self, row: int) -> None:
        if not self._cells:
            return
        self.cursor_row = max(0, min(row, len(self._cells) - 1))
        self._show_cursor()

    def action_cursor(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self.size.height - 2))

    def action_edge(self, end: int) -> None:
        self.move_cursor(len(self._cells) - 1 if end else 0)

    def move_column(self, column: int) -> None:
        """The cell cursor to `column`, scrolled sideways into view (its start first)."""
        if not self._widths:
            return
        self.cursor_column = max(0, min(column, len(self._widths) - 1))
        start = sum(w + 2 for w in self._widths[: self.cursor_column])
        end = start + self._widths[self.cursor_column] + 2
        left = self.scroll_offset.x
        if start < left or end - start > self.size.width:
            left = start
        elif end > left + self.size.width:
            left = end - self.size.width
        self.scroll_to(x=left, animate=False, immediate=True)
        self.refresh()

    def action_column(self, step: int) -> None:
        self.move_column(self.cursor_column + step)

    def action_choose(self) -> None:
        """Enter: the cell under the cursor, to be shown whole."""
        if not self._cells or not self.columns:
            return
        row, column = self.cursor_row, self.cursor_column
        self.post_message(self.CellChosen(self, row, column, self.value(row, column)))

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on that cell (Enter then shows it whole)."""
        if not self._cells or event.y < 1:
            return
        row = self.scroll_offset.y + event.y - 1
        x = self.scroll_offset.x + event.x
        column, edge = 0, 0
        for i, width in enumerate(self._widths):
            edge += width + 2
            column = i
            if x < edge:
                break
        if row < len(self._cells):
            self.cursor_row = row
            self.move_column(column)
            self._show_cursor()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
