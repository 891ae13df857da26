"""The debrief: what a team reads when the exercise ends, built from the transcript alone.

`build_debrief` turns a session's events into a `Debrief` (frozen values, no I/O): the summary
and score with every reason, the team's timeline beside that night's, every statement that
changed the world, the monitors and declarations, the guards and the replay, the article's
checklist with what the team did and did not do, and an after-action report skeleton.

Renderers turn it into Markdown (`debrief_markdown`), HTML (`debrief_html`), the terminal
(`debrief_terminal`, with Rich) and JSON (here). They import the model from this module, so it
imports them only when asked for: `render`, `debrief_command`, and the re-exported
`render_markdown`, `render_terminal` and `terminal_renderables` (see `__getattr__`).

Everything is inferred from events; where a transcript cannot tell, the debrief says so
("not seen in this session") rather than guess.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from raceday.errors import InputError, TranscriptError
from raceday.transcript.log import read_events
from raceday.transcript.timeline_chart import EVENT, TEAM, Chart, Mark, build_chart

if TYPE_CHECKING:  # at run time `__getattr__` imports them, when first asked for
    from raceday.transcript.debrief_markdown import render_markdown as render_markdown
    from raceday.transcript.debrief_terminal import render_terminal as render_terminal
    from raceday.transcript.debrief_terminal import (
        terminal_renderables as terminal_renderables,
    )

Event = dict[str, Any]

DEBRIEF_FILE = "debrief.md"
FORMATS = ("md", "html", "json", "terminal")
NOT_SEEN = "not seen in this session"

SOURCES: dict[str, str] = {
    "aws-summary": "AWS's post-event summary, read word for word in mirrors",
    "dat453": "AWS re:Invent 2025 talk DAT453, given by the DynamoDB team",
    "health-dashboard": "AWS Health Dashboard posts made during the night",
    "secondary": "careful secondary write-ups; not seen in AWS's own words",
    "exercise-assumption": "made up for play by this exercise; not a fact about the event",
    "exercise-figures": "the exercise's figures for that night, counted from the first symptom",
    "facilitator": "sent by the facilitator during the session",
}

PHASES: tuple[tuple[str, str], ...] = (
    ("first-symptom", "First symptom (the fault)"),
    ("detection", "Detection"),
    ("automation-stopped", "Automation stopped"),
    ("repair", "Hand repair"),
    ("restore", "Restored"),
)


# -- the model ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """Who played what, when, and the outcome in a few sentences."""

    exercise: str
    title: str
    text: str
    outcome: str
    players: tuple[str, ...]
    automated: tuple[str, ...]
    roles: tuple[tuple[str, str], ...]
    pace: str
    zone: str
    date: str
    clock_from: str
    clock_to: str
    wall_started: str | None
    wall_ended: str | None
    events: int
    ended: str


@dataclass(frozen=True)
class ScoreSection:
    """One part of the score, with the engine's reason for every point."""

    name: str
    points: int
    max: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ScoreReport:
    """The score event, as the engine wrote it, split for printing."""

    total: int
    max: int
    fault_occurred: bool
    fault_started_at: str | None
    sections: tuple[ScoreSection, ...]
    hints: tuple[str, ...]
    hint_cost: int
    reasons: tuple[str, ...]
    prevented_outright: bool
    ended: str


@dataclass(frozen=True)
class Phase:
    """One row of the timeline table: the team's moment beside that night's."""

    id: str
    label: str
    team_time: str | None
    team_after: int | None
    team_note: str
    event_time: str | None
    event_after: int | None
    event_note: str
    source: str


@dataclass(frozen=True)
class EventFact:
    """A moment of the real night that the exercise reveals, with its source.

    `time` is when it happened that night: the entry's `event_at` when the exercise gives
    one (a fact revealed at 02:40 about 05:38), else its `at`. `phase` (optional) names the
    timeline row it answers: first-symptom, detection, automation-stopped, repair, restore.
    """

    time: str
    title: str
    source: str
    phase: str = ""


@dataclass(frozen=True)
class Timeline:
    """The phases table, the facts of that night, and the marks for the chart."""

    phases: tuple[Phase, ...]
    facts: tuple[EventFact, ...]
    marks: tuple[Mark, ...]
    start: int
    end: int
    origin: int
    event_detection_minutes: int | None
    event_restore_minutes: int | None

    @property
    def has_event(self) -> bool:
        """Whether the exercise gives any times of a real event to compare with."""
        return bool(self.facts) or (self.event_detection_minutes is not None
                                    or self.event_restore_minutes is not None)

    @property
    def sources(self) -> list[str]:
        """The source tags the phases and facts cite, each once, sorted."""
        return sorted({p.source for p in self.phases if p.source}
                      | {f.source for f in self.facts if f.source})

    def chart(self) -> Chart:
        return build_chart(self.marks, self.start, self.end, self.origin)


@dataclass(frozen=True)
class Change:
    """A statement that wrote to the world (or tried to): who, when, what, and what it did."""

    seq: int
    time: str
    role: str
    automated: bool
    sql: str
    ok: bool
    rowcount: int | None
    error: str | None = None
    error_kind: str | None = None
    task: str | None = None
    statement: str | None = None
    break_glass: bool = False
    schema_changed: bool = False
    writes: tuple[str, ...] = ()

    @property
    def outcome(self) -> str:
        if not self.ok:
            word = "refused" if self.error_kind == "refused" else "error"
            return f"{word}: {self.error}"
        if self.schema_changed and not self.writes:
            return "schema changed"
        n = self.rowcount or 0
        return f"{n} row{'' if n == 1 else 's'} changed"


@dataclass(frozen=True)
class Refusal:
    """An action raceday refused (a monitor that is not a query, an unknown finding…)."""

    time: str
    role: str
    action: str
    error: str


@dataclass(frozen=True)
class MonitorInfo:
    """A saved monitor and what it did afterwards."""

    name: str
    role: str
    sql: str
    saved_at: str
    first_alert: str | None = None
    alerts: int = 0
    matched: bool = False
    error: str | None = None
    removed_at: str | None = None


@dataclass(frozen=True)
class Declaration:
    """A finding a player declared, and whether it was right."""

    time: str
    role: str
    finding: str
    text: str
    correct: bool


@dataclass(frozen=True)
class HintInfo:
    time: str
    id: str
    text: str
    cost: int


@dataclass(frozen=True)
class Edit:
    """A change to one of the automation's own statements."""

    time: str
    role: str
    statement: str
    sql: str
    before: str


@dataclass(frozen=True)
class StepOutcome:
    """A race step: what live play saw, and the score's verdict (by the replay when run).

    `live` is "happened" (at `time`) or "did not happen"; `verdict` is the score's
    "happened", "prevented" or "never reached" (empty without a score), `detail` its why.
    """

    id: str
    title: str
    live: str
    verdict: str = ""
    detail: str = ""
    time: str | None = None
    by_player: bool = False

    @property
    def outcome(self) -> str:
        """The verdict when there is one, else what live play saw."""
        return self.verdict or self.live

    @property
    def live_label(self) -> str:
        """What live play saw: 'happened at 23:48' (and who held the role), or why not."""
        if self.live != "happened":
            return self.live
        return f"happened at {self.time}" + (" (a player held the role)" if self.by_player else "")

    def describe(self) -> str:
        live = self.live_label
        if not self.verdict or (self.live == "happened" and self.verdict == "happened"
                                and self.detail in ("", f"at {self.time}")):
            return live
        verdict = self.verdict + (f" ({self.detail})" if self.detail else "")
        return f"live: {live}; scored: {verdict}"


@dataclass(frozen=True)
class GoodPath:
    """A write the guards must still allow, and whether they did."""

    id: str
    title: str
    ok: bool
    why: str


@dataclass(frozen=True)
class ReplayStep:
    step: str
    title: str
    outcome: str
    detail: str


