"""Harden: the automation's own statements, each in an editor, to change or put back.

A guard can live in the automation's SQL itself (a WHERE that re-checks the version, a
clean-up that spares the plan in service). Each statement the exercise gives the automation
is listed with its role, what it does and its SQL now; ctrl+s saves the statement being
edited (through the session, so the transcript records it and the role's rights apply),
ctrl+o puts back the exercise's original. The play screen's runner does the work; this
screen only shows what it says.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static, TextArea

from raceday.engine.actions import EditStatement
from raceday.exercise.model import Exercise, Statement
from raceday.transcript import events as ev
from raceday.transcript.wording import plural
from raceday.tui.commands import PlayCommands
from raceday.tui.typing import after_typing
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from raceday.engine.session import Session


class UnderHarden(Protocol):
    """What this screen needs of the play screen under it (whose runner does the work)."""

    @property
    def exercise(self) -> Exercise: ...

    def act(self, action: str, call: Callable[[Session], ev.Event | None]) -> None: ...

    def action_replay(self) -> None: ...

HARDEN_HELP = """\
# Harden the automation

Every statement the automation runs, with the role that runs it and what it is for. Change
one and the automation runs your SQL from now on, in play and in the replay: a write that
carries its own check (a WHERE that compares what it read with what is there now) cannot
be stale, and a clean-up can spare what is still in use.

| key | does |
|---|---|
| **ctrl+s** | save the statement you are editing |
| **ctrl+o** | put back the exercise's original SQL for it |
| tab / shift+tab | next / previous statement (tab completes a name first) |
| **ctrl+r** | replay the night against your database |
| **Esc**, F4 | back to play |

Only a role that may change the schema may edit the automation; the session refuses the
others, and says so here.

