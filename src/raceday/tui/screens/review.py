"""`raceday review SESSION_DIR`: walk a saved session event by event, read-only.

For a facilitator narrating on a big screen: the events on the left, the one in hand in full
on the right with the world as it stood after it, and the score at the end. Nothing here can
change the session; it reads `events.jsonl` once and never touches `world.db`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from raceday.errors import RacedayError, TranscriptError, first_line
from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.transcript.debrief import (
    Debrief,
    WorldSoFar,
    build_debrief,
    render,
    with_edits,
    world_states,
)
from raceday.transcript.debrief.review import MOMENTS, key_moments
from raceday.transcript.log import read_events
from raceday.transcript.render import describe
from raceday.tui.notify import InertNotifications
from raceday.tui.prerendered import Prerendered
from raceday.tui.widgets.footer import SteadyFooter

_STYLE: dict[type[ev.Event], str] = {
    ev.Fault: "bold white on red", ev.Alert: "bold black on yellow", ev.Detected: "bold green",
    ev.Restored: "bold green", ev.Milestone: "bold green", ev.Declaration: "magenta",
    ev.RaceStep: "bold red", ev.Inject: "cyan", ev.ScoreEvent: "bold", ev.Refused: "red",
    ev.Edit: "yellow", ev.Replay: "bold blue",
}
_SHOWN = ("role", "task", "statement", "ok", "rowcount", "rows", "error", "error_kind",
          "outcome", "next", "note", "how", "latency_minutes", "fault", "invariant", "relapse",
          "name", "count", "matched", "finding", "correct", "id", "label", "step", "title",
          "inject_kind", "source", "to", "until", "cost", "reason")
"""The fields the detail shows, in this order, for the events that have them."""


def notable(event: ev.Event) -> bool:
    """Worth stopping at while narrating: not the automation's routine work."""
    if isinstance(event, ev.Wait):
        return False
    if isinstance(event, ev.Statement):
        return not event.automated or not event.ok
    if isinstance(event, ev.Automation):
        return event.outcome not in ("applied", "skipped")
    return True


_ROUTINE = (ev.Wait, ev.TaskDue, ev.Automation, ev.AlertClear, ev.InvariantClear)


def matters(event: ev.Event) -> bool:
    """Listed by default: what the team and the facilitator did and what they were shown
    (statements, alerts, declarations, injects, notes, the score), not the automation's
    routine or every task falling due (`a` lists everything)."""
    if isinstance(event, ev.Statement):
        return not event.automated
    return not isinstance(event, _ROUTINE)


def line_of(event: ev.Event) -> str:
    """One line for the event list (the session's start gets its own short line)."""
    if isinstance(event, ev.SessionStart):
        players = ", ".join(event.players) or "nobody"
        return f"START {event.title or event.exercise} (players: {players})"
    return describe(event)


def _start_detail(event: ev.SessionStart) -> RenderableType:
    text = Text(f"{event.title or event.exercise}\n", style="bold")
    if event.summary:
        text.append(f"{event.summary}\n\n", style="italic")
    text.append(f"exercise: {event.exercise}\n")
    text.append(f"players hold: {', '.join(event.players) or 'nothing'}\n")
    text.append(f"automation plays: {', '.join(event.automated) or 'nothing'}\n")
    text.append(f"clock starts {event.sim_time} {event.zone} ({event.pace} pace)\n")
    return text


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        if any(isinstance(v, tuple) for v in value):
            return str([list(v) if isinstance(v, tuple) else v for v in value])
        return ", ".join(str(v) for v in value)
    return str(value)


def rulings(events: tuple[ev.Event, ...]) -> dict[int, ev.Facilitation]:
    """The facilitator's last ruling on each declaration, by the declaration's seq."""
    return {e.declaration: e for e in events
            if isinstance(e, ev.Facilitation) and e.action == "ruling"}


def _field(event: ev.Event, key: str, ruling: ev.Facilitation | None) -> object:
    """A field's value as the review shows it: a declaration the facilitator ruled on is as
    right as the ruling says, whatever the answer key could tell when it was made."""
    value = getattr(event, key, None)
    if key == "correct" and ruling is not None and isinstance(event, ev.Declaration):
        word = {"partly": "partly right"}.get(ruling.ruling, ruling.ruling)
        note = f": {ruling.text}" if ruling.text else ""
        return f"ruled {word} by the facilitator at {ruling.sim_time}{note}"
    return value