@dataclass(frozen=True)
class Replay:
    """What the last replay event said; `ran` is False when there was none."""

    ran: bool
    time: str | None
    note: str
    steps: tuple[ReplayStep, ...] = ()
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Guards:
    """What the team put in place and what it did against the race."""

    schema_changes: tuple[Change, ...]
    edits: tuple[Edit, ...]
    steps: tuple[StepOutcome, ...]
    good_path: tuple[GoodPath, ...]
    replay: Replay


@dataclass(frozen=True)
class ChecklistItem:
    """One practice of the article's checklist, with the evidence from this session."""

    id: str
    practice: str
    status: str
    did: tuple[str, ...]
    did_not: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class CorrectiveAction:
    """A row of the improvement plan; owner and due date are for the team to fill in."""

    action: str
    origin: str
    owner: str = ""
    due: str = ""


@dataclass(frozen=True)
class AfterAction:
    strengths: tuple[str, ...]
    improvements: tuple[str, ...]
    actions: tuple[CorrectiveAction, ...]


@dataclass(frozen=True)
class Debrief:
    """Everything the debrief says about one session."""

    summary: Summary
    warning: str | None
    score: ScoreReport | None
    timeline: Timeline
    changes: tuple[Change, ...]
    failures: tuple[Change, ...]
    refusals: tuple[Refusal, ...]
    monitors: tuple[MonitorInfo, ...]
    declarations: tuple[Declaration, ...]
    hints: tuple[HintInfo, ...]
    guards: Guards
    checklist: tuple[ChecklistItem, ...]
    after_action: AfterAction
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def team_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if not c.automated)

    @property
    def automation_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.automated)


# -- reading events safely -----------------------------------------------------------------------


def _str(event: Event, key: str, default: str = "") -> str:
    value = event.get(key)
    return default if value is None else str(value)


def _int(event: Event, key: str) -> int | None:
    value = event.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _hhmm(text: str) -> int | None:
    match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})(?::\d{2})?\s*", text)
    return int(match[1]) * 60 + int(match[2]) if match else None


def duration(minutes: int | None) -> str:
    """'50 min', '2 h 37 min', '1 h'; an em dash for unknown."""
    if minutes is None:
        return "—"
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


class _Clock:
    """Turns events' minutes and clock faces into each other, from the clock's start."""

    def __init__(self, start: Event, events: Sequence[Event]) -> None:
        origin = None
        iso = _str(start, "clock_start")
        if "T" in iso:
            origin = _hhmm(iso.split("T", 1)[1][:5])
        if origin is None:
            origin = next((o for e in events if (o := _hhmm(_str(e, "sim_time"))) is not None), 0)
        self.origin = origin
        self.date = iso.split("T", 1)[0] if "T" in iso else ""

    def time(self, minute: int) -> str:
        total = (self.origin + minute) % (24 * 60)
        return f"{total // 60:02d}:{total % 60:02d}"

    def minute_of_face(self, face: str) -> int | None:
        total = _hhmm(face)
        return None if total is None else (total - self.origin) % (24 * 60)

    def minute(self, event: Event) -> int:
        minute = _int(event, "minute")
        if minute is not None:
            return minute
        return self.minute_of_face(_str(event, "sim_time")) or 0


# -- building ------------------------------------------------------------------------------------


