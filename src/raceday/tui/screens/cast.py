"""Cast (team mode): who plays which role. A role left empty is played by the automation."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Static

from raceday.exercise.model import Exercise
from raceday.inert import inert
from raceday.tui.navigation import navigator
from raceday.tui.typing import after_typing
from raceday.tui.widgets.footer import SteadyFooter


class CastScreen(Screen[None]):
    HELP = """\
# Cast

Type a player's name next to each role they play; leave a role empty and the automation
plays it with the exercise's own SQL. **Enter** moves to the next role; **ctrl+s** (or the
Start button) starts. During play **F2** passes the keyboard to the next role.
"""

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", priority=True),
        Binding("enter", "next_role", "Next role", priority=True),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, exercise: Exercise) -> None:
        super().__init__()
        self.exercise = exercise

    def compose(self) -> ComposeResult:
        title = inert(self.exercise.title, one_line=True)  # the author's text, not markup
        yield Static(Text(f" Cast · {title}   who plays which role? "
                          "(empty: the automation plays it)"), id="cast-bar")
        with VerticalScroll(id="cast-list"):
            for role in self.exercise.roles:
                with Horizontal(classes="cast-row"):
                    yield Label(Text(role.id), classes="cast-role")
                    yield Input(
                        placeholder=f"{role.name}: automation" if role.automated
                        else f"{role.name}: nobody yet",
                        id=f"cast-{role.id}",
                        classes="cast-name",
                    )
            yield Button("Start  ^s", id="start", variant="primary")
        yield SteadyFooter()

    def on_mount(self) -> None:
        first = self.query(Input).first()
        first.focus()

    def action_next_role(self) -> None:
        """Enter: the next role's name, focused at once (`focus()` waits its turn behind the
        keys already typed, which would then land in this name: "AnaBo"); after the last,
        or on the Start button, start."""
        inputs = list(self.query(Input))
        focused = self.focused
        if isinstance(focused, Input) and focused in inputs:
            index = inputs.index(focused)
            if index + 1 < len(inputs):
                self.set_focus(inputs[index + 1])
                return
        self.action_start()

    def cast(self) -> dict[str, str]:
        chosen: dict[str, str] = {}
        for role in self.exercise.roles:
            name = self.query_one(f"#cast-{role.id}", Input).value.strip()
            if name:
                chosen[role.id] = name
        return chosen

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        """ctrl+s: start once each name has taken the keys typed ahead of it."""
        after_typing(list(self.query(Input)), self._start_now)

    def _start_now(self) -> None:
        if not self.is_attached or self.app.screen is not self:
            return  # started already (ctrl+s pressed twice), or left
        chosen = self.cast()
        if not chosen:
            self.notify("Put a name next to at least one role.", severity="warning")
            return
        navigator(self.app).start_play(self.exercise, chosen)

    def action_back(self) -> None:
        self.app.pop_screen()