A conditional write that changes no rows lost its race. Put `-- on_zero_rows: stop` on a line
of its own in that statement, and its run stops there (a held transaction is rolled back)
instead of carrying on as if it had won.
"""


def _flat(sql: str) -> str:
    return " ".join(sql.split())


class StatementCard(Vertical):
    """One automation statement: what it is, its SQL in an editor, what became of a save."""

    def __init__(self, index: int, statement: Statement, current: str) -> None:
        super().__init__(classes="harden-card", id=f"card-{index}")
        self.index = index
        self.statement = statement
        self.current = current

    def compose(self) -> ComposeResult:
        yield Static("", classes="harden-head")
        if self.statement.description:
            yield Static(Text(_flat(self.statement.description)),  # the author's, as typed
                         classes="harden-note")
        yield SqlEditor(self.current, id=f"sql-{self.index}")
        yield Static("", classes="harden-status")

    def on_mount(self) -> None:
        self.show_head()
        self.query_one(".harden-status", Static).display = False

    @property
    def editor(self) -> SqlEditor:
        return self.query_one(SqlEditor)

    @property
    def edited(self) -> bool:
        return _flat(self.current) != _flat(self.statement.sql)

    @property
    def unsaved(self) -> bool:
        return _flat(self.editor.text) != _flat(self.current)

    def show_head(self) -> None:
        text = Text()
        text.append(self.statement.id, style="bold")
        text.append(f"  run by {self.statement.role}", style="cyan")
        if self.edited:
            text.append("  ")
            text.append(" EDITED ", style="bold black on yellow")
        if self.is_mounted and self.unsaved:
            text.append("  ")
            text.append(" unsaved: ctrl+s saves ", style="bold white on blue")
        self.query_one(".harden-head", Static).update(text)

    def say(self, text: Text) -> None:
        status = self.query_one(".harden-status", Static)
        status.update(text)
        status.display = bool(text.plain)

    def saved(self, sql: str) -> None:
        self.current = sql
        self.show_head()


class HardenScreen(Screen[None]):
    """Every automation statement in its own editor; saves go through the play screen."""

    HELP = HARDEN_HELP
    COMMANDS = {PlayCommands}
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+o", "revert", "Original", priority=True),
        Binding("ctrl+r", "replay", "Replay", priority=True),
        Binding("escape,f4", "close", "Back", priority=True),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    def __init__(self, play: UnderHarden, role: str, current: dict[str, str],
                 may_edit: bool) -> None:
        super().__init__()
        self.play = play
        self.role = role
        self.current = current
        self.may_edit = may_edit
        self.cards: list[StatementCard] = []

    @property
    def exercise(self) -> Exercise:
        return self.play.exercise

    @property
    def editable(self) -> list[Statement]:
        """The automation's statements; what the night left behind is not automation."""
        return [s for s in self.exercise.statements if not s.history]

    def compose(self) -> ComposeResult:
        yield Static(self._bar(), id="harden-bar")
        with VerticalScroll(id="harden-list"):
            if not self.may_edit:
                yield Static(Text.assemble(
                    (" note ", "bold black on yellow"),
                    f" {self.role} may not change the schema, so the session will refuse its "
                    "edits to the automation. F2 on the play screen passes the keyboard to a "
                    "role that may.", ), id="harden-warning")
            for index, statement in enumerate(self.editable):
                card = StatementCard(index, statement,
                                     self.current.get(statement.id, statement.sql))
                self.cards.append(card)
                yield card
        yield SteadyFooter()

    def _bar(self) -> Text:
        edited = sum(1 for s in self.editable
                     if _flat(self.current.get(s.id, s.sql)) != _flat(s.sql))
        return Text.assemble(
            (" Harden the automation ", "bold reverse"),
            f"  as {self.role} · {plural(len(self.editable), 'statement')} · "
            f"{edited} edited",
            ("   ctrl+s save · ctrl+o original · Esc back", "dim"))

    def on_mount(self) -> None:
        if self.cards:
            self.cards[0].editor.focus()

    # -- which statement ---------------------------------------------------------------------

    def focused_card(self) -> StatementCard | None:
        focused = self.focused
        node: Any = focused
        while node is not None and not isinstance(node, StatementCard):
            node = node.parent
        return node if isinstance(node, StatementCard) else None

    def card_for(self, statement_id: str) -> StatementCard | None:
        return next((c for c in self.cards if c.statement.id == statement_id), None)

    @on(TextArea.Changed)
    def _typed(self, event: TextArea.Changed) -> None:
        node: Any = event.text_area.parent
        if isinstance(node, StatementCard):
            node.show_head()

    # -- saving --------------------------------------------------------------------------------

    def action_save(self) -> None:
        card = self.focused_card()
        if card is None:
            self.notify("Put the cursor in a statement's editor first.", severity="warning")
            return
        after_typing([card.editor], lambda: self._save_card(card))  # the keys typed ahead too

    def _save_card(self, card: StatementCard) -> None:
        sql = card.editor.text
        if not sql.strip():
            card.say(Text("Empty SQL is not saved: ctrl+o puts back the original.",
                          style="yellow"))
            return
        self.save_statement(card.statement.id, sql)

    def action_revert(self) -> None:
        card = self.focused_card()
        if card is None:
            return
        original = card.statement.sql
        card.editor.text = original
        if not card.edited:
            card.say(Text("This is the exercise's original SQL already.", style="dim"))
            card.show_head()
            return
        self.save_statement(card.statement.id, original)

    def save_statement(self, statement_id: str, sql: str) -> None:
        card = self.card_for(statement_id)
        if card is not None:
            card.say(Text("saving…", style="dim"))
        role = self.role

        def call(session: Session) -> ev.Event:
            return session.perform(EditStatement(role=role, statement=statement_id, sql=sql))

        self.play.act("edit", call)

    def edit_done(self, event: ev.Event) -> None:
        """The session's answer to a save (the play screen passes it on): an edit, or the
        refusal, both naming the statement."""
        if not isinstance(event, (ev.Edit, ev.Refused)) or event.statement is None:
            return
        card = self.card_for(event.statement)
        if card is None:
            return
        if isinstance(event, ev.Refused):
            card.say(Text.assemble((" Refused ", "bold white on red"),
                                   f" {event.error}. Nothing was changed."))
            return
        card.saved(event.sql)
        if not card.edited:  # the exercise's own SQL again (put back, or saved unchanged)
            card.say(Text.assemble((" Original ", "bold black on green"),
                                   f" The automation runs the exercise's SQL again "
                                   f"(from {event.sim_time})."))
        else:
            card.say(Text.assemble((" Saved ", "bold black on green"),
                                   f" The automation runs this from {event.sim_time} "
                                   "on; ctrl+r replays the race to see what it stops."))
        self.current[card.statement.id] = event.sql
        self.query_one("#harden-bar", Static).update(self._bar())

    def edit_failed(self, error: str) -> None:
        card = self.focused_card()
        if card is not None:
            card.say(Text.assemble((" Not saved ", "bold white on red"), f" {error}"))

    # -- elsewhere -----------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss()

    def action_replay(self) -> None:
        unsaved = [c.statement.id for c in self.cards if c.unsaved]
        if unsaved:
            self.notify(f"Not saved yet: {', '.join(unsaved)}. The replay uses what is saved.",
                        severity="warning", timeout=6)
        self.play.action_replay()

    def palette_commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        cmds: list[tuple[str, str, Callable[[], Any]]] = [
            ("Save the statement being edited", "ctrl+s", self.action_save),
            ("Put back the original SQL", "ctrl+o", self.action_revert),
            ("Replay the race", "ctrl+r: against the team's database", self.action_replay),
            ("Back to play", "Esc", self.action_close),
        ]
        for card in self.cards:
            if card.edited:
                cmds.append((f"Put back the original {card.statement.id}",
                             "the exercise's SQL",
                             partial(self._revert_card, card)))
        return cmds

    def _revert_card(self, card: StatementCard) -> None:
        card.editor.focus()
        self.action_revert()
