"""The SQL editor: a TextArea that knows statements, completes names and keeps colour.

With tree-sitter installed it uses the `sql` language; without it, a small tokenizer gives
keywords, strings, comments and numbers their colours, so the editor never looks broken.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual._tree_sitter import TREE_SITTER
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea

from raceday.store.sqltext import complete, highlight_spans, offset_of, statement_at, word_before


def _sql_language_available() -> bool:
    if not TREE_SITTER:
        return False
    try:
        return "sql" in TextArea().available_languages
    except Exception:
        return False


class SqlEditor(TextArea, inherit_bindings=False):
    """Type SQL; run the statement under the cursor, the selection, or everything.

    F6 and F7 belong to the play screen (run all, monitor), not to line/all selection, so
    ctrl+a selects everything (typing then replaces it; home still goes to the line start)
    and ctrl+l clears the editor (ctrl+z brings the text back).
    """

    BINDINGS = [
        *(b for b in TextArea.BINDINGS
          if not (isinstance(b, Binding) and b.key in ("f6", "f7", "home,ctrl+a"))),
        Binding("home", "cursor_line_start", "Line start", show=False),
        Binding("ctrl+a", "select_all", "Select all", show=False),
        Binding("ctrl+l", "clear_text", "Clear", show=False),
        Binding("tab", "complete(True)", "Complete", show=False),
        Binding("ctrl+space,ctrl+@", "complete", "Complete", show=False),
        Binding("ctrl+up", "history(-1)", "Older", show=False),
        Binding("ctrl+down", "history(1)", "Newer", show=False),
    ]

    @dataclass
    class HistoryRequested(Message):
        """ctrl+up / ctrl+down: the screen swaps in an older or newer submission."""

        editor: SqlEditor
        step: int

        @property
        def control(self) -> SqlEditor:
            return self.editor

    @dataclass
    class CompletionChoices(Message):
        """Completing a prefix left several choices."""

        editor: SqlEditor
        choices: tuple[str, ...]

        @property
        def control(self) -> SqlEditor:
            return self.editor

    def __init__(self, text: str = "", *, id: str | None = None) -> None:  # noqa: A002
        self._fallback = not _sql_language_available()
        super().__init__(
            text,
            language=None if self._fallback else "sql",
            theme="css",
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            id=id,
        )
        self.tables: dict[str, tuple[str, ...]] = {}

    # -- keys, in the order typed ----------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        """The editor's own keys (backspace, arrows, ctrl+l, tab...) act here, in turn with
        the characters around them. Left to bubble, a binding is done only after every key
        already on its way: a fast typist's backspace or a ctrl+l then lands on later text."""
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            name = binding.action.partition("(")[0]
            if binding.priority or self.check_action(name, ()) is False:
                continue
            event.stop()
            event.prevent_default()
            await self.run_action(binding.action)
            return
        await super()._on_key(event)

    # -- a resize never draws a line wrapped for the old width -------------------------------

    def render_line(self, y: int) -> Strip:
        """The document is wrapped again here when the width changed since it was wrapped:
        a frame drawn at the new size before the Resize event is handled would otherwise
        wrap at the old width and be cached, losing a glyph at the seam or drawing it twice."""
        if self.soft_wrap and self.wrapped_document._width != self.wrap_width:
            self._rewrap_and_refresh_virtual_size()
        return super().render_line(y)

    def _on_resize(self) -> None:
        super()._on_resize()
        self.refresh()  # every line again, even when the number of wrapped lines is the same

    # -- what to run ---------------------------------------------------------------------

    def statement_under_cursor(self) -> str:
        row, column = self.cursor_location
        return statement_at(self.text, offset_of(self.text, row, column))

    def submission(self, *, everything: bool = False) -> str:
        """The selection if there is one, else the statement under the cursor (or all)."""
        if everything:
            return self.text
        if self.selected_text.strip():
            return self.selected_text
        return self.statement_under_cursor()

    # -- completion ----------------------------------------------------------------------

    def action_complete(self, move_on: bool = False) -> None:
        """Complete the name before the cursor. Tab (`move_on`) with nothing to complete (no
        name there, none it could become, or a selection, the offered example's) moves focus
        to the next widget, as the help says; shift+tab, the screen's key, goes back."""
        if not self.selected_text:
            row, column = self.cursor_location
            prefix = word_before(self.document.get_line(row), column)
            found = complete(prefix, self.tables.keys(), self.tables)
            if found.insert or found.choices:
                if found.insert:
                    self.insert(found.insert)
                if found.choices:
                    self.post_message(self.CompletionChoices(self, found.choices))
                return
        if move_on:
            self.screen.focus_next()

    def action_clear_text(self) -> None:
        """Empty the editor as one edit, so ctrl+z undoes it."""
        self.replace("", self.document.start, self.document.end)

    def action_history(self, step: int) -> None:
        self.post_message(self.HistoryRequested(self, step))

    # -- colour without tree-sitter -------------------------------------------------------

    def _build_highlight_map(self) -> None:
        if not self._fallback:
            super()._build_highlight_map()
            return
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        for row, start, end, name in highlight_spans(self.text):
            highlights[row].append((start, end, name))
