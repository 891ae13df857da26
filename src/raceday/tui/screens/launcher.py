"""The launcher: every exercise (bundled and ./exercises), a mode and a pace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static

from raceday.engine.clock import Pace
from raceday.inert import inert
from raceday.tui.navigation import Navigator, navigator
from raceday.tui.screens.crash import WorkingScreen
from raceday.tui.settings import MODES
from raceday.tui.typing import after_moves
from raceday.tui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from raceday.engine.resume import Unfinished
    from raceday.exercise.catalog import ExerciseEntry
    from raceday.exercise.suggest import Suggestion

MODE_WORDS = {
    "solo": "solo: you play the main role; the automation plays everyone else",
    "team": "team: one screen, players take the keyboard in turn (F2 passes it on)",
    "onboarding": "onboarding: guided first steps, hints on offer (each costs points)",
}
TITLE_WIDTH = 44
ROLES_WIDTH = 24
"""The most of a title, and of the roles (else counted), the table shows: 120 columns hold
every column, "your scores" too."""
PACE_WORDS = {
    "turns": "turns: time moves when you act (each statement costs minutes)",
    "live": "live: the clock runs by itself at the speed below; the facilitator can pause",
}


class LauncherScreen(WorkingScreen):
    HELP = """\
# Choose an exercise

