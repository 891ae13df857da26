"""Small modal dialogs: confirm, choose one, save a monitor, send an inject, edit SQL.

Their questions, titles, notes and options carry exercise text (findings, hints, titles)
and error messages: each is shown as it is, never read as Rich markup."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from raceday.tui.typing import after_typing
from raceday.tui.widgets.editor import SqlEditor


class ConfirmDialog(ModalScreen[bool]):
    """Yes or no; Enter (or y) says yes, Escape (or n) says no. `quit_means`: the answer
    ctrl+q gives here (None: ctrl+q quits, as on the question ctrl+q itself asked)."""

    BINDINGS = [
        Binding("escape,n", "answer(False)", "No"),
        Binding("y", "answer(True)", "Yes"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No",
                 quit_means: bool | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.question = question
        self.yes = yes
        self.no = no
        self.quit_means = quit_means

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="dialog-text", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, id="yes", variant="primary")
                yield Button(self.no, id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Choices(OptionList):
    """An option list that stops at its ends: one Down too many stays on the last option
    (OptionList wraps to the first, where Enter then picks what nobody meant)."""

    def _step(self, direction: int) -> None:
        if self.highlighted is None:
            return
        i = self.highlighted + direction
        while 0 <= i < self.option_count:
            if not self.get_option_at_index(i).disabled:
                self.highlighted = i
                return
            i += direction

    def action_cursor_down(self) -> None:
        if self.highlighted is None:
            super().action_cursor_down()
        else:
            self._step(1)

    def action_cursor_up(self) -> None:
        if self.highlighted is None:
            super().action_cursor_up()
        else:
            self._step(-1)


class ChoiceDialog(ModalScreen[str | None]):
    """Pick one of several options (a finding, a speed, a statement). With `confirm` (a
    choice that costs when it is wrong: a finding), Enter first names the choice and a second
    Enter makes it; Escape then chooses again."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, options: list[tuple[str, str]], note: str = "",
                 selected: str | None = None, disabled: frozenset[str] = frozenset(),
                 confirm: str = "", at_once: frozenset[str] = frozenset()) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.options = options
        self.note = note
        self.selected = selected
        self.closed = disabled  # shown in their place, not chosen: the others keep theirs
        self.confirm = confirm  # the verb the second Enter does ("Declare"), or ""
        self.at_once = at_once  # options chosen on the first Enter all the same (a dialog next)
        self.pending: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            if self.note:
                yield Static(self.note, classes="dialog-note", markup=False)
            yield Choices(*[Option(Text(label), id=key, disabled=key in self.closed)
                            for key, label in self.options], id="choices")
            if self.confirm:
                yield Static("", id="choice-confirm", classes="dialog-note", markup=False)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        keys = [key for key, _ in self.options]
        if self.selected in keys:
            options.highlighted = keys.index(self.selected)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        key = event.option.id
        if self.confirm and key != self.pending and key not in self.at_once:
            self.pending = key
            label = next((text for k, text in self.options if k == key), key or "")
            self.query_one("#choice-confirm", Static).update(
                f"{self.confirm} “{label}”? Enter again to {self.confirm.lower()} it; "
                "Escape to choose again.")
            return
        self.dismiss(key)

    @on(OptionList.OptionHighlighted)
    def _moved(self, event: OptionList.OptionHighlighted) -> None:
        if self.pending is not None and event.option.id != self.pending:
            self._unpend()

    def _unpend(self) -> None:
        self.pending = None
        self.query_one("#choice-confirm", Static).update("")

    def action_cancel(self) -> None:
        if self.pending is not None:
            self._unpend()
            return
        self.dismiss(None)


class OwnWordsDialog(ModalScreen[str | None]):
    """A finding in the player's own words (F8, then "in my own words"): one line the
    facilitator rules on."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, role: str, longest: int) -> None:
        super().__init__(classes="dialog-screen")
        self.role = role
        self.longest = longest

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(f"Declare a finding in your own words (as {self.role})",
                        classes="dialog-title", markup=False)
            yield Static("What went wrong, in one line. The facilitator rules on it: it "
                         "counts once ruled right, and costs nothing unless ruled wrong.",
                         classes="dialog-note", markup=False)
            yield Input(placeholder=f"at most {self.longest} characters; Enter declares it",
                        max_length=self.longest, id="own-words")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.notify("Write the finding first (Escape: declare nothing).",
                        severity="warning")
            return
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class MonitorRequest:
    name: str
    sql: str


class MonitorDialog(ModalScreen[MonitorRequest | None]):
    """Name a query that alerts whenever it returns rows; ctrl+s saves."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("enter", "name_done", "SQL", priority=True, show=False),
    ]

    def __init__(self, sql: str, role: str) -> None:
        super().__init__(classes="dialog-screen")
        self.sql = sql
        self.role = role

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(f"Save a monitor (as {self.role})", classes="dialog-title",
                        markup=False)
            yield Static("A monitor runs every simulated minute and alerts when it returns "
                         "rows. Write it to return the rows that are wrong.",
                         classes="dialog-note")
            yield Input(placeholder="a short name, e.g. wrong-rows", id="monitor-name")
            yield SqlEditor(self.sql, id="monitor-sql")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save  ^s", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#monitor-name", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter is the name's (on to the SQL); in the SQL editor it is a new line."""
        if action == "name_done":
            return self.focused is self.query_one("#monitor-name", Input)
        return True

    def action_name_done(self) -> None:
        """Enter in the name: the SQL, focused at once, so keys typed next land there."""
        self.set_focus(self.query_one("#monitor-sql", SqlEditor))

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        """ctrl+s: save once the name and the SQL have taken the keys typed ahead of it."""
        after_typing([self.query_one("#monitor-name", Input),
                      self.query_one("#monitor-sql", SqlEditor)], self._save_now)

    def _save_now(self) -> None:
        if not self.is_attached or self.app.screen is not self:
            return  # saved already (ctrl+s twice), or cancelled
        name = self.query_one("#monitor-name", Input).value.strip()
        sql = self.query_one("#monitor-sql", SqlEditor).text.strip()
        if not name:
            self.notify("Give the monitor a name.", severity="warning")
            self.query_one("#monitor-name", Input).focus()
            return
        if not sql:
            self.notify("Write the monitor's query.", severity="warning")
            return
        self.dismiss(MonitorRequest(name, sql))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class InjectRequest:
    title: str
    text: str
    to: tuple[str, ...] = ()
    at: int | None = None  # a later minute; None: now