def event_detail(event: ev.Event, ruling: ev.Facilitation | None = None) -> RenderableType:
    """The event in full: its one line, its fields, its SQL; the score with every reason.
    `ruling`: the facilitator's last word on it, when it is a declaration."""
    head = Text(f"#{event.seq}  {event.sim_time}  {event.kind}\n", style="bold")
    if isinstance(event, ev.SessionStart):
        return Group(head, _start_detail(event))
    head.append(describe(event) + "\n", style=_STYLE.get(type(event), ""))
    parts: list[RenderableType] = [head]
    fields = Text()
    for key in _SHOWN:
        value = _field(event, key, ruling)
        if value in (None, "", ()):
            continue
        fields.append(f"{key}: ", style="dim")
        fields.append(f"{_shown(value)}\n")
    if fields:
        parts.append(fields)
    text = getattr(event, "text", None)
    if isinstance(text, str) and text:
        parts.append(Text(text + "\n", style="italic"))
    for key in ("sql", "before"):
        sql = getattr(event, key, None)
        if isinstance(sql, str) and sql.strip():
            if key == "before":
                parts.append(Text("before:", style="dim"))
            parts.append(Syntax(sql.strip(), "sql", word_wrap=True, background_color="default"))
    if isinstance(event, ev.ScoreEvent):
        reasons = Text("\nEvery point, with its reason:\n", style="bold")
        for reason in event.score.reasons:
            reasons.append(f"  - {reason}\n")
        parts.append(reasons)
    if isinstance(event, ev.Replay) and event.result is not None:
        for step in event.result.steps:
            parts.append(Text(f"  {step.id}: {step.status}  {step.outcome}"))
    return Group(*parts)


def world_text(state: WorldSoFar) -> Text:
    text = Text()
    for n, line in enumerate(state.lines()):
        style = ("bold red" if line.startswith("FAULT") else "bold" if line.startswith("SCORE")
                 else "bold" if n == 0 else "")
        text.append(line + "\n", style=style)
    return text


class DebriefScreen(Screen[None]):
    """The whole debrief as Markdown, for the end of the narration: debrief.md's text drawn
    by Rich in one widget, rendered once, in a worker, at the width it is shown at (or
    before the screen opens: `ready`). Textual's Markdown widget (a widget per block and per
    table cell) took ~2.5 s to open the flagship's debrief, and a Static holding Rich's
    Markdown, which renders it twice on the event loop, ~300 ms."""

    DEFAULT_CSS = """
    DebriefScreen > #debrief-bar { dock: top; height: 1; background: $panel; color: $text; }
    DebriefScreen > #review-debrief { scrollbar-gutter: stable; }
    """
    # the scrollbar's columns kept from the first frame: the text is rendered at the width
    # the empty screen has, which its scrollbar must not narrow once the text is in
    BINDINGS = [Binding("escape,q,d", "app.pop_screen", "Back")]

    def __init__(self, debrief: Debrief, folder: Path | None = None,
                 ready: tuple[int, Prerendered] | None = None) -> None:
        """`ready`: the text already rendered (`debrief_lines`) at a width, shown at once
        when the screen has that width."""
        super().__init__()
        self.debrief = debrief
        self.folder = folder
        self.rendered_width = 0
        self._ready = ready

    def compose(self) -> ComposeResult:
        saved = f" · saved as {self.folder / 'debrief.md'}" if self.folder else ""
        yield Static(Text(f" Debrief · Esc back{saved}", no_wrap=True, overflow="ellipsis"),
                     id="debrief-bar")
        with VerticalScroll(id="review-debrief"):
            yield Static("", id="debrief-text")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.call_after_refresh(self._fill)  # once laid out: the width is known

    def on_resize(self) -> None:
        self.call_after_refresh(self._fill)

    def _fill(self) -> None:
        width = self.query_one("#debrief-text", Static).content_region.width
        if width > 0 and width != self.rendered_width:
            self.rendered_width = width
            if self._ready is not None and self._ready[0] == width:
                self._show(self._ready[1], width)
            else:
                self._render_text(width)

    @work(thread=True, exclusive=True, exit_on_error=False, group="debrief-text")
    def _render_text(self, width: int) -> None:
        lines = debrief_lines(self.app, self.debrief, width)
        self.app.call_from_thread(self._show, lines, width)

    def _show(self, lines: Prerendered, width: int) -> None:
        if width == self.rendered_width:  # not resized since
            self.query_one("#debrief-text", Static).update(lines)


DEBRIEF_SCROLLBAR = 2
"""The columns DebriefScreen keeps for its scrollbar (Textual's default width)."""


def debrief_width(app: App[Any]) -> int:
    """The width DebriefScreen shows its text at in `app` as it is now."""
    return app.size.width - DEBRIEF_SCROLLBAR


def debrief_lines(app: App[Any], debrief: Debrief, width: int) -> Prerendered:
    """The debrief's text (debrief.md's) rendered at `width` (a worker thread: ~100 ms for
    the flagship's)."""
    options = app.console_options.update_width(width).update(highlight=False)
    return Prerendered(list(app.console.render(RichMarkdown(render(debrief, "md")), options)))


