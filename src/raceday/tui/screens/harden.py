"""Harden: the automation's own statements, each in an editor, to change or put back.

A guard can live in the automation's SQL itself (a WHERE that re-checks the version, a
clean-up that spares the plan in service). Each statement the exercise gives the automation
is listed with its role, what it does and its SQL now; ctrl+s saves the statement being
edited (through the session, so the transcript records it and the role's rights apply),
ctrl+o puts back the exercise's original. The play screen's runner does the work; this
screen only shows what it says.

Which statement a key acts on is read from the focus when the key is done, never kept: a
save goes to the editor the keys were typed in, and its answer to the card it was for.
Leaving with edits not saved asks first.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static, TextArea

from raceday.engine.actions import Action, EditStatement
from raceday.exercise.model import Exercise, Statement
from raceday.transcript import events as ev
from raceday.transcript.wording import plural
from raceday.tui.commands import PlayCommands
from raceday.tui.screens.dialogs import ChoiceDialog
from raceday.tui.typing import after_typing
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.footer import SteadyFooter


class UnderHarden(Protocol):
    """What this screen needs of the play screen under it (whose runner does the work)."""

    @property
    def exercise(self) -> Exercise: ...

    def perform(self, action: str, act: Action) -> None: ...

    def action_replay(self) -> None: ...

HARDEN_HELP = """\
# Harden the automation

Every statement the automation runs, with the role that runs it and what it is for. Change
one and the automation runs your SQL from now on, in play and in the replay: a write that
carries its own check (a WHERE that compares what it read with what is there now) cannot
be stale, and a clean-up can spare what is still in use.

| key | does |
|---|---|
| **ctrl+s** | save the statement you are editing (the editor with the cursor) |
| **ctrl+o** | put back the exercise's original SQL for it |
| tab / shift+tab | next / previous statement (tab completes a name first) |
| PageDown / PageUp | the next / previous page of statements (the cursor goes along) |
| ctrl+End / ctrl+Home | the end / start of the statement you are editing |
| **ctrl+r** | replay the night against your database |
| **Esc**, F4 | back to play (with edits not saved, it asks: save, discard or stay) |

Only a role that may change the schema may edit the automation; the session refuses the
others, and says so here.