class InjectDialog(ModalScreen[InjectRequest | None]):
    """The facilitator's inject: a title, a message, for one role or everyone, now or at a
    time (HH:MM, or +10m from now)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, roles: tuple[str, ...] = (), when: Callable[[str], int] | None = None,
                 classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.roles = roles
        self.when = when

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label("Send an inject", classes="dialog-title")
            yield Input(placeholder="title, e.g. The VP of Engineering asks for an update",
                        id="inject-title")
            yield Input(placeholder="message (optional)", id="inject-text")
            if self.roles:
                yield Input(placeholder=f"to (empty: the whole team; or one of "
                                        f"{', '.join(self.roles)})", id="inject-to")
            if self.when is not None:
                yield Input(placeholder="when (empty: now; 23:55, or +10m); Enter sends",
                            id="inject-at")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Send", id="send", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#inject-title", Input).focus()

    @on(Input.Submitted, "#inject-title")
    @on(Input.Submitted, "#inject-text")
    @on(Input.Submitted, "#inject-to")
    def _next_field(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        index = inputs.index(event.input)
        if index + 1 < len(inputs):
            inputs[index + 1].focus()
        else:
            self._send()

    @on(Input.Submitted, "#inject-at")
    @on(Button.Pressed, "#send")
    def _send(self) -> None:
        title = self.query_one("#inject-title", Input).value.strip()
        if not title:
            self.notify("An inject needs a title.", severity="warning")
            return
        to: tuple[str, ...] = ()
        if self.roles:
            whom = self.query_one("#inject-to", Input).value.strip()
            if whom and whom not in self.roles:
                self.notify(f"No role {whom!r}: {', '.join(self.roles)}, or empty for all.",
                            severity="warning")
                return
            to = (whom,) if whom else ()
        at: int | None = None
        if self.when is not None:
            when = self.query_one("#inject-at", Input).value.strip()
            if when:
                try:
                    at = self.when(when)
                except ValueError as exc:
                    self.notify(str(exc), severity="warning")
                    return
        self.dismiss(InjectRequest(title, self.query_one("#inject-text", Input).value.strip(),
                                   to, at))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class NoteRequest:
    author: str
    text: str


class NoteDialog(ModalScreen[NoteRequest | None]):
    """An observer's note: who writes it and what they saw (stamped with the clock)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, clock: str, author: str = "", classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.clock = clock
        self.author = author

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(f"Observer's note at {self.clock}", classes="dialog-title")
            yield Static("It goes into the transcript and the debrief's observations.",
                         classes="dialog-note")
            yield Input(self.author, placeholder="who (e.g. Dee, observer)", id="note-author")
            yield Input(placeholder="what you saw; Enter saves", id="note-text")

    def on_mount(self) -> None:
        self.query_one("#note-text" if self.author else "#note-author", Input).focus()

    @on(Input.Submitted, "#note-author")
    def _author_done(self) -> None:
        self.query_one("#note-text", Input).focus()

    @on(Input.Submitted, "#note-text")
    def _save(self) -> None:
        text = self.query_one("#note-text", Input).value.strip()
        if not text:
            self.notify("Write the note first.", severity="warning")
            return
        author = self.query_one("#note-author", Input).value.strip() or "observer"
        self.dismiss(NoteRequest(author, text))

    def action_cancel(self) -> None:
        self.dismiss(None)


class SqlDialog(ModalScreen[str | None]):
    """Edit a piece of SQL (an automation statement); ctrl+s keeps it."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save", priority=True),
    ]

    def __init__(self, title: str, note: str, sql: str) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.note = note
        self.sql = sql

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Static(self.note, classes="dialog-note", markup=False)
            yield SqlEditor(self.sql, id="dialog-sql")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save  ^s", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        editor = self.query_one(TextArea)

        def keep() -> None:
            if self.is_attached and self.app.screen is self:
                self.dismiss(editor.text)

        after_typing([editor], keep)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
