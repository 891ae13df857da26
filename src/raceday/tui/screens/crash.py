"""The crash panel: an unexpected error, its traceback and where the log is; play goes on."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Static
from textual.worker import Worker, WorkerState

from raceday.logfile import current_log

_log = logging.getLogger(__name__)


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


def report_failed_worker(app: App[Any], event: Worker.StateChanged) -> None:
    """A worker that raised (the runner catches session errors; this is the backstop): its
    error in the crash panel, and in the session's log."""
    if event.state is WorkerState.ERROR and event.worker.error is not None:
        error = event.worker.error
        name = event.worker.name or "a background task"
        _log.error("worker %s failed", name, exc_info=error)
        trace = "".join(traceback.format_exception(error))
        lines = str(error).strip().splitlines()
        show_crash(app, name, lines[0] if lines else type(error).__name__, trace,
                   current_log())


class WorkingScreen(Screen[None]):
    """A screen with workers of its own: Textual does not bubble their state to the app, so
    one that raised would fail without a word; this screen reports it (`report_failed_worker`)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_failed_worker(self.app, event)