| key | does |
|---|---|
| up / down | choose an exercise |
| enter | read its briefing |
| m | mode: solo, team (hot seat), onboarding (guided, hints) |
| p | pace: turns (time moves when you act) or live (the clock runs) |
| s | speed of the live clock: each choice says how long the night lasts (60 to 90 min fits a game day) |
| u | night: the one the briefing tells, or an unknown night (drawn, told at the end) |
| r | resume an unfinished session (one a crash or a kill cut short; listed below the exercises) |
| q, ctrl+q | quit |
"""

    BINDINGS = [
        Binding("enter", "choose", "Briefing", priority=True),
        Binding("m", "mode", "Mode"),
        Binding("p", "pace", "Pace"),
        Binding("s", "speed", "Speed"),
        Binding("u", "unknown", "Unknown night"),
        Binding("r", "resume", "Resume", show=False),
        Binding("q,escape", "app.quit", "Quit", show=False),  # ctrl+q is shown
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    @dataclass
    class Found(Message):
        entries: list[Any]

    @dataclass
    class HistoryRead(Message):
        """The best and last score of each exercise played before (exercise id -> words),
        and the exercises finished, oldest first (what to suggest next)."""

        scores: dict[str, str]
        finished: list[str]

    @dataclass
    class FoundUnfinished(Message):
        sessions: list[Any]

    @dataclass
    class Checked(Message):
        """An exercise loaded with its SQL compiled against its world, or why it does not."""

        ident: str
        exercise: Any
        problems: tuple[str, ...]
        then: str  # "briefing", or the folder of the unfinished session to resume

    def __init__(self, select: str | None = None) -> None:
        super().__init__()
        self.entries: list[ExerciseEntry] = []
        self.scores: dict[str, str] = {}
        self.unfinished: list[Unfinished] = []
        self.select = select  # the exercise to highlight once found (the next act)
        self.checking = False  # an exercise chosen is being checked: a second Enter waits
        self.listed = False
        self.suggestion: Suggestion | None = None  # where to start, or what to play next

    @property
    def raceday(self) -> Navigator:
        return navigator(self.app)

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("raceday", "bold"), "  a tabletop incident exercise in "
                                   "real SQL: pick a night to relive"), id="launcher-title")
        yield Static("", id="launcher-start")
        yield DataTable(id="exercises", cursor_type="row", zebra_stripes=True)
        yield Static("Looking for exercises…", id="exercise-detail")
        yield Static("", id="launcher-settings")
        yield DataTable(id="unfinished", cursor_type="row")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._add_columns()
        self._show_settings()
        self.query_one("#unfinished", DataTable).display = False
        self.query_one("#launcher-start", Static).display = False
        # one thing at a time, the first frame first: the workers' imports (the history's
        # and the resume's pull in sqlite-utils) would hold the interpreter while it draws
        self.call_after_refresh(self._find)

    def _add_columns(self) -> None:
        """The table's columns; "your scores" beside the title once a session was played."""
        table = self.query_one("#exercises", DataTable)
        # Text, not str: a str label is read as markup, and Rich's markup imports its emoji
        # codes (2.5 ms of the first frame)
        table.add_column(Text("exercise"))
        if self.scores:
            table.add_column(Text("your scores"))
        table.add_columns(Text("length"), Text("level"), Text("roles"))

    @work(thread=True, exit_on_error=False, group="launcher")
    def _find(self) -> None:
        """Every exercise, read for what the table shows: its SQL is compiled against its
        world (which builds the world) only for the one chosen, so a large world costs the
        list nothing."""
        from raceday.engine.load import find_exercises

        self.post_message(self.Found(list(find_exercises(check_sql=False))))

    @work(thread=True, exit_on_error=False, group="launcher-check")
    def _check(self, entry: ExerciseEntry, then: str) -> None:
        from raceday.engine.load import load_exercise
        from raceday.errors import ExerciseError

        try:
            exercise = load_exercise(entry.path)
        except ExerciseError as exc:
            self.post_message(self.Checked(entry.id, None, tuple(exc.problems), then))
            return
        self.post_message(self.Checked(entry.id, exercise, (), then))

    @on(Checked)
    def _checked(self, message: Checked) -> None:
        from dataclasses import replace
        from pathlib import Path

        self.checking = False
        at = next((i for i, e in enumerate(self.entries) if e.id == message.ident), None)
        if message.exercise is None:
            if at is not None:  # the table shows it broken from now on, and why
                self.entries[at] = replace(self.entries[at], problems=message.problems,
                                           exercise=None)
                self._show_detail(at)
            self.notify("This exercise does not load; see why below.", severity="error")
            return
        if message.then == "briefing":
            self.raceday.open_briefing(message.exercise)
        else:
            self.raceday.resume_play(message.exercise, Path(message.then))

    @work(thread=True, exit_on_error=False, group="launcher-history")
    def _read_history(self) -> None:
        """Best and last scores from the history (a file read: never on the event loop)."""
        from raceday.history.report import best_and_last_of, load_attempts

        try:
            attempts, _ = load_attempts(self.raceday.settings.transcripts)
        except Exception:  # the history is a nicety: the launcher works without it
            return
        found = best_and_last_of(attempts)
        self.post_message(self.HistoryRead({k: v.words for k, v in found.items()},
                                           [a.exercise for a in attempts]))

    @on(HistoryRead)
    def _history_read(self, message: HistoryRead) -> None:
        self._suggest(message.finished)
        if not message.scores:
            return
        table = self.query_one("#exercises", DataTable)
        row = table.cursor_row
        self.scores = dict(message.scores)
        table.clear(columns=True)
        self._add_columns()
        self._add_rows()
        table.move_cursor(row=row)

    def _suggest(self, finished: list[str]) -> None:
        """Lead with where to start (nothing finished yet: the easiest exercise, guided) or
        what to play next; the cursor goes there unless an exercise was asked for."""
        from raceday.exercise.suggest import suggest

        found = suggest(self.entries, finished)
        self.suggestion = found
        line = self.query_one("#launcher-start", Static)
        if found is None:
            line.display = False
            return
        if found.first_run and not self.raceday.settings.mode_given:
            self.raceday.settings.mode = "onboarding"
        line.display = True
        table = self.query_one("#exercises", DataTable)
        row = table.cursor_row
        table.clear()
        self._add_rows()
        at = next((i for i, e in enumerate(self.entries) if e.id == found.id), row)
        table.move_cursor(row=row if self.select is not None else at)
        self._show_detail(table.cursor_row)

    def _show_suggestion(self, row: int) -> None:
        """The line that leads the list: where to start or what to play next, and that Enter
        reads its briefing only while the cursor is on it (the end screen's n puts the
        cursor on the next act, and the player may move it)."""
        found = self.suggestion
        if found is None:
            return
        here = 0 <= row < len(self.entries) and self.entries[row].id == found.id
        self.query_one("#launcher-start", Static).update(Text.assemble(
            ("▶ ", "bold"), (inert(found.why, one_line=True), "bold"),
            "  Enter reads its briefing." if here else ""))

    def _add_rows(self) -> None:
        table = self.query_one("#exercises", DataTable)
        tag = ""
        if self.suggestion is not None:
            tag = "  ◀ start here" if self.suggestion.first_run else "  ◀ next"
        for entry in self.entries:
            # the detail below names the roles, with the whole title
            name = entry.title or entry.id
            mine = tag if self.suggestion is not None and entry.id == self.suggestion.id else ""
            if len(name) + len(mine) > TITLE_WIDTH:
                name = name[:TITLE_WIDTH - len(mine) - 1].rstrip() + "…"
            title = Text(name, style="bold" if entry.ok else "red")
            title.append(mine, style="bold cyan")
            scores = (self.scores.get(entry.id, ""),) if self.scores else ()
            roles = ", ".join(entry.roles)
            if len(roles) > ROLES_WIDTH:
                roles = f"{len(entry.roles)} roles"
            # the level and role ids as Text: a DataTable reads a str cell as markup, and a
            # broken exercise's are whatever its file says
            table.add_row(title, *scores, f"{entry.length} min" if entry.length else "",
                          Text(inert(entry.level, one_line=True)),
                          Text(inert(roles, one_line=True)), key=entry.id)

    @on(Found)
    def _found(self, message: Found) -> None:
        if not self.listed:  # the list first, then what goes beside it
            self.listed = True
            self._read_history()
            self._find_unfinished()
        self.entries = list(message.entries)
        table = self.query_one("#exercises", DataTable)
        table.clear()
        self._add_rows()
        if not self.entries:
            self.query_one("#exercise-detail", Static).update(
                "No exercises found (bundled, or in ./exercises).")
        table.focus()
        row = next((i for i, e in enumerate(self.entries) if e.id == self.select), 0)
        if row:
            table.move_cursor(row=row)
        self._show_detail(row)

    # -- unfinished sessions (resume) ---------------------------------------------------

    @work(thread=True, exit_on_error=False, group="launcher-resume")
    def _find_unfinished(self) -> None:
        from raceday.engine.resume import unfinished_sessions

        self.post_message(self.FoundUnfinished(unfinished_sessions(self.raceday.settings.transcripts)))

    @on(FoundUnfinished)
    def _found_unfinished(self, message: FoundUnfinished) -> None:
        self.unfinished = list(message.sessions)
        table = self.query_one("#unfinished", DataTable)
        table.clear(columns=True)
        if not self.unfinished:
            table.display = False
            return
        table.add_columns(f"unfinished session ({len(self.unfinished)}): r resumes", "stopped at",
                          "folder")
        for found in self.unfinished:
            table.add_row(Text(inert(found.title or found.exercise, one_line=True)),
                          Text(found.clock), Text(inert(found.folder.name, one_line=True)))
        table.display = True
        table.styles.height = min(len(self.unfinished), 4) + 1

    def action_resume(self) -> None:
        """r: go on with the highlighted unfinished session (the newest first)."""
        from raceday.engine.resume import check_resumable
        from raceday.errors import RacedayError

        if not self.unfinished:
            self.notify("No unfinished session to resume.")
            return
        table = self.query_one("#unfinished", DataTable)
        row = table.cursor_row if 0 <= table.cursor_row < len(self.unfinished) else 0
        found = self.unfinished[row]
        try:
            check_resumable(found.folder)
        except RacedayError as exc:
            self.notify(str(exc), severity="error")
            return
        entry = next((e for e in self.entries if e.id == found.exercise), None)
        if entry is None or entry.exercise is None:
            self.notify(f"The exercise {found.exercise} is not found or "
                        "does not load: `raceday resume DIR --exercise PATH` names it.",
                        severity="error", markup=False)
            return
        if not self.checking:
            self.checking = True
            self._check(entry, str(found.folder))

    @on(DataTable.RowHighlighted, "#exercises")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, row: int) -> None:
        if not 0 <= row < len(self.entries):
            return
        self._show_suggestion(row)
        self._show_settings()
        entry = self.entries[row]
        text = Text()
        text.append(f"{entry.id}", style="bold")
        if entry.bundled:
            text.append("  (bundled)", style="dim")
        if entry.note:
            text.append(f"  {entry.note}", style="yellow")
        if entry.title:
            text.append(f"  {entry.title}")
        text.append("\n" + " ".join(entry.summary.split()))
        if entry.roles:
            text.append(f"\nroles: {', '.join(entry.roles)}", style="dim")
        text.append(_acts_line(entry, self.entries), style="cyan")
        if not entry.ok:
            text.append("\nDoes not load:\n", style="bold red")
            text.append("\n".join(entry.problems), style="red")
        self.query_one("#exercise-detail", Static).update(text)

    def _show_settings(self) -> None:
        s = self.raceday.settings
        text = Text()
        text.append(" m ", style="reverse")
        text.append(f" mode   {MODE_WORDS[s.mode]}\n")
        text.append(" p ", style="reverse")
        text.append(f" pace   {PACE_WORDS[s.pace.value]}\n")
        text.append(" s ", style="reverse")
        text.append(f" speed  {self._speed_words()}\n")
        text.append(" u ", style="reverse")
        text.append(f" night  {self._night_words()}")
        self.query_one("#launcher-settings", Static).update(text)

    def _night_words(self) -> str:
        """Which night the highlighted exercise plays: the one told, or an unknown one."""
        if not self.raceday.settings.unknown:
            return "the one the briefing tells"
        entry = self._current_entry()
        exercise = entry.exercise if entry is not None else None
        replay = exercise.replay if exercise is not None else None
        if replay is None or replay.nights is None:
            return "unknown, but this exercise has no family of nights: the one it tells"
        return (f"unknown: one of {len(replay.nights.family)} nights, drawn as it opens and "
                "told at the end")

    def _current_entry(self) -> ExerciseEntry | None:
        try:
            row = self.query_one("#exercises", DataTable).cursor_row
        except Exception:
            return None
        return self.entries[row] if 0 <= row < len(self.entries) else None

    def _speed_words(self) -> str:
        """The live speed, and what it makes of the highlighted exercise's night."""
        from raceday.engine.clock import length_words, real_minutes

        s = self.raceday.settings
        entry = self._current_entry()
        exercise = entry.exercise if entry is not None else None
        if exercise is None:
            return (f"{s.length:g} min game day" if s.length else f"{s.speed:g}x") + \
                " (live pace)"
        speed = s.speed_for(exercise)
        night = exercise.clock.length_minutes
        lasts = real_minutes(night, speed)
        head = f"{s.length:g} min game day: {speed:g}x" if s.length else f"{speed:g}x"
        if s.length and s.length > night:  # shorter than a game day: played in real time
            return (f"{speed:g}x, real time (live pace: the {night} simulated minutes last "
                    f"about {length_words(lasts)}, less than a {s.length:g} min game day)")
        return (f"{head} (live pace: the {night} simulated minutes last about "
                f"{length_words(lasts)})")

    def action_mode(self) -> None:
        s = self.raceday.settings
        s.mode = MODES[(MODES.index(s.mode) + 1) % len(MODES)]
        self._show_settings()

    def action_unknown(self) -> None:
        s = self.raceday.settings
        s.unknown = not s.unknown
        s.night = None
        self._show_settings()

    def action_pace(self) -> None:
        s = self.raceday.settings
        s.pace = Pace.LIVE if s.pace is Pace.TURNS else Pace.TURNS
        self._show_settings()

    def action_speed(self) -> None:
        """s: the next speed of the highlighted exercise's choices (game-day lengths first
        in the list are the slow ones; the last wraps round to the slowest)."""
        from raceday.engine.clock import speed_choices

        s = self.raceday.settings
        entry = self._current_entry()
        night = entry.exercise.clock.length_minutes if entry and entry.exercise else 225
        current = s.speed_for(entry.exercise) if entry and entry.exercise else s.speed
        choices = speed_choices(night, current)
        later = [c for c in choices if c.speed > current + 1e-9]
        choice = later[0] if later else choices[0]
        s.speed = choice.speed
        s.length = float(choice.target) if choice.target is not None else None
        self._show_settings()

    def action_choose(self) -> None:
        # Enter is a priority key: handled before the arrows pressed just ahead of it
        after_moves(self.focused or self.query_one("#exercises", DataTable), self._choose)

    def _choose(self) -> None:
        if self.focused is self.query_one("#unfinished", DataTable):
            self.action_resume()
            return
        table = self.query_one("#exercises", DataTable)
        row = table.cursor_row
        if not 0 <= row < len(self.entries):
            return
        entry = self.entries[row]
        if not entry.ok or entry.exercise is None:
            self.notify("This exercise does not load; see why below.", severity="error")
            return
        if not self.checking:
            self.checking = True
            self._check(entry, "briefing")


def _acts_line(entry: ExerciseEntry, entries: list[ExerciseEntry]) -> str:
    """Where this exercise sits in a night that several exercises play in acts."""
    from raceday.exercise.acts import next_act, previous_act

    if entry.exercise is None:
        return ""
    others = [e.exercise for e in entries if e.exercise is not None]
    before, after = previous_act(entry.exercise, others), next_act(entry.exercise, others)
    parts = []
    if before is not None:
        parts.append(f"the next act after {before.title}")
    if after is not None:
        parts.append(f"its next act: {after.title}")
    text = "; ".join(parts)
    return ("\n" + text[:1].upper() + text[1:]) if text else ""