class _Builder:
    """Reads the events once and answers the questions each section asks."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = list(events)
        self.start = next((e for e in self.events if e.get("kind") == "session_start"), {})
        self.clock = _Clock(self.start, self.events)
        self.score_event = next((e for e in reversed(self.events) if e.get("kind") == "score"),
                                None)
        self.faults = self.kind("fault")
        self.first_fault = next((e for e in self.faults if not e.get("relapse")), None)
        self.fault_minute = self.minute(self.first_fault) if self.first_fault else None
        self.detected = next(iter(self.kind("detected")), None)
        self.restores = self.kind("restored")
        figures = _dict(self.start.get("event_figures"))
        self.event_detection = _int(figures, "detection_minutes")
        self.event_restore = _int(figures, "restore_minutes")
        self.complete = self.score_event is not None
        self.last_time = self.time(self.events[-1]) if self.events else ""
        self.stop = self._stopped()
        self.repair = self._repair()
        self.steps = self._steps()

    @property
    def never(self) -> str:
        """'never', or for a transcript that stops early, 'not by 09:08 (transcript ends)'."""
        return "never" if self.complete else f"not by {self.last_time} (the transcript ends)"

    @property
    def relapse_times(self) -> list[str]:
        """When a fault came back after a restore (each minute once)."""
        return list(dict.fromkeys(self.time(f) for f in self.faults if f.get("relapse")))

    def kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.get("kind") == kind]

    def minute(self, event: Event) -> int:
        return self.clock.minute(event)

    def time(self, event: Event) -> str:
        return _str(event, "sim_time") or self.clock.time(self.minute(event))

    def after_fault(self, event: Event | None) -> int | None:
        if event is None or self.fault_minute is None:
            return None
        return self.minute(event) - self.fault_minute

    def _milestone(self, exact: str, word: str) -> Event | None:
        milestones = self.kind("milestone")
        found = next((m for m in milestones if m.get("id") == exact), None)
        return found or next(
            (m for m in milestones
             if word in _str(m, "id").lower() or word in _str(m, "label").lower()), None)

    def _stopped(self) -> tuple[Event, str] | None:
        milestone = self._milestone("automation-stopped", "stop")
        if milestone is not None:
            return milestone, _str(milestone, "label") or _str(milestone, "id")
        skipped = next((e for e in self.kind("automation") if e.get("outcome") == "skipped"), None)
        if skipped is not None:
            return skipped, f"{_str(skipped, 'role')} skipped its run ({_str(skipped, 'note')})"
        return None

    def _repair(self) -> tuple[Event, str] | None:
        milestone = self._milestone("repaired", "repair")
        if milestone is not None:
            return milestone, _str(milestone, "label") or _str(milestone, "id")
        if self.fault_minute is None:
            return None
        for event in self.kind("statement"):
            change = _change(event, self)
            if (change is not None and not change.automated and change.ok
                    and not change.schema_changed and (change.rowcount or 0) > 0
                    and self.minute(event) >= self.fault_minute):
                return event, "first hand change to the world after the fault"
        return None

    def _steps(self) -> tuple[StepOutcome, ...]:
        happened: dict[str, Event] = {}
        for event in self.kind("race_step"):
            if event.get("happened", True):
                happened.setdefault(_str(event, "step"), event)
        guards = _dict(_dict(self.score_event).get("guards"))
        verdicts: dict[str, tuple[str, str, str]] = {}
        for item in guards.get("steps") or []:  # structured verdicts (newer transcripts)
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                word = {"not reached": "never reached"}.get(_str(item, "status"), _str(item, "status"))
                verdicts[item["id"]] = (word, _str(item, "detail"), _str(item, "title"))
        for reason in _strs(guards.get("reasons")):  # older transcripts: read the reasons
            if parsed := _step_reason(reason):
                verdicts.setdefault(parsed[0], parsed[1:])
        for status in ("happened", "prevented"):
            for step in _strs(guards.get(status)):
                verdicts.setdefault(step, (status, "", ""))
        live_word = "did not happen" if self.complete else f"not by {self.last_time}"
        outcomes: list[StepOutcome] = []
        for step in dict.fromkeys([*verdicts, *happened]):
            verdict, detail, title = verdicts.get(step, ("", "", ""))
            hit = happened.get(step)
            outcomes.append(StepOutcome(
                step, _str(hit, "title") if hit and hit.get("title") else title,
                "happened" if hit else live_word, verdict, detail,
                self.time(hit) if hit else None, bool(hit and hit.get("by_player"))))
        return tuple(outcomes)


_STEP_REASON = re.compile(r"^guards \+\d+/\d+: (\S+) (happened|was prevented|was never reached)"
                          r"(.*)$")


def _step_reason(reason: str) -> tuple[str, str, str, str] | None:
    """(step, verdict, detail, title) from a score reason such as
    'guards +10/10: stale-apply was prevented at 23:48: refused (The delayed …)'."""
    match = _STEP_REASON.match(reason)
    if match is None:
        return None
    verdict = {"happened": "happened", "was prevented": "prevented"}.get(match[2], "never reached")
    rest = match[3].strip()
    title = ""
    if rest.endswith(")"):
        depth = 0
        for index in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[index], 0)
            if depth == 0:
                title, rest = rest[index + 1:-1], rest[:index].strip()
                break
    return match[1], verdict, rest, title


def _change(event: Event, b: _Builder) -> Change | None:
    """A statement event as a Change when it wrote, or tried to (None for a plain read)."""
    rowcount = _int(event, "rowcount")
    writes = _strs(event.get("writes"))
    schema = bool(event.get("schema_changed"))
    ok = bool(event.get("ok", True))
    is_read = event.get("rows") is not None and not writes
    if ok and (is_read or (rowcount is None and not writes and not schema)):
        return None
    return Change(
        seq=_int(event, "seq") or 0,
        time=b.time(event),
        role=_str(event, "role", "?"),
        automated=bool(event.get("automated")),
        sql=_str(event, "sql").strip(),
        ok=ok,
        rowcount=rowcount,
        error=event.get("error") if isinstance(event.get("error"), str) else None,
        error_kind=event.get("error_kind") if isinstance(event.get("error_kind"), str) else None,
        task=event.get("task") if isinstance(event.get("task"), str) else None,
        statement=event.get("statement") if isinstance(event.get("statement"), str) else None,
        break_glass=bool(event.get("break_glass")),
        schema_changed=schema,
        writes=writes,
    )


def build_debrief(events: Sequence[Event], warning: str | None = None) -> Debrief:
    """The whole debrief of a session, from its events (as `read_events` returns them)."""
    if not events:
        raise TranscriptError(["the transcript holds no events: there is nothing to debrief"
                               + (f" ({warning})" if warning else "")])
    b = _Builder(events)
    score = _score(b)
    changes: list[Change] = []
    failures: list[Change] = []
    for event in b.kind("statement"):
        change = _change(event, b)
        if change is None:
            continue
        (changes if change.ok else failures).append(change)
    monitors = _monitors(b)
    declarations = tuple(
        Declaration(b.time(e), _str(e, "role"), _str(e, "finding"), _str(e, "text"),
                    bool(e.get("correct")))
        for e in b.kind("declaration"))
    guards = Guards(
        schema_changes=tuple(c for c in changes if c.schema_changed and not c.automated),
        edits=tuple(Edit(b.time(e), _str(e, "role"), _str(e, "statement"), _str(e, "sql"),
                         _str(e, "before")) for e in b.kind("edit")),
        steps=b.steps,
        good_path=_good_path(b),
        replay=_replay(b),
    )
    timeline = _timeline(b, guards.replay)
    checklist = _checklist(b, tuple(changes), monitors, guards)
    notes = []
    if score is None:
        notes.append("The transcript has no score: the session stopped before it ended, so the "
                     "score and anything judged at the end (good paths, health) are missing.")
    summary = _summary(b, score, declarations)
    return Debrief(
        summary=summary,
        warning=warning,
        score=score,
        timeline=timeline,
        changes=tuple(changes),
        failures=tuple(failures),
        refusals=tuple(Refusal(b.time(e), _str(e, "role", "-"), _str(e, "action"),
                               _str(e, "error")) for e in b.kind("refused")),
        monitors=monitors,
        declarations=declarations,
        hints=tuple(HintInfo(b.time(e), _str(e, "id"), _str(e, "text"), _int(e, "cost") or 0)
                    for e in b.kind("hint")),
        guards=guards,
        checklist=checklist,
        after_action=_after_action(b, score, declarations, guards, checklist),
        notes=tuple(notes),
    )


def _score(b: _Builder) -> ScoreReport | None:
    event = b.score_event
    if event is None:
        return None
    sections = []
    for name in ("detection", "guards", "recovery", "tasks"):
        data = _dict(event.get(name))
        if data:
            sections.append(ScoreSection(name, _int(data, "points") or 0, _int(data, "max") or 0,
                                         _strs(data.get("reasons"))))
    fault = _dict(event.get("fault"))
    hints = _dict(event.get("hints"))
    prevented = _strs(_dict(event.get("guards")).get("prevented"))
    return ScoreReport(
        total=_int(event, "total") or 0,
        max=_int(event, "max") or 0,
        fault_occurred=bool(fault.get("occurred")),
        fault_started_at=fault.get("started_at") if isinstance(fault.get("started_at"), str)
        else None,
        sections=tuple(sections),
        hints=_strs(hints.get("revealed")),
        hint_cost=_int(hints, "cost") or 0,
        reasons=_strs(event.get("reasons")),
        prevented_outright=not fault.get("occurred") and bool(prevented),
        ended=_str(event, "reason", "ended"),
    )


def _summary(b: _Builder, score: ScoreReport | None,
             declarations: tuple[Declaration, ...]) -> Summary:
    s = b.start
    roles = _dict(s.get("roles"))
    last = b.events[-1]
    walls = [w for e in b.events if (w := _str(e, "wall_time"))]
    ended = ("interrupted: no score" if score is None else
             "played to the end" if score.ended == "ended" else score.ended)
    return Summary(
        exercise=_str(s, "exercise", "?"),
        title=_str(s, "title") or _str(s, "exercise", "an exercise"),
        text=_str(s, "summary"),
        outcome=_outcome(b, score, declarations),
        players=_strs(s.get("players")),
        automated=_strs(s.get("automated")),
        roles=tuple((str(k), str(v)) for k, v in roles.items()),
        pace=_str(s, "pace", "?"),
        zone=_str(s, "zone"),
        date=b.clock.date,
        clock_from=b.time(b.events[0]),
        clock_to=b.time(last),
        wall_started=walls[0] if walls else None,
        wall_ended=walls[-1] if walls else None,
        events=len(b.events),
        ended=ended,
    )


def _outcome(b: _Builder, score: ScoreReport | None,
             declarations: tuple[Declaration, ...]) -> str:
    parts: list[str] = []
    if b.first_fault is None:
        prevented = [s.id for s in b.steps if s.outcome == "prevented"]
        if prevented:
            parts.append("No fault occurred: the team's guards prevented the race "
                         f"({', '.join(prevented)}), so detection and recovery were not needed.")
        elif score is None:
            parts.append("No fault had occurred when the transcript stops.")
        else:
            parts.append("No fault occurred in this session.")
    else:
        parts.append(f"The fault ({_str(b.first_fault, 'fault')}) began at "
                     f"{b.time(b.first_fault)}.")
        if b.detected is not None:
            latency = _int(b.detected, "latency_minutes")
            versus = (f"; that night it took {duration(b.event_detection)}"
                      if b.event_detection is not None else "")
            parts.append(f"The team surfaced it at {b.time(b.detected)}, {duration(latency)} "
                         f"later ({_str(b.detected, 'how')}{versus}).")
        elif b.complete:
            parts.append("The team never surfaced it with a monitor or a right finding.")
        else:
            parts.append(f"The team had not surfaced it by {b.last_time}, where the transcript "
                         "ends.")
        wrong = [d for d in declarations if not d.correct]
        if wrong:
            parts.append(f"Wrong finding{'s' if len(wrong) > 1 else ''} declared: "
                         + ", ".join(f"'{d.text}' at {d.time}" for d in wrong) + ".")
        if b.stop is not None:
            parts.append(f"The automation was stopped at {b.time(b.stop[0])}.")
        else:
            parts.append("The automation was never stopped." if b.complete else
                         "The automation had not been stopped.")
        parts.extend(_restore_sentences(b))
    if score is not None:
        parts.append(f"Score {score.total}/{score.max}.")
    return " ".join(parts)


def _restore_sentences(b: _Builder) -> list[str]:
    if not b.restores:
        return ["The world was never restored." if b.complete else
                "The world had not been restored."]
    first = b.restores[0]
    versus = f"; that night: {duration(b.event_restore)}" if b.event_restore is not None else ""
    out = [f"The world was first restored at {b.time(first)}, "
           f"{duration(b.after_fault(first))} after the fault{versus}."]
    relapses = [f for f in b.faults if f.get("relapse")]
    if relapses:
        out.append("The fault came back at " + ", ".join(b.relapse_times) + ".")
    last_fault = max((b.minute(f) for f in b.faults), default=-1)
    last_restore = max(b.minute(r) for r in b.restores)
    out.append("At the end the world was healthy." if last_restore >= last_fault
               else "At the end the fault was still present.")
    return out


def _monitors(b: _Builder) -> tuple[MonitorInfo, ...]:
    monitors: list[MonitorInfo] = []
    for event in b.events:
        kind = event.get("kind")
        name = _str(event, "name")
        if kind == "monitor_saved":
            monitors.append(MonitorInfo(name, _str(event, "role"), _str(event, "sql"),
                                        b.time(event)))
            continue
        if kind not in {"alert", "monitor_error", "monitor_removed"}:
            continue
        index = next((i for i in range(len(monitors) - 1, -1, -1) if monitors[i].name == name),
                     None)
        if index is None:
            continue
        m = monitors[index]
        if kind == "alert":
            monitors[index] = MonitorInfo(
                m.name, m.role, m.sql, m.saved_at, m.first_alert or b.time(event), m.alerts + 1,
                m.matched or bool(event.get("matched")), m.error, m.removed_at)
        elif kind == "monitor_error":
            monitors[index] = MonitorInfo(m.name, m.role, m.sql, m.saved_at, m.first_alert,
                                          m.alerts, m.matched, _str(event, "error"), m.removed_at)
        else:
            monitors[index] = MonitorInfo(m.name, m.role, m.sql, m.saved_at, m.first_alert,
                                          m.alerts, m.matched, m.error, b.time(event))
    return tuple(monitors)


def _good_path(b: _Builder) -> tuple[GoodPath, ...]:
    guards = _dict(_dict(b.score_event).get("guards"))
    paths = guards.get("good_path")
    if not isinstance(paths, list):
        return ()
    return tuple(GoodPath(_str(p, "id"), _str(p, "title"), bool(p.get("ok")), _str(p, "why"))
                 for p in paths if isinstance(p, dict))


_REPLAY_ID = ("id", "step", "name")
_REPLAY_STATUS = ("status", "result")
_SKIP = {"seq", "sim_time", "minute", "wall_time", "kind", "steps", "available", "note"}


def _replay(b: _Builder) -> Replay:
    """The last replay event: each step's verdict and what the replayed world did."""
    replays = b.kind("replay")
    if not replays:
        return Replay(False, None, "No replay was run in this session.")
    event = replays[-1]
    steps_data = event.get("steps")
    note = _str(event, "note")
    if event.get("available") is False or not isinstance(steps_data, list):
        return Replay(False, b.time(event),
                      f"No replay result{': ' + note if note else ''}.")
    steps = []
    for item in steps_data:
        data = _dict(item)
        ident = next((_str(data, k) for k in _REPLAY_ID if data.get(k) is not None), "?")
        status = next((_str(data, k) for k in _REPLAY_STATUS if data.get(k) is not None),
                      _str(data, "outcome"))
        steps.append(ReplayStep(ident, _str(data, "title"), status, _replay_detail(data)))
    return Replay(True, b.time(event), note, tuple(steps), _replay_details(event))


