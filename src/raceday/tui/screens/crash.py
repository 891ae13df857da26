"""The crash panel: an unexpected error, its traceback and where the log is; play goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class CrashScreen(ModalScreen[None]):
    """What failed, in one line, then the traceback; Escape goes back to what still works."""

    BINDINGS = [Binding("escape,enter", "close", "Back")]

    def __init__(self, what: str, error: str, trace: str, log: Path | None) -> None:
        super().__init__(classes="dialog-screen")
        self.what = what
        self.error = error
        self.trace = trace
        self.log_file = log

    def compose(self) -> ComposeResult:
        where = (f"The traceback is also in {self.log_file}." if self.log_file is not None
                 else "No session log was open, so only this panel has the traceback.")
        with Vertical(classes="dialog dialog-help", id="crash"):
            yield Static(f"Something went wrong: {self.what}", classes="dialog-title",
                         markup=False)
            yield Static(Text(self.error), classes="dialog-text", id="crash-error")
            yield Static(Text(f"raceday carries on where it can. {where}"),  # a path, as typed
                         classes="dialog-note",
                         id="crash-log")
            with VerticalScroll(id="crash-trace"):
                yield Static(Text(self.trace.rstrip(), style="dim"))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Back", id="crash-close", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#crash-close", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


def show_crash(app: App[Any], what: str, error: str, trace: str, log: Path | None) -> None:
    """Open the crash panel; while one is open, further errors are one-line toasts."""
    if isinstance(app.screen, CrashScreen):
        app.notify(error, title=f"{what} failed too", severity="error", timeout=10)
        return
    app.push_screen(CrashScreen(what, error, trace, log))
