"""The end: the score with its reasons, the team's times beside that night's, the transcript."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from raceday.errors import first_line
from raceday.exercise.model import Exercise
from raceday.exercise.times import parse_time
from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.transcript.verdicts import Detection, Recovery, Score
from raceday.transcript.wording import fault_sentence, night_sentence
from raceday.tui.screens.crash import WorkingScreen
from raceday.tui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from raceday.transcript.debrief.model import Debrief
    from raceday.tui.prerendered import Prerendered


def _duration(minutes: int | None) -> str:
    if minutes is None:
        return "—"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _team_line(event: ev.Event) -> str | None:
    """The team's side of the night, or None for an event that is not part of it."""
    if isinstance(event, ev.Fault):
        return f"**fault**: {event.fault}"
    if isinstance(event, ev.Detected):
        return f"**surfaced** after {event.latency_minutes} min ({event.how})"
    if isinstance(event, ev.Declaration):
        return f"{event.role} declared: {event.text}"
    if isinstance(event, ev.Milestone):
        return f"**{event.label}**"
    if isinstance(event, ev.Restored):
        return "**restored**: no invariant is violated any more"
    if isinstance(event, ev.InvariantClear):
        return f"cleared: {event.fault}"
    if isinstance(event, ev.RaceStep):
        return f"race step: {event.title or event.step}"
    return None


def end_markdown(exercise: Exercise, score: Score, folder: Path,
                 events: Sequence[ev.Event]) -> str:
    lines = [f"# Score {score.total}/{score.max}", "",
             f"Transcript saved in `{folder}` (**d** opens the debrief).", ""]
    revealed = next((e for e in events if isinstance(e, ev.NightRevealed)), None)
    if revealed is not None:  # an unknown night, told now that it is over
        lines += [night_sentence(revealed), ""]
    if score.fault.occurred:
        lines.append(f"The fault began at **{score.fault.started_at}**.")
    else:
        lines.append(fault_sentence(score.fault))
    lines += ["", "| part | points |", "|---|---|"]
    for name, part in score.parts:
        lines.append(f"| {name} | {part.points}/{part.max} |")
    if score.hints.revealed:
        lines.append(f"| hints | -{score.hints.cost} ({len(score.hints.revealed)} revealed) |")
    detection = score.detection or Detection(points=0, max=0)
    recovery = score.recovery or Recovery(points=0, max=0)
    lines += ["", "## Why", ""]
    lines += [f"- {reason}" for reason in score.reasons]
    lines += ["", "## Your times beside that night's", "",
              "| | your team | that night |", "|---|---|---|",
              f"| surfaced the fault after | {_duration(detection.latency_minutes)} | "
              f"{_duration(detection.event_minutes)} |",
              f"| restored for good after | {_duration(recovery.minutes_to_restore)} | "
              f"{_duration(recovery.event_minutes)} |"]
    start = next((e for e in events if isinstance(e, ev.SessionStart)), None)
    rows: list[tuple[int, int, str, str, str]] = []
    for order, event in enumerate(events):
        team = _team_line(event)
        if team is not None:
            rows.append((event.minute, order, event.sim_time, team, ""))
    for order, item in enumerate(start.event_timeline if start else ()):
        try:
            minute = parse_time(item.at, exercise.clock.start)
        except ValueError:
            continue
        rows.append((minute, 10**6 + order, item.at, "", item.title))
    if rows:
        lines += ["", "## The night, side by side", "", "| time | your team | that night |",
                  "|---|---|---|"]
        for _, _, at, team, night in sorted(rows):
            lines.append(f"| {at} | {team.replace('|', '/')} | {night.replace('|', '/')} |")
    lines += ["", "## Transcript", "", f"Saved in `{folder}`: `events.jsonl` (every event), "
              "`world.db` (the world as you left it)"
              + (", `debrief.md`" if (folder / "debrief.md").exists() else "") + ".",
              "", f"Read it again with `raceday transcript {folder}`."]
    return "\n".join(lines)


def _short_path(folder: Path) -> str:
    """The folder relative to the working directory when it is inside it."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(folder)


class EndScreen(WorkingScreen):
    HELP = """\
# The end