class ReviewApp(InertNotifications):
    """Read-only: step through a session's events; the world so far beside each."""

    TITLE = "raceday review"
    CSS = """
    #review-bar { dock: top; height: 1; background: $panel; color: $text; padding: 0 1; }
    #review-body { height: 1fr; }
    #review-events { width: 3fr; }
    #review-side { width: 2fr; border-left: vkey $primary 30%; }
    #review-detail { height: auto; padding: 0 1; }
    #review-world { height: auto; padding: 1 1; border-top: hkey $primary 30%; }
    """
    BINDINGS = [
        # priority: the event table would otherwise take these keys for its own scrolling
        Binding("right,n,space", "step(1)", "Next", priority=True),
        Binding("left,p,backspace", "step(-1)", "Previous", priority=True),
        Binding("right_square_bracket", "jump(1)", "Next notable"),
        Binding("left_square_bracket", "jump(-1)", "Prev notable"),
        Binding("home", "go(0)", "First", show=False, priority=True),
        Binding("end", "go(-1)", "Last", show=False, priority=True),
        *(Binding(key, f"moment('{kind}')", kind.capitalize())
          for key, kind, words in MOMENTS),
        Binding("a", "toggle_all", "All / what matters"),
        Binding("d", "debrief", "Debrief"),
        Binding("q,ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, events: tuple[ev.Event, ...], warning: str | None = None,
                 folder: Path | None = None) -> None:
        super().__init__()
        self.events = events
        self.warning = warning
        self.folder = folder
        self._debrief: tuple[Debrief, tuple[int, Prerendered]] | None = None
        """The debrief d shows, built once, and its text rendered at a width."""
        self.states = world_states(events)
        self.rulings = rulings(events)
        self.moments = key_moments(events)
        """Each kind of key moment -> its events' indexes (one key each jumps through them)."""
        self.everything = False
        self.rows = self._rows()
        """The events listed (indexes into `events`): what matters, or all of them."""
        self.index = 0
        self.detail: RenderableType = ""
        start = next((e for e in events if isinstance(e, ev.SessionStart)), None)
        self.session_title = (start.title or start.exercise) if start else "session"

    @classmethod
    def from_folder(cls, session_dir: Path) -> ReviewApp:
        """Read the transcript first, so a bad one fails before the screen opens."""
        log = read_events(session_dir)
        if not log.events:
            raise TranscriptError([f"{session_dir}: the transcript holds no events"])
        return cls(log.events, log.warning, session_dir)

    def compose(self) -> ComposeResult:
        yield Static(id="review-bar")
        with Horizontal(id="review-body"):
            table: DataTable[str | Text] = DataTable(id="review-events", cursor_type="row",
                                                     zebra_stripes=True)
            yield table
            with VerticalScroll(id="review-side"):
                yield Static(id="review-detail")
                yield Static(id="review-world")
        yield SteadyFooter()

    def _rows(self) -> list[int]:
        rows = [i for i, e in enumerate(self.events) if self.everything or matters(e)]
        return rows or list(range(len(self.events)))

    def _fill(self) -> None:
        table: DataTable[str | Text] = self.query_one("#review-events", DataTable)
        # clearing and filling move the cursor to the first row: not the reader's move (its
        # highlight, handled after `show` had moved on, sent the review back to the first
        # event, whose own highlight sent it forward again, for good)
        with table.prevent(DataTable.RowHighlighted):
            table.clear()
            for i in self.rows:
                event = self.events[i]
                style = _STYLE.get(type(event), "" if notable(event) else "dim")
                table.add_row(Text(str(event.seq)), Text(inert(event.sim_time, one_line=True)),
                              Text(line_of(event), style=style))

    def action_toggle_all(self) -> None:
        """a: every event, or only what matters (the event in hand stays in hand)."""
        self.everything = not self.everything
        here = self.index
        self.rows = self._rows()
        self._fill()
        kept = min(self.rows, key=lambda i: (abs(i - here), i))
        self.show(kept)
        self.notify("Every event listed." if self.everything else
                    "Only what matters listed (a: every event).", timeout=3)

    def on_mount(self) -> None:
        table: DataTable[str | Text] = self.query_one("#review-events", DataTable)
        table.add_columns("#", "time", "what")
        self._fill()
        table.focus()
        if self.warning:
            self.notify(self.warning, title="Transcript cut short", severity="warning",
                        timeout=8, markup=False)
        self.show(0)

    # -- moving --------------------------------------------------------------------------------

    def show(self, index: int) -> None:
        """Show event `index` (clamped): its detail, the world after it, the bar."""
        if not self.events:
            return
        self.index = max(0, min(index, len(self.events) - 1))
        if self.index not in self.rows:  # shown anyway: the nearest listed row is marked
            self.index = min(self.rows, key=lambda i: (abs(i - self.index), i))
        event = self.events[self.index]
        state = self.states[self.index]
        self.detail = event_detail(event, self.rulings.get(event.seq))
        if isinstance(event, ev.SessionStart):
            self.detail = Group(self.detail, self.moments_text())
        self.query_one("#review-detail", Static).update(self.detail)
        self.query_one("#review-world", Static).update(world_text(state))
        where = f"  ({self.folder})" if self.folder else ""
        listed = "" if self.everything else \
            f" · {len(self.rows)} that matter listed (a: all)"
        self.query_one("#review-bar", Static).update(Text(
            f"Review · {self.session_title} · event {self.index + 1}/{len(self.events)}"
            f"{listed} · {state.time}{where}"))
        table: DataTable[str | Text] = self.query_one("#review-events", DataTable)
        row = self.rows.index(self.index)
        if table.cursor_row != row:
            with table.prevent(DataTable.RowHighlighted):  # our own move, not the reader's
                table.move_cursor(row=row)

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        if 0 <= message.cursor_row < len(self.rows) \
                and self.rows[message.cursor_row] != self.index:
            self.show(self.rows[message.cursor_row])

    def action_step(self, delta: int) -> None:
        row = self.rows.index(self.index) + delta
        self.show(self.rows[max(0, min(row, len(self.rows) - 1))])

    def action_go(self, index: int) -> None:
        self.show(self.rows[0] if index >= 0 else self.rows[-1])

    def action_jump(self, direction: int) -> None:
        """To the next (or previous) notable event: the team, faults, alerts, the score."""
        row = self.rows.index(self.index) + direction
        while 0 <= row < len(self.rows):
            if notable(self.events[self.rows[row]]):
                self.show(self.rows[row])
                return
            row += direction
        self.show(self.rows[-1] if direction > 0 else self.rows[0])

    def moments_text(self) -> Text:
        """The moments that matter, each with its key: what a narration jumps between."""
        text = Text("\nThe moments that matter (one key each; again for the next):\n",
                    style="bold")
        for key, kind, words in MOMENTS:
            found = self.moments[kind]
            text.append(f"  {key}  ", style="bold reverse")
            text.append(f" {words}: ")
            if not found:
                text.append("none\n", style="dim")
                continue
            times = ", ".join(inert(self.events[i].sim_time) for i in found[:6])
            more = f" and {len(found) - 6} more" if len(found) > 6 else ""
            text.append(f"{len(found)} at {times}{more}\n",
                        style=_STYLE.get(type(self.events[found[0]]), ""))
        return text

    def action_moment(self, kind: str) -> None:
        """To the next moment of this kind after the event in hand (from the first again once
        past the last)."""
        found = self.moments.get(kind, ())
        words = next(w for _, k, w in MOMENTS if k == kind)
        if not found:
            self.notify(f"No {words} in this session.", timeout=3)
            return
        later = [i for i in found if i > self.index]
        target = later[0] if later else found[0]
        if target not in self.rows:  # listed only with every event: list them all
            self.everything = True
            self.rows = self._rows()
            self._fill()
        self.show(target)
        self.notify(f"{words.capitalize()}: {found.index(target) + 1} of {len(found)}",
                    timeout=2)

    def action_debrief(self) -> None:
        """d: the whole debrief, built once from the events (off the event loop: a
        20,000-event night takes a quarter of a second)."""
        if isinstance(self.screen, DebriefScreen):
            return
        if self._debrief is not None:
            debrief, ready = self._debrief
            self.push_screen(DebriefScreen(debrief, ready=ready))
            return
        self._build_debrief()

    @work(thread=True, exclusive=True, exit_on_error=False, group="review-debrief")
    def _build_debrief(self) -> None:
        """The debrief as `raceday debrief` gives it: with the room's after-action report
        edits (a broken aar.json is said once, and the debrief shown without them)."""
        debrief = build_debrief(self.events, self.warning)
        if self.folder is not None:
            try:
                debrief = with_edits(debrief, self.folder)
            except RacedayError as exc:
                self.call_from_thread(
                    self.notify, f"Shown without the after-action report's edits: "
                    f"{first_line(exc)}", title="aar.json", severity="warning", timeout=10)
        width = debrief_width(self)
        self._debrief = (debrief, (width, debrief_lines(self, debrief, width)))
        self.call_from_thread(self.action_debrief)

    @property
    def state(self) -> WorldSoFar:
        return self.states[self.index]


def run_review(session_dir: Path) -> int:
    """`raceday review SESSION_DIR`: errors (no transcript, a corrupt one) raise before the
    screen opens, as `TranscriptError`, for the CLI to print as one line."""
    app = ReviewApp.from_folder(session_dir)
    app.run()
    return 0