A conditional write that changes no rows lost its race. Put `-- on_zero_rows: stop` on a line
of its own in that statement, and its run stops there (a held transaction is rolled back)
instead of carrying on as if it had won.
"""


def _flat(sql: str) -> str:
    return " ".join(sql.split())


class StatementEditor(SqlEditor):
    """A statement's editor: ctrl+home / ctrl+end go to the start / end of the statement
    (with shift, selecting), which TextArea itself leaves unbound."""

    BINDINGS = [
        Binding("ctrl+home", "statement_edge(False)", "Start", show=False),
        Binding("ctrl+end", "statement_edge(True)", "End", show=False),
        Binding("ctrl+shift+home", "statement_edge(False, True)", "Select to start",
                show=False),
        Binding("ctrl+shift+end", "statement_edge(True, True)", "Select to end", show=False),
    ]

    def action_statement_edge(self, end: bool, select: bool = False) -> None:
        self.move_cursor(self.document.end if end else self.document.start, select=select)


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
        yield StatementEditor(self.current, id=f"sql-{self.index}")
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
        """The editor holds other SQL than the automation runs now. Line breaks count: a
        `-- on_zero_rows: stop` moved onto a line of its own is a change."""
        return self.editor.text.strip() != self.current.strip()

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
    AUTO_FOCUS = ""  # the first editor, set at mount (not the list, which can take focus)
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+o", "revert", "Original", priority=True),
        Binding("ctrl+r", "replay", "Replay", priority=True),
        Binding("escape,f4", "close", "Back", priority=True),
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
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
        self.saving: list[str] = []  # the statements whose saves are on their way, in order
        self.leaving = False  # "save and go back": go once every save is in

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
        """The first editor has focus before any key is read: set here, at once (a widget's
        focus() waits a turn, and meanwhile the list, which can take focus too, had it and
        the keys typed right after F4 were lost), the list left at its top."""
        if self.cards:
            self.set_focus(self.cards[0].editor, scroll_visible=False)

    # -- which statement ---------------------------------------------------------------------

    def focused_card(self) -> StatementCard | None:
        """The card of the editor with focus now (read when asked, never remembered)."""
        node: Any = self.focused
        while node is not None and not isinstance(node, StatementCard):
            node = node.parent
        return node if isinstance(node, StatementCard) else None

    def _typed_ahead(self, then: Callable[[], None]) -> None:
        """`then`, once the keys typed before a priority key (ctrl+s, Esc) are in: this
        screen mounted, then the keys on their way to the editor with focus."""
        def in_editor() -> None:
            after_typing([w for w in [self.focused] if w is not None], then)

        after_typing([self], in_editor)

    def card_for(self, statement_id: str) -> StatementCard | None:
        return next((c for c in self.cards if c.statement.id == statement_id), None)

    @on(TextArea.Changed)
    def _typed(self, event: TextArea.Changed) -> None:
        node: Any = event.text_area.parent
        if isinstance(node, StatementCard):
            node.show_head()

    # -- in view -------------------------------------------------------------------------------

    @property
    def statement_list(self) -> VerticalScroll:
        return self.query_one("#harden-list", VerticalScroll)

    @on(TextArea.SelectionChanged)
    def _cursor_moved(self, event: TextArea.SelectionChanged) -> None:
        """The cursor of the editor with focus stays on the screen (ctrl+end, arrows and
        typing at the foot of a card half scrolled away)."""
        if event.text_area is self.focused:
            self.call_after_refresh(self._in_view, event.text_area)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, StatementEditor):
            self.call_after_refresh(self._in_view, event.widget)

    def _in_view(self, editor: TextArea) -> None:
        """The editor's card on the screen, its head too when the card fits."""
        card = editor.parent
        if not isinstance(card, StatementCard) or not card.is_mounted:
            return
        room = self.statement_list.scrollable_content_region.height
        target = card if card.outer_size.height <= room else editor
        self.statement_list.scroll_to_widget(target, animate=False, immediate=True)

    def action_page(self, step: int) -> None:
        """PageDown / PageUp: the list a page on, and the cursor to the first statement now
        wholly in view (never back the other way); at either end, to the first or last."""
        listed = self.statement_list
        at_end = listed.scroll_y >= listed.max_scroll_y if step > 0 else listed.scroll_y <= 0
        if at_end:
            if self.cards:
                self.cards[-1 if step > 0 else 0].editor.focus()
            return
        page = listed.scrollable_content_region.height
        listed.scroll_to(y=listed.scroll_y + step * page, animate=False, immediate=True)
        self.call_after_refresh(self._focus_in_view, step)

    def _focus_in_view(self, step: int) -> None:
        view = self.statement_list.scrollable_content_region
        whole = [c for c in self.cards if view.contains_region(c.editor.region)]
        seen = whole or [c for c in self.cards if view.overlaps(c.editor.region)]
        if not seen:
            return
        current = self.focused_card()
        chosen = seen[0]
        if current is not None and current in seen:
            chosen = (max if step > 0 else min)(chosen, current, key=lambda c: c.index)
        if chosen.editor is not self.focused:
            chosen.editor.focus(scroll_visible=False)

    # -- saving --------------------------------------------------------------------------------

    def action_save(self) -> None:
        """ctrl+s: the statement in the editor with focus once the keys typed ahead are in
        (the editor they were typed in), never one chosen earlier."""
        self._typed_ahead(self._save_focused)

    def _save_focused(self) -> None:
        card = self.focused_card()
        if card is None:
            self.notify("Put the cursor in a statement's editor first.", severity="warning")
            return
        if not card.unsaved:
            others = [c.statement.id for c in self.cards if c.unsaved]
            card.say(Text(f"Nothing to save: {card.statement.id} is the SQL the automation "
                          "runs now." + (f" Not saved yet: {', '.join(others)}; put the "
                                         "cursor in it to save it." if others else ""),
                          style="yellow" if others else "dim"))
            return
        self._save_card(card)

    def _save_card(self, card: StatementCard) -> bool:
        sql = card.editor.text
        if not sql.strip():
            card.say(Text("Empty SQL is not saved: ctrl+o puts back the original.",
                          style="yellow"))
            return False
        self.save_statement(card.statement.id, sql)
        return True

    def action_revert(self) -> None:
        card = self.focused_card()
        if card is not None:
            self._revert(card)

    def _revert(self, card: StatementCard) -> None:
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
        self.saving.append(statement_id)
        self.play.perform("edit", EditStatement(role=self.role, statement=statement_id, sql=sql))

    def _answered(self, statement_id: str | None) -> str | None:
        """The statement a save's answer is for: the one named, else the oldest on its way
        (the runner answers in the order asked)."""
        if statement_id in self.saving:
            self.saving.remove(statement_id)
            return statement_id
        return self.saving.pop(0) if self.saving and statement_id is None else statement_id

    def edit_done(self, event: ev.Event) -> None:
        """The session's answer to a save (the play screen passes it on): an edit, or the
        refusal, both naming the statement."""
        if not isinstance(event, (ev.Edit, ev.Refused)):
            return
        statement_id = self._answered(event.statement)
        card = self.card_for(statement_id) if statement_id is not None else None
        if card is None:
            if isinstance(event, ev.Refused):
                self._stay(event.error)
            return
        if isinstance(event, ev.Refused):
            card.say(Text.assemble((" Refused ", "bold white on red"),
                                   f" {event.error}. Nothing was changed."))
            self._stay(f"{card.statement.id} was refused")
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
        if self.leaving and not self.saving:
            self._back()

    def edit_failed(self, error: str) -> None:
        """A save that could not be done: said on the card it was for."""
        statement_id = self._answered(None)
        card = self.card_for(statement_id) if statement_id is not None else None
        if card is not None:
            card.say(Text.assemble((" Not saved ", "bold white on red"), f" {error}"))
        self._stay(f"{statement_id or 'a statement'} was not saved")

    # -- leaving -------------------------------------------------------------------------------

    def action_close(self) -> None:
        """Esc / F4: back to play at once, or, with edits not saved, ask first."""
        self._typed_ahead(self._close)

    def _close(self) -> None:
        if not self.is_active:
            return
        unsaved = [c.statement.id for c in self.cards if c.unsaved]
        if not unsaved:
            self.dismiss()
            return
        self.app.push_screen(ChoiceDialog(
            f"Not saved: {', '.join(unsaved)}",
            [("save", "Save and go back"), ("discard", "Discard the edits and go back"),
             ("stay", "Stay here")],
            note="The automation runs what is saved; what is not saved is lost on leaving.",
            selected="save"), self._leave)

    def _leave(self, choice: str | None) -> None:
        if choice == "discard":
            self._back()
        elif choice == "save":
            asked = [self._save_card(c) for c in self.cards if c.unsaved]  # each one asked
            if all(asked):
                self.leaving = True
            else:
                self.notify("Empty SQL is not saved (ctrl+o puts back the original): "
                            "still here.", severity="warning", timeout=8)

    def _back(self) -> None:
        """Back to play, once nothing is over this screen (a dialog, the palette)."""
        self.leaving = False
        if self.is_active:
            self.dismiss()

    def _stay(self, why: str) -> None:
        """A save asked on leaving did not go through: stay, and say so."""
        if self.leaving:
            self.leaving = False
            self.notify(f"{why}: still here, so nothing is lost.", severity="warning",
                        timeout=8)

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
        """The palette's "put back" of a named statement: that one, whatever has focus (a
        focus asked for now only moves after this has run)."""
        card.editor.focus()
        self._revert(card)