The score, every point with its reason, your times beside that night's, and where the
transcript was saved. **d** opens the whole debrief (the after-action report, also saved as
`debrief.md`); **n** opens the launcher on the next act of the same night, when an exercise
plays it, or else on the exercise to play next; **l** goes back to the launcher for another
game; **q** asks whether to go back to the launcher or quit; ctrl+q quits at once (the session
is saved).
"""

    BINDINGS = [
        Binding("d", "debrief", "Debrief"),
        Binding("l", "launcher", "Launcher"),
        Binding("n", "next_act", "Next"),
        Binding("q,escape", "ask_next", "Quit", show=False),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    @dataclass
    class NextActFound(Message):
        exercise: Exercise | None
        act: bool = True  # the rest of this night; False: the exercise to play next

    @dataclass
    class DebriefRead(Message):
        debrief: Any
        error: str | None = None
        ready: tuple[int, Prerendered] | None = None
        """Its text already rendered: (width, lines)."""

    def __init__(self, exercise: Exercise, score: ev.ScoreEvent, folder: Path,
                 events: Sequence[ev.Event], debrief: Debrief | None = None) -> None:
        super().__init__()
        self.exercise = exercise
        self.score = score.score
        self.folder = folder
        self.events = tuple(events)
        self.debrief = debrief
        """The debrief the session's end built (without the room's edits), or None."""
        self._ready: tuple[Debrief, int, Prerendered] | None = None
        """The debrief as d would show it, its text rendered at a width (`_prepare_debrief`)."""
        self.next_act: Exercise | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(f" The end · d: the debrief · transcript: "
                          f"{_short_path(self.folder)}"), id="end-bar")
        with VerticalScroll(id="end-scroll"):
            yield Static(RichMarkdown(end_markdown(self.exercise, self.score, self.folder,
                                                   self.events)), id="end-text")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#end-scroll").focus()
        self._find_next_act()
        self.call_after_refresh(self._prepare_debrief)  # once the score is on screen

    @work(thread=True, exit_on_error=False, group="debrief-ahead")
    def _prepare_debrief(self) -> None:
        """The debrief d opens, with its text rendered, while the players read the score:
        d then shows it at once (rendering the flagship's takes ~100 ms)."""
        from raceday.tui.screens.review import debrief_lines, debrief_width

        try:
            debrief = self._current_debrief()
            width = debrief_width(self.app)
            self._ready = (debrief, width, debrief_lines(self.app, debrief, width))
        except Exception:  # d builds it again, and says what is wrong
            return

    @work(thread=True, exit_on_error=False, group="next-act")
    def _find_next_act(self) -> None:
        """The exercise that plays the rest of this night, if one is installed; else the one
        the launcher will suggest next (what the history has finished, this one included),
        as the debrief's last line promises (reads files)."""
        from raceday.engine.load import find_exercises
        from raceday.exercise.acts import next_act
        from raceday.exercise.suggest import suggest

        entries = list(find_exercises(check_sql=False))
        others = [e.exercise for e in entries if e.exercise is not None]
        after = next_act(self.exercise, others)  # the launcher checks the one chosen
        if after is not None:
            self.post_message(self.NextActFound(after))
            return
        found = suggest(entries, [*self._finished(), self.exercise.id])
        chosen = next((e.exercise for e in entries if found is not None and e.id == found.id
                       and e.id != self.exercise.id), None)
        self.post_message(self.NextActFound(chosen, act=False))

    def _finished(self) -> list[str]:
        """The exercises the history has finished, oldest first (none when it is unread)."""
        from raceday.history.report import load_attempts

        settings = getattr(self.app, "settings", None)
        try:
            attempts, _ = load_attempts(settings.transcripts) if settings is not None else ([], [])
        except Exception:  # the history is a nicety: the end screen works without it
            return []
        return [a.exercise for a in attempts]

    @on(NextActFound)
    def _next_act_found(self, message: NextActFound) -> None:
        self.next_act = message.exercise
        self.refresh_bindings()  # n is offered once there is a next act (or a next exercise)
        if message.exercise is not None:
            what = "the next act" if message.act else "play next"
            self.query_one("#end-bar", Static).update(Text(  # a title and a path: as typed
                f" The end · d: the debrief · n: {what}, "
                f"{inert(message.exercise.title, one_line=True)} · "
                f"transcript: {_short_path(self.folder)}"))

    def action_next_act(self) -> None:
        """n: the launcher, with the exercise that plays the rest of the night (or the one to
        play next) highlighted: Enter there reads its briefing."""
        from raceday.tui.screens.launcher import LauncherScreen

        if self.next_act is None:
            self.notify("Nothing left to suggest: every exercise here is finished.", timeout=4)
            return
        self.app.switch_screen(LauncherScreen(select=self.next_act.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """n is offered only when there is a next act or an exercise to play next."""
        if action == "next_act" and self.next_act is None:
            return False
        return True

    def request_quit(self) -> None:
        """ctrl+q quits on the first press: the session is saved, nothing is lost."""
        self.app.exit(0)

    def action_ask_next(self) -> None:
        """q or Esc: back to the launcher (another exercise, another game), or quit."""
        from raceday.tui.screens.dialogs import ChoiceDialog

        def chosen(key: str | None) -> None:
            if key == "launcher":
                self.raceday_launcher()
            elif key == "quit":
                self.app.exit(0)

        self.app.push_screen(ChoiceDialog(
            "The session is saved. What next?",
            [("launcher", "Back to the launcher (play again)"), ("quit", "Quit raceday")]),
            chosen)

    def action_launcher(self) -> None:
        self.raceday_launcher()

    def raceday_launcher(self) -> None:
        from raceday.tui.screens.launcher import LauncherScreen

        self.app.switch_screen(LauncherScreen())

    def action_debrief(self) -> None:
        """d: the session's debrief, as its end built it, with the room's edits so far;
        without one, built from its transcript (in a worker: it reads files)."""
        self._read_debrief()

    def _current_debrief(self) -> Debrief:
        """The debrief with the room's edits as they are now (a worker thread: reads files)."""
        from raceday.transcript.debrief import load_debrief, with_edits

        return (load_debrief(self.folder) if self.debrief is None
                else with_edits(self.debrief, self.folder))

    @work(thread=True, exit_on_error=False, group="debrief")
    def _read_debrief(self) -> None:
        try:
            debrief = self._current_debrief()
            ready = self._ready
            self.post_message(self.DebriefRead(
                debrief, ready=(ready[1], ready[2]) if ready is not None
                and ready[0] == debrief else None))  # the room's edits since: rendered anew
        except Exception as exc:  # a transcript that cannot be read: say so, stay here
            self.post_message(self.DebriefRead(None, first_line(exc)))

    @on(DebriefRead)
    def _debrief_read(self, message: DebriefRead) -> None:
        if message.debrief is None:
            self.notify(f"The debrief could not be built: {message.error}",
                        title="No debrief", severity="error", timeout=10)
            return
        from raceday.tui.screens.review import DebriefScreen

        self.app.push_screen(DebriefScreen(message.debrief, self.folder, message.ready))