def _replay_detail(data: dict[str, Any]) -> str:
    parts = []
    if data.get("at"):
        parts.append(f"at {_str(data, 'at')}")
    if data.get("outcome") and any(data.get(k) is not None for k in _REPLAY_STATUS):
        parts.append(_str(data, "outcome"))
    if data.get("next"):
        parts.append(f"then {_str(data, 'next')}")
    faults = _strs(data.get("faults_after"))
    if faults:
        parts.append("faults after it: " + "; ".join(faults))
    known = {*_REPLAY_ID, *_REPLAY_STATUS, "title", "at", "outcome", "next", "faults_after"}
    parts += [f"{k}: {_plain(v)}" for k, v in data.items()
              if k not in known and v not in (None, "", [], {})]
    return "; ".join(parts)


def _replay_details(event: Event) -> tuple[str, ...]:
    lines = []
    prevented, happened = _strs(event.get("prevented")), _strs(event.get("happened"))
    if prevented:
        lines.append("Prevented in the replay: " + ", ".join(prevented) + ".")
    if happened:
        lines.append("Happened in the replay: " + ", ".join(happened) + ".")
    if "fault_at" in event:
        fault_at = event.get("fault_at")
        lines.append(f"In the replay the fault began at {fault_at}." if fault_at
                     else "In the replay no fault occurred.")
    if "blocked_good_writes" in event:
        blocked = [_dict(x) for x in event.get("blocked_good_writes") or []]
        lines += [f"A good write of the normal night was refused: {_str(x, 'task')} at "
                  f"{_str(x, 'at')} ({_str(x, 'outcome')})." for x in blocked]
        if not blocked:
            lines.append("No good write of the normal night was refused.")
    lines += [f"Warning: {w}" for w in _strs(event.get("warnings"))]
    folder = _str(event, "folder")
    if folder:
        path = Path(folder)
        shown = f"{path.parent.name}/{path.name}" if path.parent.name == "replay" else folder
        lines.append(f"The replay's own transcript: {shown} (in the session folder).")
    guards = _dict(event.get("guards"))
    if guards:
        penalty = _int(guards, "penalty") or 0
        lines.append(f"This replay alone earns guards {_int(guards, 'points')}/{_int(guards, 'max')}"
                     + (f" (after -{penalty} for the blocked good writes)." if penalty else "."))
    known = {"prevented", "happened", "fault_at", "blocked_good_writes", "warnings", "folder",
             "guards"}
    lines += [f"{k}: {_plain(v)}" for k, v in event.items()
              if k not in _SKIP | known and v not in (None, "", [], {})]
    return tuple(lines)


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_plain(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    return str(value)


# -- the timeline ------------------------------------------------------------------------------


def _timeline(b: _Builder, replay: Replay) -> Timeline:
    facts = []
    for entry in b.start.get("event_timeline") or []:
        data = _dict(entry)
        facts.append(EventFact(_str(data, "event_at") or _str(data, "at"), _str(data, "title"),
                               _str(data, "source"), _str(data, "phase")))
    team = _team_phases(b)
    event_side = _event_phases(b, tuple(facts))
    phases = tuple(
        Phase(pid, label, team[pid][0], team[pid][1], team[pid][2], event_side[pid][0],
              event_side[pid][1], event_side[pid][2], event_side[pid][3])
        for pid, label in PHASES)
    end = max([b.minute(e) for e in b.events] + [0])
    marks = _marks(b, tuple(facts), phases, replay, end)
    return Timeline(phases, tuple(facts), marks, 0, end, b.clock.origin,
                    b.event_detection, b.event_restore)


TeamSide = tuple[str | None, int | None, str]
EventSide = tuple[str | None, int | None, str, str]


def _team_phases(b: _Builder) -> dict[str, TeamSide]:
    missing = "not needed: no fault" if b.first_fault is None else b.never
    out: dict[str, TeamSide] = {pid: (None, None, missing) for pid, _ in PHASES}
    if b.first_fault is not None:
        out["first-symptom"] = (b.time(b.first_fault), 0, _str(b.first_fault, "fault"))
    else:
        out["first-symptom"] = (None, None, "no fault in this session")
    if b.detected is not None:
        out["detection"] = (b.time(b.detected), _int(b.detected, "latency_minutes"),
                            _str(b.detected, "how"))
    if b.stop is not None:
        out["automation-stopped"] = (b.time(b.stop[0]), b.after_fault(b.stop[0]), b.stop[1])
    if b.repair is not None:
        out["repair"] = (b.time(b.repair[0]), b.after_fault(b.repair[0]), b.repair[1])
    if b.restores:
        first = b.restores[0]
        relapses = [f for f in b.faults if f.get("relapse")]
        note = "no invariant violated any more"
        if relapses:
            again = [b.time(r) for r in b.restores[1:]]
            note = (f"undone at {', '.join(b.relapse_times)}"
                    + (f"; restored again at {', '.join(again)}" if again else
                       "; not restored again"))
        out["restore"] = (b.time(first), b.after_fault(first), note)
    return out


_FIGURES = "exercise-figures"


def _event_phases(b: _Builder, facts: tuple[EventFact, ...]) -> dict[str, EventSide]:
    """That night's side of each phase.

    A revealed fact tagged with a phase (`phase` on the exercise's reveal inject) gives the
    time and its source. Otherwise the exercise's figures (minutes from the first symptom to
    detection and to restore) give an offset; a revealed fact at exactly that offset from the
    team's own fault lends its time, title and source (the exercise's clock is that night's).
    """
    known = bool(facts) or b.event_detection is not None or b.event_restore is not None
    blank = "not in this exercise's timeline" if known else ""
    out: dict[str, EventSide] = {pid: (None, None, blank, "") for pid, _ in PHASES}
    tagged = {f.phase: f for f in facts if f.phase}
    first = tagged.get("first-symptom")
    first_minute = b.clock.minute_of_face(first.time) if first else None
    detection = tagged.get("detection")
    if first_minute is None and detection is not None and b.event_detection is not None:
        found = b.clock.minute_of_face(detection.time)  # that night's first symptom, by figure
        first_minute = found - b.event_detection if found is not None else None
    figure_of = {"first-symptom": 0, "detection": b.event_detection,
                 "restore": b.event_restore}
    for pid, fact in tagged.items():
        if pid not in out:
            continue
        minute = b.clock.minute_of_face(fact.time)
        after = (minute - first_minute if minute is not None and first_minute is not None
                 else figure_of.get(pid))
        out[pid] = (fact.time, after, fact.title, fact.source)
    figures = (("first-symptom", 0 if b.event_detection is not None
                or b.event_restore is not None else None),
               ("detection", b.event_detection), ("restore", b.event_restore))
    for pid, figure in figures:
        if pid in tagged or figure is None:
            continue
        match = None
        if b.fault_minute is not None:
            face = b.clock.time(b.fault_minute + figure)
            match = next((f for f in facts if f.time == face), None)
        if match is not None:
            out[pid] = (match.time, figure, match.title, match.source)
        elif figure == 0:
            out[pid] = (None, 0, "the moment that night's figures count from", _FIGURES)
        else:
            out[pid] = (None, figure, f"{duration(figure)} after the first symptom", _FIGURES)
    return out


def _marks(b: _Builder, facts: tuple[EventFact, ...], phases: tuple[Phase, ...],
           replay: Replay, end: int) -> tuple[Mark, ...]:
    """The chart's moments; that night's figures only where they fall within the session."""
    marks: list[Mark] = []

    def team(event: Event, kind: str, label: str) -> None:
        marks.append(Mark(TEAM, b.minute(event), b.time(event), kind, label))

    for event in b.events:
        kind = event.get("kind")
        if kind == "fault":
            team(event, "relapse" if event.get("relapse") else "fault",
                 ("fault again: " if event.get("relapse") else "fault: ") + _str(event, "fault"))
        elif kind == "detected":
            team(event, "detected", f"detected ({_str(event, 'how')})")
        elif kind == "milestone":
            team(event, "milestone", _str(event, "label") or _str(event, "id"))
        elif kind == "restored":
            team(event, "restored", "restored")
        elif kind == "declaration":
            mark = "right" if event.get("correct") else "wrong"
            team(event, "declaration", f"declared ({mark}): {_str(event, 'text')}")
        elif kind == "race_step" and event.get("happened", True):
            team(event, "race_step", f"race step: {_str(event, 'step')}")
    if replay.ran and replay.time is not None:
        minute = b.clock.minute_of_face(replay.time)
        if minute is not None:
            marks.append(Mark(TEAM, minute, replay.time, "replay", "replay"))
    fact_minutes = set()
    for fact in facts:
        minute = b.clock.minute_of_face(fact.time)
        if minute is None or minute > end:
            continue
        fact_minutes.add(minute)
        marks.append(Mark(EVENT, minute, fact.time, "reveal", fact.title, fact.source))
    if b.fault_minute is not None:
        for phase in phases:
            if phase.event_time is None and phase.event_after is not None:
                minute = b.fault_minute + phase.event_after
                if minute not in fact_minutes and minute <= end:
                    marks.append(Mark(EVENT, minute, b.clock.time(minute), "figure",
                                      f"{phase.label.lower()} that night "
                                      f"(+{duration(phase.event_after)})", phase.source))
    return tuple(marks)


# -- the checklist -------------------------------------------------------------------------------

STALE, COUNTS, NEVER, CLEANUP, RECOVERY, LIMITS = (
    "read-decide-write", "row-counts", "never-states", "least-power-cleanup",
    "recovery-under-load", "removal-limits")

CHECKLIST: tuple[tuple[str, str, str], ...] = (
    (STALE, "Read, decide, write later",
     "A write decided on an earlier read must prove, as it writes, that what it read still "
     "holds: a version or fencing token in the same statement."),
    (COUNTS, "Row counts",
     "Every conditional write's changed-row count is read: zero means the writer lost, and "
     "it re-reads or stops instead of carrying on."),
    (NEVER, "States that must never exist",
     "The states that must never exist (an endpoint with no address, a pointer to a plan "
     "that is gone) are written down and refused by the database."),
    (CLEANUP, "Least power for clean-up jobs",
     "A clean-up job cannot delete what is still in use: a foreign key that restricts, a "
     "soft delete, a delay before the real delete."),
    (RECOVERY, "Recovery rehearsed under load",
     "The recovery is practised with the automation and the load still running, not only "
     "from a clean start."),
    (LIMITS, "Limits on what one automation may remove",
     "One automation run cannot remove more than a set amount, and a kill switch is within "
     "reach."),
)

_STEP_ITEM = {"stale-apply": STALE, "active-plan-delete": CLEANUP, "empty-answer": NEVER,
              "wedged-automation": NEVER}
_STEP_WORDS = ((STALE, ("stale", "lost", "overwrit", "late")),
               (CLEANUP, ("delete", "clean", "purge", "gc")),
               (NEVER, ("empty", "wedge", "zero", "dangling", "rollback")))
_CLEANUP_WORDS = ("clean", "delete", "purge", "gc", "collect")


def step_item(step: str) -> str | None:
    """Which checklist practice a race step tests (DESIGN's names, else words in the id)."""
    if step in _STEP_ITEM:
        return _STEP_ITEM[step]
    lowered = step.lower()
    return next((item for item, words in _STEP_WORDS if any(w in lowered for w in words)), None)


def _status(did: Sequence[str], did_not: Sequence[str]) -> str:
    if did and did_not:
        return "partly done"
    if did:
        return "done"
    if did_not:
        return "not done"
    return NOT_SEEN


def _step_lines(steps: Iterable[StepOutcome], item: str) -> tuple[list[str], list[str]]:
    did, did_not = [], []
    for step in steps:
        if step_item(step.id) != item:
            continue
        name = f"the race step {step.id}" + (f" ({step.title})" if step.title else "")
        if step.live == "happened":
            who = " (a player held the role)" if step.by_player else ""
            did_not.append(f"{name} happened at {step.time}{who}")
            if step.verdict == "prevented":
                did.append(f"the replay showed the team's guards now prevent {step.id}")
        elif step.verdict == "prevented":
            did.append(f"{name} was prevented")
        elif step.verdict == "happened":
            did_not.append(f"the replay showed {step.id} still happens against the team's "
                           "schema")
    return did, did_not


def _guards_before(guards: Guards, minute: int | None, b: _Builder) -> str:
    if minute is None:
        return ""
    n = sum(1 for c in guards.schema_changes if (b.clock.minute_of_face(c.time) or 0) <= minute)
    n += sum(1 for e in guards.edits if (b.clock.minute_of_face(e.time) or 0) <= minute)
    if n == 0:
        return "No guard (schema change or edit to the automation) was in place by then."
    return (f"{n} guard{'s were' if n != 1 else ' was'} in place by then (see 'Guards'), and "
            "did not stop it.")


def _checklist(b: _Builder, changes: tuple[Change, ...], monitors: tuple[MonitorInfo, ...],
               guards: Guards) -> tuple[ChecklistItem, ...]:
    items: list[ChecklistItem] = []
    steps = guards.steps
    cleanup_edits = [e for e in guards.edits
                     if any(w in e.statement.lower() for w in _CLEANUP_WORDS)]
    other_edits = [e for e in guards.edits if e not in cleanup_edits]
    for item, title, _ in CHECKLIST:
        did, did_not = _step_lines(steps, item)
        note = ""
        if item == STALE:
            did += [f"edited the automation's statement {e.statement} at {e.time}"
                    for e in other_edits]
            stale = [s for s in steps if step_item(s.id) == STALE and s.live == "happened"]
            if stale and stale[0].time:
                note = _guards_before(guards, b.clock.minute_of_face(stale[0].time), b)
        elif item == COUNTS:
            did, did_not, note = _row_counts(b, changes)
        elif item == NEVER:
            did += [f"monitor '{m.name}' watched for it from {m.saved_at}"
                    + (f" and alerted at {m.first_alert}" if m.first_alert else "")
                    for m in monitors if m.matched]
            did_not += _fault_spans(b)
        elif item == CLEANUP:
            did += [f"edited the clean-up statement {e.statement} at {e.time}"
                    for e in cleanup_edits]
        elif item == RECOVERY:
            did, did_not, note = _recovery_evidence(b, guards)
        elif item == LIMITS:
            did, did_not, note = _limits(b, changes, steps)
        items.append(ChecklistItem(item, title, _status(did, did_not), tuple(did),
                                   tuple(did_not), note))
    return tuple(items)


def _row_counts(b: _Builder, changes: tuple[Change, ...]) -> tuple[list[str], list[str], str]:
    """Zero-row writes that were not clean-ups finding nothing, and what followed each."""
    did, did_not = [], []
    by_seq = {c.seq: c for c in changes}
    pending: dict[str, list[Change]] = {}
    for event in b.events:
        kind = event.get("kind")
        task = _str(event, "task")
        if kind == "statement" and event.get("automated"):
            change = by_seq.get(_int(event, "seq") or -1)
            if change is not None and change.rowcount == 0 and not _is_delete(change) and (
                    not change.schema_changed):
                pending.setdefault(task, []).append(change)
            continue
        if kind != "automation":
            continue
        lost = pending.pop(task, [])
        if not lost or event.get("outcome") != "zero_rows":
            continue
        what = (f"{_str(event, 'role')}'s {lost[0].statement or task} changed 0 rows at "
                f"{lost[0].time}")
        follow = _str(event, "next")
        if follow in ("stopped", "gave up"):
            did.append(f"{what}, and the automation {follow} instead of carrying on")
        elif follow:
            did.append(f"{what}, and the automation noticed ({follow})")
        else:
            did_not.append(f"{what}, and the automation carried on as if it had worked")
    zero = [c for c in changes if not c.automated and not c.schema_changed and c.rowcount == 0
            and not _is_delete(c)]
    note = ""
    if zero:
        note = (f"The team's own writes changed 0 rows {len(zero)} time"
                f"{'s' if len(zero) != 1 else ''} (at {', '.join(c.time for c in zero[:6])}"
                f"{'…' if len(zero) > 6 else ''}); whether anyone read the count is not in the "
                "transcript.")
    elif not did and not did_not:
        note = "No update changed 0 rows, so reading the count was never put to the test."
    return did, did_not, note


def _fault_spans(b: _Builder) -> list[str]:
    lines = []
    faults = b.faults
    clears = b.kind("invariant_clear")
    for fault in faults:
        fault_minute = b.minute(fault)
        name = _str(fault, "invariant")
        clear = next((c for c in clears if _str(c, "invariant") == name
                      and b.minute(c) >= fault_minute), None)
        again = " again" if fault.get("relapse") else ""
        span = (f"from {b.time(fault)} to {b.time(clear)} "
                f"({duration(b.minute(clear) - fault_minute)})" if clear is not None
                else f"from {b.time(fault)} to the end")
        lines.append(f"the state that must never exist{again}, {_str(fault, 'fault')}, "
                     f"existed {span}")
    return lines


def _recovery_evidence(b: _Builder, guards: Guards) -> tuple[list[str], list[str], str]:
    did: list[str] = []
    did_not: list[str] = []
    if b.first_fault is None:
        replayed = (f" (the replay at {guards.replay.time} rehearsed the race, not a recovery)"
                    if guards.replay.ran else "")
        return did, did_not, (f"No fault occurred, so no recovery was practised{replayed}; play "
                              "the exercise again as it happened to practise one.")
    note = ("Whether the team's real recovery paths are tested under load is not in a "
            "transcript; this session is one such rehearsal.")
    stop, repair = b.stop, b.repair
    if b.restores:
        first = b.restores[0]
        running = stop is None or b.minute(stop[0]) > b.minute(first)
        did.append(f"the team restored the world at {b.time(first)}"
                   + (" with the automation still running" if running else
                      " after stopping the automation"))
    else:
        did_not.append("the world was not restored by the end of the session" if b.complete
                       else f"the world had not been restored by {b.last_time}")
    if stop is not None and repair is not None:
        if b.minute(stop[0]) <= b.minute(repair[0]):
            did.append(f"the automation was stopped ({b.time(stop[0])}) before the hand "
                       f"repair ({b.time(repair[0])})")
        else:
            did_not.append(f"the hand repair ({b.time(repair[0])}) came before the automation "
                           f"was stopped ({b.time(stop[0])})")
    elif repair is not None:
        did_not.append("the automation was never stopped around the hand repair")
    for time in b.relapse_times:
        did_not.append(f"the repair was undone at {time}: the fault came back")
    return did, did_not, note


_DELETE = re.compile(r"\s*(?:WITH\b.*?\bDELETE\b|DELETE\b)", re.IGNORECASE | re.DOTALL)


def _is_delete(change: Change) -> bool:
    return _DELETE.match(change.sql) is not None


def _limits(b: _Builder, changes: tuple[Change, ...],
            steps: tuple[StepOutcome, ...]) -> tuple[list[str], list[str], str]:
    did: list[str] = []
    did_not: list[str] = []
    deletes = [c for c in changes if c.automated and _is_delete(c)]
    for step in steps:
        if step_item(step.id) == CLEANUP and step.live == "happened":
            did_not.append(f"one clean-up run removed what was in use ({step.id} at {step.time})")
        elif step_item(step.id) == CLEANUP and step.outcome == "prevented":
            did.append(f"the clean-up was kept from removing what was in use ({step.id})")
    if b.stop is not None:
        did.append(f"the kill switch was used: {b.stop[1]} at {b.time(b.stop[0])}")
    note = ""
    total = sum(c.rowcount or 0 for c in deletes)
    if deletes and not total:
        note = (f"The automation's deletes ran {len(deletes)} time"
                f"{'s' if len(deletes) != 1 else ''} and removed nothing.")
    elif deletes:
        largest = max(deletes, key=lambda c: c.rowcount or 0)
        note = (f"The automation deleted {total} row{'s' if total != 1 else ''} in "
                f"{len(deletes)} run{'s' if len(deletes) != 1 else ''}; the largest single "
                f"run removed {largest.rowcount or 0} ({largest.role}"
                f"{' ' + largest.statement if largest.statement else ''} at {largest.time}). "
                "Whether a cap existed that was never reached is not in the transcript.")
    elif not did and not did_not:
        note = "No automation removed anything in this session."
    return did, did_not, note


# -- after-action --------------------------------------------------------------------------------

ACTIONS: dict[str, str] = {
    STALE: "Make every late write state the version (or fencing token) it was decided on, in "
           "the same statement, and refuse it when that is no longer current.",
    COUNTS: "Treat a write that changed 0 rows as a lost race: re-read and decide again, or "
            "stop; never carry on as if it worked.",
    NEVER: "Let the database refuse the state that must never exist (a CHECK or trigger for "
           "an endpoint with no address, a foreign key for every pointer), and keep a monitor "
           "on it.",
    CLEANUP: "Restrict the clean-up to what nothing uses (a foreign key with ON DELETE "
             "RESTRICT, or a soft delete with a delayed purge).",
    RECOVERY: "Write down the recovery (stop the automation, repair, check the repair holds) "
              "and rehearse it with the automation running.",
    LIMITS: "Cap how much one automation run may remove, and document where the kill switch "
            "is and who may pull it.",
}


def _after_action(b: _Builder, score: ScoreReport | None,
                  declarations: tuple[Declaration, ...], guards: Guards,
                  checklist: tuple[ChecklistItem, ...]) -> AfterAction:
    strengths: list[str] = []
    improvements: list[str] = []
    actions: list[CorrectiveAction] = []
    prevented = [s.id for s in guards.steps if s.outcome == "prevented"]
    happened = [s for s in guards.steps if s.live == "happened"]
    if prevented:
        strengths.append(f"Guards prevented the race step{'s' if len(prevented) > 1 else ''} "
                         f"{', '.join(prevented)}.")
    if happened:
        improvements.append("The race ran its course: " + ", ".join(
            f"{s.id} at {s.time}" for s in happened) + ".")
    if b.first_fault is not None:
        detected = _dict(b.detected)
        latency = _int(detected, "latency_minutes")
        if latency is None:
            improvements.append("The fault was never surfaced by a monitor or a right finding."
                                if b.complete else
                                f"The fault had not been surfaced by {b.last_time}.")
            actions.append(CorrectiveAction(
                f"Add a monitor that alerts on the fault itself ({_str(b.first_fault, 'fault')})"
                ", so the alarm that points at the cause is not lost in the noise.", "detection"))
        elif b.event_detection is None or latency <= b.event_detection:
            versus = (f"; that night: {duration(b.event_detection)}"
                      if b.event_detection is not None else "")
            strengths.append(f"Surfaced the fault {duration(latency)} after it began "
                             f"({_str(detected, 'how')}{versus}).")
        else:
            improvements.append(f"Surfacing the fault took {duration(latency)}, longer than "
                                f"that night's {duration(b.event_detection)}.")
            actions.append(CorrectiveAction(
                "Add a monitor on the fault's own symptom so it is surfaced in minutes.",
                "detection"))
        stop, repair = b.stop, b.repair
        if stop is not None and repair is not None:
            if b.minute(stop[0]) <= b.minute(repair[0]):
                strengths.append(f"Stopped the automation ({b.time(stop[0])}) before repairing "
                                 f"by hand ({b.time(repair[0])}).")
            else:
                improvements.append(f"Repaired by hand ({b.time(repair[0])}) before stopping "
                                    f"the automation ({b.time(stop[0])}).")
        elif stop is None:
            improvements.append("The automation was never stopped while the fault was present."
                                if b.complete else
                                f"The automation had not been stopped by {b.last_time}.")
        relapses = list({b.time(f): f for f in b.faults if f.get("relapse")}.values())
        if b.restores and not relapses:
            minutes = b.after_fault(b.restores[0])
            versus = (f" (that night: {duration(b.event_restore)})"
                      if b.event_restore is not None else "")
            strengths.append(f"Restored the world {duration(minutes)} after the fault{versus}, "
                             "and the repair held.")
        for relapse in relapses:
            running = stop is None or b.minute(stop[0]) > b.minute(relapse)
            improvements.append(f"The repair was undone at {b.time(relapse)}: the fault came "
                                "back" + (" while the automation was still running."
                                          if running else "."))
        if not b.restores and b.complete:
            improvements.append("The world was not restored by the end.")
    for d in declarations:
        if d.correct:
            strengths.append(f"Declared a right finding at {d.time}: {d.text}.")
        else:
            improvements.append(f"Declared a wrong finding at {d.time}: {d.text}. What "
                                "evidence pointed there?")
    for path in guards.good_path:
        if not path.ok:
            improvements.append(f"A guard also blocks the good path: {path.title} ({path.why}).")
            actions.append(CorrectiveAction(
                f"Rework the guard that blocks '{path.title}': it must refuse the stale write "
                "and still allow the good one.", "guards"))
    if guards.replay.ran:
        strengths.append(f"Replayed the race against the team's schema at {guards.replay.time}.")
    titles = {item: title for item, title, _ in CHECKLIST}
    for item in checklist:
        if item.status in ("not done", "partly done"):
            actions.append(CorrectiveAction(ACTIONS[item.id], f"checklist: {titles[item.id]}"))
    if score is None:
        improvements.append("The session was interrupted before it ended; play it to the end "
                            "for a score.")
    return AfterAction(tuple(strengths), tuple(improvements), tuple(actions))


# -- shared by the renderers (Markdown, HTML, terminal) -------------------------------------------


def after_label(minutes: int | None) -> str:
    return "—" if minutes is None else ("T+0" if minutes == 0 else f"T+{duration(minutes)}")


def source_tag(tag: str) -> str:
    return f"[{tag}]" if tag else ""


def source_text(tag: str) -> str:
    """What a source tag stands for."""
    return SOURCES.get(tag, "as the exercise names it")


def group_automation(d: Debrief) -> list[tuple[str, str, str, str, int, int]]:
    """(role, statement, outcome, times, runs, rows) per automation statement and outcome, over
    every write the automation made or tried, in order."""
    runs = sorted(d.automation_changes + tuple(c for c in d.failures if c.automated),
                  key=lambda c: c.seq)
    groups: dict[tuple[str, str, str], list[Change]] = {}
    for c in runs:
        outcome = ("changed rows" if (c.rowcount or 0) > 0 else "changed 0 rows") if c.ok else (
            f"failed: {c.error}")
        groups.setdefault((c.role, c.statement or c.task or "-", outcome), []).append(c)
    out = []
    for (role, statement, outcome), items in groups.items():
        times = [c.time for c in items]
        shown = ", ".join(times) if len(times) <= 6 else f"{times[0]} … {times[-1]}"
        out.append((role, statement, outcome, shown, len(items),
                    sum(c.rowcount or 0 for c in items if c.ok)))
    return out


# -- JSON ----------------------------------------------------------------------------------------


def render_json(d: Debrief) -> str:
    """The debrief as one JSON object (stable keys; for tools)."""
    data = {"format": "raceday-debrief", "version": 1, **asdict(d)}
    data["summary"]["roles"] = dict(d.summary.roles)
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


# -- files and the command ------------------------------------------------------------------------


def render(d: Debrief, fmt: str) -> str:
    """The debrief in a text format: md, html or json (each renderer imported when asked for)."""
    if fmt == "md":
        from raceday.transcript.debrief_markdown import render_markdown

        return render_markdown(d)
    if fmt == "html":
        from raceday.transcript.debrief_html import render_html

        return render_html(d)
    if fmt == "json":
        return render_json(d)
    raise InputError([f"unknown debrief format {fmt!r}; formats are md, html, json"])


def load_debrief(session_dir: Path) -> Debrief:
    """Read a session folder (or its events.jsonl) and build its debrief."""
    log = read_events(session_dir)
    try:
        return build_debrief(log.events, log.warning)
    except TranscriptError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise TranscriptError([f"{session_dir}: the events do not read as a raceday session "
                               f"({type(exc).__name__}: {exc})"]) from None


def write_debrief(folder: Path) -> Path:
    """Write `debrief.md` into a session folder (called when a session ends); returns its path."""
    debrief = load_debrief(folder)
    path = folder / DEBRIEF_FILE
    path.write_text(render(debrief, "md"), encoding="utf-8")
    return path


def debrief_command(session_dir: Path, fmt: str = "md", output: Path | None = None,
                    console: Console | None = None) -> int:
    """`raceday debrief SESSION_DIR [--format md|html|json] [-o FILE]`: stdout or a file."""
    out = console or Console()
    if fmt not in FORMATS:
        raise InputError([f"unknown debrief format {fmt!r}; formats are {', '.join(FORMATS)}"])
    debrief = load_debrief(session_dir)
    if debrief.warning:
        sys.stderr.write(f"raceday: warning: {debrief.warning}\n")
    if fmt == "terminal":
        from raceday.transcript.debrief_terminal import render_terminal

        render_terminal(debrief, out)
        return 0
    text = render(debrief, fmt)
    if output is None:
        out.file.write(text)
        out.file.flush()
        return 0
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TranscriptError([f"{output}: cannot write the debrief: {exc.strerror}"]) from None
    out.print(f"Debrief written to {output}", markup=False, highlight=False)
    return 0


# -- walking a session (for `raceday review`) -----------------------------------------------------


@dataclass(frozen=True)
class WorldSoFar:
    """What a facilitator can say about the world after an event, from the events so far."""

    seq: int
    time: str
    faults: tuple[str, ...] = ()
    fault_began: str | None = None
    detected: str | None = None
    restores: tuple[str, ...] = ()
    relapses: tuple[str, ...] = ()
    milestones: tuple[str, ...] = ()
    monitors: tuple[str, ...] = ()
    alerting: tuple[str, ...] = ()
    declarations: tuple[str, ...] = ()
    race_steps: tuple[str, ...] = ()
    team_writes: int = 0
    automation_writes: int = 0
    guards: int = 0
    hints: int = 0
    automation: tuple[str, ...] = ()
    score: str | None = None

    def lines(self) -> list[str]:
        """The summary as short lines, for a side panel."""
        out = [f"Clock {self.time}  (event {self.seq})"]
        if self.faults:
            out.append("FAULT: " + "; ".join(self.faults))
        elif self.fault_began:
            out.append("healthy now (fault began " + self.fault_began + ")")
        else:
            out.append("healthy: no fault so far")
        if self.detected:
            out.append(f"detected: {self.detected}")
        if self.restores:
            out.append("restored at " + ", ".join(self.restores))
        if self.relapses:
            out.append("fault came back at " + ", ".join(self.relapses))
        out += [f"milestone: {m}" for m in self.milestones]
        if self.monitors:
            alerting = f" (alerting: {', '.join(self.alerting)})" if self.alerting else ""
            out.append(f"monitors: {', '.join(self.monitors)}{alerting}")
        out += [f"declared: {x}" for x in self.declarations]
        out += [f"race step: {x}" for x in self.race_steps]
        out.append(f"writes: team {self.team_writes}, automation {self.automation_writes}; "
                   f"guards {self.guards}; hints {self.hints}")
        out += [f"automation: {x}" for x in self.automation]
        if self.score:
            out.append(f"SCORE {self.score}")
        return out


def world_states(events: Sequence[Event]) -> tuple[WorldSoFar, ...]:
    """The world so far after each event, in order (one per event)."""
    b = _Builder(events) if events else None
    states: list[WorldSoFar] = []
    faults: dict[str, str] = {}
    state = WorldSoFar(0, "")
    automation: dict[str, str] = {}
    for event in events:
        kind = event.get("kind")
        time = b.time(event) if b else ""
        changes: dict[str, Any] = {"seq": _int(event, "seq") or 0, "time": time}
        if kind == "fault":
            faults[_str(event, "invariant")] = _str(event, "fault")
            if event.get("relapse"):
                changes["relapses"] = (*state.relapses, time)
            elif state.fault_began is None:
                changes["fault_began"] = time
        elif kind == "invariant_clear":
            faults.pop(_str(event, "invariant"), None)
        elif kind == "restored":
            changes["restores"] = (*state.restores, time)
        elif kind == "detected":
            changes["detected"] = (f"{time}, {duration(_int(event, 'latency_minutes'))} after "
                                   f"the fault ({_str(event, 'how')})")
        elif kind == "milestone":
            changes["milestones"] = (*state.milestones,
                                     f"{time} {_str(event, 'label') or _str(event, 'id')}")
        elif kind == "monitor_saved":
            changes["monitors"] = (*state.monitors, _str(event, "name"))
        elif kind == "monitor_removed":
            changes["monitors"] = tuple(m for m in state.monitors if m != _str(event, "name"))
        elif kind == "alert":
            changes["alerting"] = (*state.alerting, _str(event, "name"))
        elif kind == "alert_clear":
            changes["alerting"] = tuple(m for m in state.alerting if m != _str(event, "name"))
        elif kind == "declaration":
            right = "right" if event.get("correct") else "wrong"
            changes["declarations"] = (*state.declarations,
                                       f"{time} {_str(event, 'text')} ({right})")
        elif kind == "race_step" and event.get("happened", True):
            changes["race_steps"] = (*state.race_steps, f"{time} {_str(event, 'step')}")
        elif kind == "statement" and b is not None:
            change = _change(event, b)
            if change is not None and change.ok:
                if change.automated:
                    changes["automation_writes"] = state.automation_writes + 1
                else:
                    changes["team_writes"] = state.team_writes + 1
                    if change.schema_changed:
                        changes["guards"] = state.guards + 1
        elif kind == "edit":
            changes["guards"] = state.guards + 1
        elif kind == "hint":
            changes["hints"] = state.hints + 1
        elif kind == "automation":
            follow = f"; {_str(event, 'next')}" if event.get("next") else ""
            automation[f"{_str(event, 'role')} {_str(event, 'task')}"] = (
                f"{_str(event, 'outcome')} at {time}{follow}")
            changes["automation"] = tuple(f"{k}: {v}" for k, v in automation.items())
        elif kind == "score":
            changes["score"] = f"{_int(event, 'total') or 0}/{_int(event, 'max') or 0}"
        changes["faults"] = tuple(faults.values())
        state = replace(state, **changes)
        states.append(state)
    return tuple(states)


# -- the renderers, re-exported ---------------------------------------------------------------

_RENDERERS = {"render_markdown": "debrief_markdown", "render_terminal": "debrief_terminal",
              "terminal_renderables": "debrief_terminal"}


def __getattr__(name: str) -> object:
    """`from raceday.transcript.debrief import render_markdown` imports the renderer's module
    then: it imports the model from here, and a headless `raceday run` needs only Markdown."""
    module = _RENDERERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"raceday.transcript.{module}"), name)
