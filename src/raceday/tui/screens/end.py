"""The end: the score with its reasons, the team's times beside that night's, the transcript."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.markdown import Markdown as RichMarkdown
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from raceday.exercise.model import Exercise
from raceday.exercise.times import parse_time

_TEAM_KINDS = {"fault", "detected", "declaration", "milestone", "restored", "race_step",
               "invariant_clear"}


def _duration(minutes: int | None) -> str:
    if minutes is None:
        return "—"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _team_line(event: dict[str, Any]) -> str:
    kind = event.get("kind")
    if kind == "fault":
        return f"**fault**: {event.get('fault')}"
    if kind == "detected":
        return f"**surfaced** after {event.get('latency_minutes')} min ({event.get('how')})"
    if kind == "declaration":
        return f"{event.get('role')} declared: {event.get('text')}"
    if kind == "milestone":
        return f"**{event.get('label')}**"
    if kind == "restored":
        return "**restored**: no invariant is violated any more"
    if kind == "invariant_clear":
        return f"cleared: {event.get('fault')}"
    if kind == "race_step":
        return f"race step: {event.get('title') or event.get('step')}"
    return str(kind)


def end_markdown(exercise: Exercise, score: dict[str, Any], folder: Path,
                 events: list[dict[str, Any]]) -> str:
    lines = [f"# Score {score.get('total')}/{score.get('max')}", ""]
    fault = score.get("fault") or {}
    if fault.get("occurred"):
        lines.append(f"The fault began at **{fault.get('started_at')}**.")
    elif (steps := (score.get("guards") or {}).get("steps")) and all(
            isinstance(step, dict) and step.get("status") == "prevented" for step in steps):
        lines.append("**No fault occurred**: the race was prevented outright, so detection "
                     "and recovery were not needed (full marks).")
    else:
        detection = score.get("detection") or {}
        lines.append("**No fault occurred while you played**: the session ended before the "
                     "race did its damage"
                     + (" (detection and recovery count as not needed)."
                        if detection.get("points") == detection.get("max") else "."))
    lines += ["", "| part | points |", "|---|---|"]
    for name in ("detection", "guards", "recovery", "tasks"):
        section = score.get(name)
        if isinstance(section, dict):
            lines.append(f"| {name} | {section.get('points')}/{section.get('max')} |")
    hints = score.get("hints") or {}
    if hints.get("revealed"):
        lines.append(f"| hints | -{hints.get('cost')} ({len(hints['revealed'])} revealed) |")
    lines += ["", "## Why", ""]
    lines += [f"- {reason}" for reason in score.get("reasons", [])]
    detection = score.get("detection") or {}
    recovery = score.get("recovery") or {}
    lines += ["", "## Your times beside that night's", "",
              "| | your team | that night |", "|---|---|---|",
              f"| surfaced the fault after | {_duration(detection.get('latency_minutes'))} | "
              f"{_duration(detection.get('event_minutes'))} |",
              f"| DNS restored after | {_duration(recovery.get('minutes_to_restore'))} | "
              f"{_duration(recovery.get('event_minutes'))} |"]
    start = next((e for e in events if e.get("kind") == "session_start"), {})
    rows: list[tuple[int, int, str, str, str]] = []
    for order, event in enumerate(events):
        if event.get("kind") in _TEAM_KINDS:
            rows.append((int(event.get("minute", 0)), order, str(event.get("sim_time", "")),
                         _team_line(event), ""))
    for order, item in enumerate(start.get("event_timeline") or []):
        at = str(item.get("at", ""))
        try:
            minute = parse_time(at, exercise.clock.start)
        except ValueError:
            continue
        rows.append((minute, 10**6 + order, at, "", str(item.get("title", ""))))
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


class EndScreen(Screen[None]):
    HELP = """\
# The end

The score, every point with its reason, your times beside that night's, and where the
transcript was saved. **d** opens the whole debrief (the after-action report, also saved as
`debrief.md`); **q** (or ctrl+q) quits.
"""

    BINDINGS = [
        Binding("d", "debrief", "Debrief"),
        Binding("q,escape", "app.quit", "Quit", show=False),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    @dataclass
    class DebriefRead(Message):
        debrief: Any
        error: str | None = None

    def __init__(self, exercise: Exercise, score: dict[str, Any], folder: Path,
                 events: list[dict[str, Any]]) -> None:
        super().__init__()
        self.exercise = exercise
        self.score = score
        self.folder = folder
        self.events = events

    def compose(self) -> ComposeResult:
        yield Static(f" The end · {self.exercise.title}   d: the debrief   "
                     f"transcript: {self.folder}", id="end-bar")
        with VerticalScroll(id="end-scroll"):
            yield Static(RichMarkdown(end_markdown(self.exercise, self.score, self.folder,
                                                   self.events)), id="end-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#end-scroll").focus()

    def request_quit(self) -> None:
        self.app.exit(0)

    def action_debrief(self) -> None:
        """d: the session's debrief, built from its transcript (in a worker: it reads files)."""
        self._read_debrief()

    @work(thread=True, exit_on_error=False, group="debrief")
    def _read_debrief(self) -> None:
        from raceday.transcript.debrief import load_debrief

        try:
            self.post_message(self.DebriefRead(load_debrief(self.folder)))
        except Exception as exc:  # a transcript that cannot be read: say so, stay here
            self.post_message(self.DebriefRead(None, str(exc).strip().splitlines()[0]
                                               if str(exc).strip() else type(exc).__name__))

    @on(DebriefRead)
    def _debrief_read(self, message: DebriefRead) -> None:
        if message.debrief is None:
            self.notify(f"The debrief could not be built: {message.error}",
                        title="No debrief", severity="error", timeout=10)
            return
        from raceday.tui.screens.review import DebriefScreen

        self.app.push_screen(DebriefScreen(message.debrief, self.folder))
