"""The console's master scenario events list (m): the exercise's injects, the facilitator's
prepared ones and the live ones, in the order they come. The facilitator's waiting ones move
a minute ([ ]) or five ({ }) earlier or later, go out now (Enter) or are cancelled (c); what
an inject the team was shown expected of it (the exercise's `expect:`) is marked met, partly
or not met (x), for the AAR. Every change is a call to the host through the console's
runner, recorded in the transcript."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from raceday.inert import inert
from raceday.team.inject_plan import CANCELLED, SENT, PlanEntry, when_words
from raceday.transcript.debrief.expectations import MARKS, live_marks
from raceday.tui.screens.dialogs import ChoiceDialog
from raceday.tui.typing import after_moves

if TYPE_CHECKING:
    from raceday.engine.session import Session
    from raceday.tui.team.console_runner import ConsoleRunner

REFRESH_S = 0.5
KIND_MARK = {"alarm": "🔔", "status": "📰", "message": "✉", "question": "?", "reveal": "📖"}


def _order(entry: PlanEntry) -> tuple[int, int]:
    """Waiting ones first by their minute, then the conditional, then those done."""
    done = entry.state in (SENT, CANCELLED)
    at = entry.inject.at
    return (2 if done else 0 if at is not None else 1, at if at is not None else 0)


class InjectListScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q,m", "close", "Close"),
        Binding("left_square_bracket", "move(-1)", "1 min earlier"),
        Binding("right_square_bracket", "move(1)", "1 min later"),
        Binding("left_curly_bracket", "move(-5)", "5 min earlier"),
        Binding("right_curly_bracket", "move(5)", "5 min later"),
        Binding("enter", "send", "Send now", priority=True),
        Binding("c", "cancel_inject", "Cancel it"),
        Binding("x", "mark", "Mark expected"),
    ]
    DEFAULT_CSS = """
    InjectListScreen #plan-box { width: 100%; height: 90%; padding: 0 1; background: $panel;
                                 border: round $primary; }
    InjectListScreen #plan { height: 1fr; }
    """

    def __init__(self, runner: ConsoleRunner) -> None:
        super().__init__(classes="dialog-screen")
        self.runner = runner
        self.host = runner.host
        self.keys: list[str] = []
        self._shown: tuple[PlanEntry, ...] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="plan-box"):
            yield Label("Master scenario events list: [ ] a minute earlier/later, { } five, "
                        "Enter sends now, c cancels, x marks what it expected, Esc closes",
                        classes="dialog-title", markup=False)
            yield OptionList(id="plan")
            yield Static("", id="plan-status")

    def on_mount(self) -> None:
        self._show()
        self.query_one(OptionList).focus()
        self.set_interval(REFRESH_S, self._show)

    def _line(self, entry: PlanEntry) -> Text:
        i, session = entry.inject, self.host.session
        time_of = session.time_of if session is not None else str
        done = entry.state in (SENT, CANCELLED)
        text = Text(style="dim" if done else "", no_wrap=True, overflow="ellipsis")
        if i.at is not None or done:
            when = when_words(entry, time_of)
        elif i.within:  # the numbers first: a long harm's name is what the column cuts
            when = f"{i.after} of {i.within} min: {i.when}"
        else:
            when = f"when {i.when}" + (f" +{i.after} min" if i.after else "")
        when = when if len(when) <= 28 else when[:27] + "…"
        text.append(f"{when:<28} ", style="" if done else "bold")
        text.append(f"{KIND_MARK.get(i.kind, '·')} {i.kind:<8} ")
        text.append(f"{entry.source:<8} ", style="cyan" if entry.source != "exercise" else "dim")
        text.append(f"{', '.join(i.to) or 'everyone':<12.12} ")
        expected = self._expected(entry)
        if expected:
            marked = sum(1 for n in range(1, len(expected) + 1)
                         if (i.id, n) in self._marks)
            text.append(f"[x {marked}/{len(expected)}] ", style="magenta")
        room = max(20, self.size.width - 84 - (8 if expected else 0))
        title = inert(i.title, one_line=True)
        text.append(title if len(title) <= room else title[:room - 1] + "…")
        if entry.state == CANCELLED:
            text.stylize("strike")
        return text

    def _show(self) -> None:
        entries = self.host.injects.entries
        if entries is self._shown:
            return
        self._shown = entries
        ordered = sorted(entries, key=_order)
        options = self.query_one(OptionList)
        keep = options.highlighted
        options.clear_options()
        options.add_options([Option(self._line(e), id=e.key) for e in ordered])
        self.keys = [e.key for e in ordered]
        if keep is not None and self.keys:
            options.highlighted = min(keep, len(self.keys) - 1)

    def _current(self) -> PlanEntry | None:
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.keys):
            return None
        return self.host.injects.get(self.keys[index])

    def _call(self, what: str, call: Callable[[Session], Any]) -> None:
        self.runner.send(what, call)  # a failure is said by the console below

    def _waiting(self) -> PlanEntry | None:
        entry = self._current()
        if entry is None:
            return None
        if not entry.movable:
            self.notify("Only your own waiting injects move, go out now or are cancelled; the "
                        "exercise's come as the night brings them.")
            return None
        return entry

    def action_move(self, minutes: int) -> None:
        entry = self._waiting()
        if entry is not None:
            self._call("move", lambda s: self.host.move_inject(entry.key, minutes))

    def action_send(self) -> None:
        # Enter is a priority key: handled before the arrows pressed just ahead of it
        after_moves(self.query_one(OptionList), self._send)

    def _send(self) -> None:
        entry = self._waiting()
        if entry is not None:
            self._call("send", lambda s: self.host.send_inject_now(entry.key))

    def action_cancel_inject(self) -> None:
        entry = self._waiting()
        if entry is not None:
            self._call("cancel", lambda s: self.host.cancel_inject(entry.key))

    def _expected(self, entry: PlanEntry) -> tuple[str, ...]:
        """What an inject expects of the team (its `expect:` lines: the exercise's, or a
        prepared inject's from the --injects file)."""
        return entry.inject.expect

    @property
    def _marks(self) -> dict[tuple[str, int], tuple[str, str]]:
        session = self.host.session
        return live_marks(session.events) if session is not None else {}

    def action_mark(self) -> None:
        """Mark what the highlighted inject expected of the team: met, partly, not met."""
        entry = self._current()
        if entry is None:
            return
        expected = self._expected(entry)
        if not expected:
            self.notify("This inject expects nothing of the team (an inject's `expect:` "
                        "lines are what x marks).")
            return
        if entry.state != SENT:
            self.notify("It has not reached the team yet: mark what it expected once it has.")
            return
        ident, marks = entry.inject.id, self._marks
        options = [(str(n), f"{n}. {inert(text, one_line=True)}"
                    + (f"  (now: {marks[(ident, n)][0]})" if (ident, n) in marks else ""))
                   for n, text in enumerate(expected, start=1)]

        def which(number: str | None) -> None:
            if number is None:
                return
            self.app.push_screen(ChoiceDialog(
                f"{expected[int(number) - 1]}", [(m, m) for m in MARKS],
                note="For the AAR's inject responses and objectives (never the score); the "
                     "players do not see it."), lambda mark: send(int(number), mark))

        def send(number: int, mark: str | None) -> None:
            if mark is not None:
                self._call("mark", lambda s: self.host.mark_expected(ident, number, mark))
                self.notify(f"{ident}: '{expected[number - 1]}' marked {mark}.")
                self._shown = None  # the count on its line

        self.app.push_screen(ChoiceDialog(f"What '{inert(entry.inject.title, one_line=True)}'"
                                          " expected of the team", options), which)

    def action_close(self) -> None:
        self.dismiss(None)
