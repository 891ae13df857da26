"""The facilitator console's own dialogs: a line of text (an observer note, a ruling's note)
and the join commands."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class NoteDialog(ModalScreen[str | None]):
    """One line of text: an observer note for the debrief."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Input(placeholder="Enter saves it", id="note-text")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class JoinDialog(ModalScreen[None]):
    """The join commands, one a line and never wrapped (a wrapped command pasted into a shell
    breaks): wider than the screen, they scroll sideways; join.txt holds them too."""

    BINDINGS = [Binding("escape,enter,q", "close", "Close")]
    DEFAULT_CSS = """
    JoinDialog #join-box { width: 100%; height: auto; max-height: 90%; padding: 1 1;
                           background: $panel; border: round $primary; }
    JoinDialog #join-scroll { height: auto; max-height: 30; overflow-x: auto; }
    JoinDialog #join-lines { width: auto; text-wrap: nowrap; }
    """

    def __init__(self, text: str, where: Path) -> None:
        super().__init__(classes="dialog-screen")
        self.text = text
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical(id="join-box"):
            yield Label(f"How to join (also in {self.where}); Enter closes", markup=False,
                        classes="dialog-title")
            with ScrollableContainer(id="join-scroll"):
                yield Static(Text(self.text, no_wrap=True, overflow="ignore"), id="join-lines")

    def action_close(self) -> None:
        self.dismiss(None)
