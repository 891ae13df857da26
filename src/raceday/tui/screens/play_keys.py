"""The play screen's editing keys: run (F5, F6) and cancel (Esc), pass the keyboard (F2),
the editor's history and completions, the side panel (F3) and the results grid (alt+keys;
Enter on a cell shows its whole value)."""

from __future__ import annotations

from functools import partial

from rich.text import Text
from textual import on

from raceday.tui.screens.cell_view import CellViewScreen
from raceday.tui.screens.play_dialogs import PlayDialogs
from raceday.tui.widgets.editor import SqlEditor
from raceday.tui.widgets.grid import ResultGrid

RUNNING_AFTER = 0.15
"""Seconds a statement runs before the results say "running" (and Esc can cancel it)."""


class PlayKeys(PlayDialogs):
    """The keys that edit, run and look (no dialogs: `PlayDialogs` has those)."""

    def action_run(self, everything: bool = False) -> None:
        """F5 is a priority key: it is handled before the keys (or a paste) typed just ahead
        of it have left the editor's queue. The run waits in that queue behind them, so what
        is in the editor once they are typed is what runs."""
        self.editor.call_later(self._run_typed, everything)

    def _run_typed(self, everything: bool = False) -> None:
        runner = self._ready(partial(self._run_typed, everything))
        if runner is None:
            return
        sql = self.editor.submission(everything=everything)
        if not sql.strip():
            self.results.show([])
            return
        seat = self.seat
        if not seat.history or seat.history[-1] != sql:
            seat.history.append(sql)
        seat.position = len(seat.history)
        # a statement that answers at once never shows "running": that frame would cost as
        # much as drawing its result (a slow one shows it, and Esc cancels it)
        if self._running_note is not None:
            self._running_note.stop()
        self._running_note = self.set_timer(RUNNING_AFTER, partial(self.results.show_running, sql))
        runner.execute(seat.role, sql)

    def action_cancel(self) -> None:
        runner = self.runner
        if runner is not None and runner.statement_running:
            runner.interrupt()
            self.results.show_text(Text("Cancelling…", style="bold yellow"))
        elif self.has_class("-side-open"):
            self.remove_class("-side-open")
            self.call_after_refresh(self._keep_focus)

    def action_switch_role(self) -> None:
        """F2 (priority, as F5): the keys typed before it stay with this seat's editor text,
        those after it go to the next seat's."""
        self.editor.call_later(self._switch_typed)

    def _switch_typed(self) -> None:
        if len(self.seats) < 2:
            self.notify(f"F2 passes the keyboard in a hot seat. Only {self.role} is played by a "
                        "person here; the automation plays the other roles.", timeout=5)
            return
        self._save_seat()
        self.active = (self.active + 1) % len(self.seats)
        editor = self.editor
        editor.text = self.seat.text
        editor.cursor_location = self.seat.cursor
        self._offer_example()
        self._show_seat()
        passed = Text.assemble(("Keyboard passed to ", "dim"), (self.role, "bold cyan"),
                               (f" ({self.seat.player})" if self.seat.player else "", "cyan"))
        if self.seat.results:  # this seat's own last results, never the previous seat's
            self.results.show(self.seat.results)
        else:
            self.results.clear(passed)
        self.notify(passed.plain, timeout=3)
        editor.focus()

    def _save_seat(self) -> None:
        self.seat.text = self.editor.text
        self.seat.cursor = self.editor.cursor_location
        self.seat.results = list(self.results.results)

    @on(SqlEditor.HistoryRequested, "#editor")
    def _history(self, message: SqlEditor.HistoryRequested) -> None:
        seat = self.seat
        if not seat.history:
            return
        if seat.position == len(seat.history):
            seat.draft = self.editor.text
        position = max(0, min(len(seat.history), seat.position + message.step))
        if position == seat.position:
            return
        seat.position = position
        text = seat.history[position] if position < len(seat.history) else seat.draft
        self.editor.text = text
        self.editor.move_cursor(self.editor.document.end)

    @on(SqlEditor.CompletionChoices, "#editor")
    def _choices(self, message: SqlEditor.CompletionChoices) -> None:
        shown = "  ".join(message.choices[:8])
        more = f"  (+{len(message.choices) - 8})" if len(message.choices) > 8 else ""
        self.editor.border_subtitle = Text(shown + more)  # names of the world, not markup

    def action_side(self) -> None:
        """F3: narrow, open the side panel, then step through its tabs, then close it;
        wide (the panel is always there), step through Tasks, Schema, Monitors."""
        side = self.side
        narrow = self.has_class("-narrow")
        if narrow and not self.has_class("-side-open"):
            self.add_class("-side-open")
            side.first_tab()
        elif narrow and side.on_last_tab():
            self.remove_class("-side-open")
            side.first_tab()
        else:
            side.next_tab()
        self.call_after_refresh(self._keep_focus)

    def action_scroll_results(self, dx: int, dy: int) -> None:
        """alt+arrows: scroll the rows from the editor, no Tab into the grid needed."""
        grid = self.results.table
        if dy:
            grid.action_cursor(dy)
        if dx:
            grid.scroll_to(x=max(0, grid.scroll_offset.x + dx), animate=False)

    def action_step_grid(self, direction: int) -> None:
        if not self.results.step(direction):
            shown = len(self.results.grids)
            self.notify("Only one grid: F6 runs every statement, each with its own grid."
                        if shown < 2 else "No more grids that way.", timeout=3)

    @on(ResultGrid.CellChosen)
    def _cell_chosen(self, message: ResultGrid.CellChosen) -> None:
        """Enter on a cell of the results: its whole value over the screen (Esc closes it)."""
        message.stop()
        grid = message.grid
        self.app.push_screen(CellViewScreen(
            message.value, column=grid.columns[message.column], row=message.row,
            rows=grid.row_count))
