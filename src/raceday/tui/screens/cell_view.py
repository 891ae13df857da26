"""Enter on a result cell: its whole value over the screen, as Harlequin shows one.

The grid cuts a value to its column and shows a newline as `↵`; here a table's DDL reads as
it was written, a long line wraps, a number is given in full and a blob as a hex dump. The
value is player data: it is made `inert` (an ESC reads `␛`) and shown in a read-only
TextArea, which never reads markup (`[red]` stays `[red]`). Esc closes it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from raceday.inert import inert

BLOB_SHOWN = 64 * 1024
"""Bytes of a blob the hex dump shows; the rest is counted."""

CELL_HELP = """\
# A cell's whole value

| key | does |
|---|---|
| arrows, pgup / pgdn, home / end | move through the value |
| shift+arrows | select |
| ctrl+a | select everything |
| ctrl+c | copy the selection (everything, when nothing is selected) |
| Esc | back to the results |

NULL is shown as NULL (the line above the value says it is no value, not the text "NULL").
A blob is shown as a hex dump. Control characters in the value are shown, never obeyed (an
ESC reads ␛).
"""


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _hex_dump(data: bytes) -> str:
    lines = []
    for start in range(0, min(len(data), BLOB_SHOWN), 16):
        chunk = data[start:start + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{start:04x}  {hexes:<47}  {text}")
    if len(data) > BLOB_SHOWN:
        lines.append(f"… {len(data) - BLOB_SHOWN:,} more bytes")
    return "\n".join(lines)


def value_text(value: Any) -> tuple[str, str]:
    """A value as the cell view shows it, whole and inert, and a few words on what it is."""
    if value is None:
        return "NULL", "NULL: no value"
    if isinstance(value, bool):
        return str(value), "boolean"
    if isinstance(value, int):
        return str(value), "integer"
    if isinstance(value, float):
        return repr(value), "real"
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return _hex_dump(data), f"blob, {_plural(len(data), 'byte')}"
    if isinstance(value, str):
        about = f"text, {_plural(len(value), 'character')}"
        lines = value.count("\n") + (0 if value.endswith("\n") else 1)
        if lines > 1:
            about += f", {_plural(lines, 'line')}"
        return inert(value), about
    return inert(str(value)), inert(type(value).__name__, one_line=True)


class ValueArea(TextArea):
    """The value, read-only: moved through, selected and copied, never changed."""

    BINDINGS = [
        Binding("ctrl+a", "select_all", "Select all", show=False),
        Binding("ctrl+c", "copy", "Copy", show=False),
    ]

    def action_copy(self) -> None:
        """The selection, or with none, the whole value (as shown: controls as stand-ins)."""
        text = self.selected_text or self.text
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {_plural(len(text), 'character')}.", timeout=2)


class CellViewScreen(ModalScreen[None]):
    """One cell's value over the screen it was chosen on; Esc closes it."""

    DEFAULT_CSS = """
    CellViewScreen { align: center middle; background: $background 60%; }
    CellViewScreen > #cell-view {
        width: 100;
        max-width: 95%;
        height: auto;
        max-height: 95%;
        padding: 0 1;
        border: thick $accent;
        background: $surface;
    }
    CellViewScreen #cell-about { height: auto; color: $text-muted; margin-bottom: 1; }
    CellViewScreen #cell-value { height: auto; min-height: 3; max-height: 70vh; }
    CellViewScreen #cell-keys { height: auto; color: $text-muted; }
    """

    BINDINGS = [Binding("escape", "close", "Close")]
    HELP = CELL_HELP

    def __init__(self, value: Any, *, column: str, row: int, rows: int) -> None:
        super().__init__()
        self.value = value
        self.column = column
        self.row = row
        self.rows = rows

    def compose(self) -> ComposeResult:
        text, about = value_text(self.value)
        with Vertical(id="cell-view") as box:
            box.border_title = Text(inert(self.column, one_line=True))  # a name, not markup
            yield Static(Text.assemble(
                (inert(self.column, one_line=True), "bold"),
                f"  row {self.row + 1:,} of {self.rows:,}  ·  {about}"), id="cell-about")
            yield ValueArea(text, read_only=True, soft_wrap=True, show_line_numbers=False,
                            id="cell-value")
            yield Static("Esc closes · shift+arrows select · ctrl+c copies (all if nothing "
                         "is selected)", id="cell-keys")

    def on_mount(self) -> None:
        self.query_one(ValueArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def request_quit(self) -> None:
        """ctrl+q here: the view closes and the screen under it asks, as it would have."""
        stack = self.app.screen_stack
        below = getattr(stack[-2], "request_quit", None) if len(stack) > 1 else None
        self.dismiss(None)
        if below is not None:
            self.app.call_later(below)
        else:
            self.app.exit(0)
