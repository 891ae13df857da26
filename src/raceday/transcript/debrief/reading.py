"""A session's events read once, for the questions every section of the debrief asks.

`Reading` holds the typed events and answers: when the fault began, when it was detected,
stopped, repaired and restored, which runs each automated task made, which guards the team had
in place at a minute, what each statement changed. It decides nothing the score decides.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from raceday.transcript import events as ev
from raceday.transcript.debrief.model import Change
from raceday.transcript.log import of_kind
from raceday.transcript.verdicts import Score
from raceday.value import Value, frozen

DEFAULT_PHASES = (
    ev.PhaseInfo(id="first-symptom", label="First symptom (the fault)", team="fault"),
    ev.PhaseInfo(id="detection", label="Detection", team="detected"),
    ev.PhaseInfo(id="restore", label="Restored", team="restored"),
)
"""The timeline's rows when a transcript names none: moments every exercise has."""

_BLANK_START = ev.SessionStart(exercise="?", title="", players=(), automated=(), pace="?",
                               clock_start="", zone="", summary="", roles={})


def _hhmm(text: str) -> int | None:
    hours, _, minutes = text.strip().partition(":")
    if not (hours.isdigit() and minutes[:2].isdigit() and len(minutes) >= 2):
        return None
    return int(hours) * 60 + int(minutes[:2])


class Clock:
    """Turns minutes since the clock's start and clock faces into each other."""

    def __init__(self, start: ev.SessionStart, events: Sequence[ev.Event]) -> None:
        iso = start.clock_start
        origin = _hhmm(iso.split("T", 1)[1][:5]) if "T" in iso else None
        if origin is None:
            origin = next((o for e in events if (o := _hhmm(e.sim_time)) is not None), 0)
        self.origin = origin
        self.date = iso.split("T", 1)[0] if "T" in iso else ""

    def time(self, minute: int) -> str:
        total = (self.origin + minute) % (24 * 60)
        return f"{total // 60:02d}:{total % 60:02d}"

    def minute_of_face(self, face: str) -> int | None:
        total = _hhmm(face)
        return None if total is None else (total - self.origin) % (24 * 60)


@frozen
class Run(Value):
    """One run of an automated task: its statements and how it ended."""

    statements: tuple[ev.Statement, ...]
    end: ev.Automation


@frozen
class Surfaced(Value):
    """When the team first surfaced the fault, as the score judged it (or, in a transcript
    with no score, as the session's `detected` event said)."""

    time: str
    minute: int
    latency: int
    how: str


@frozen
class Moment(Value):
    """When something the timeline names happened, and what marked it."""

    event: ev.Event
    label: str


class Reading:
    """The events of one session, read once (see the module's docstring)."""

    def __init__(self, events: Sequence[ev.Event]) -> None:
        self.events = tuple(events)
        self.start = next(of_kind(self.events, ev.SessionStart), _BLANK_START)
        self.clock = Clock(self.start, self.events)
        last_score = next((e for e in reversed(self.events) if isinstance(e, ev.ScoreEvent)),
                          None)
        self.score: Score | None = last_score.score if last_score else None
        self.ended = last_score.reason if last_score else ""
        self.faults = list(of_kind(self.events, ev.Fault))
        self.first_fault = next((f for f in self.faults if not f.relapse), None)
        self.fault_minute = self.first_fault.minute if self.first_fault else None
        self.surfaced = self._surfaced()
        self.team_left = next(of_kind(self.events, ev.TeamLeft), None)
        self.restores = list(of_kind(self.events, ev.Restored))
        self.complete = self.score is not None
        self.last_time = self.time(self.events[-1]) if self.events else ""
        self.phases = self.start.phases or DEFAULT_PHASES
        self.night = self.start.night or ""
        self.unknown = next(of_kind(self.events, ev.NightRevealed), None)
        """An unknown session's night, as its end told it (None: the night the file tells)."""
        if self.unknown is not None and self.unknown.night_kind != "race":
            self.night = ""  # no "that night" to set this night's times beside
        self.steps = {s.id: s for s in self.start.race_steps}
        self.stop = self._moment("stopped")
        self.repair = self._moment("repaired")
        self.guard_minutes = sorted(
            [e.minute for e in of_kind(self.events, ev.Statement)
             if e.ok and e.schema_changed and not e.automated]
            + [e.minute for e in of_kind(self.events, ev.Edit)])

    def _surfaced(self) -> Surfaced | None:
        """The score's detection when it has one; a `detected` event only without a score
        (the score may judge an alert the session announced as noise)."""
        detection = self.score.detection if self.score is not None else None
        if detection is None:
            event = next(of_kind(self.events, ev.Detected), None)
            return None if event is None else Surfaced(
                self.time(event), event.minute, event.latency_minutes, event.how)
        if detection.latency_minutes is None or self.fault_minute is None:
            return None
        minute = self.fault_minute + detection.latency_minutes
        return Surfaced(detection.detected_at or self.clock.time(minute), minute,
                        detection.latency_minutes, detection.by or "")

    # -- time ----------------------------------------------------------------------------

    def time(self, event: ev.Event) -> str:
        return event.sim_time or self.clock.time(event.minute)

    def after_fault(self, event: ev.Event | None) -> int | None:
        if event is None or self.fault_minute is None:
            return None
        return event.minute - self.fault_minute

    @property
    def never(self) -> str:
        """'never', or for a transcript that stops early, 'not by 09:08 (transcript ends)'."""
        return "never" if self.complete else f"not by {self.last_time} (the transcript ends)"

    @property
    def relapses(self) -> list[ev.Fault]:
        """Faults that came back after a restore, one per minute."""
        return list({f.minute: f for f in self.faults if f.relapse}.values())

    @property
    def relapse_times(self) -> list[str]:
        return [self.time(f) for f in self.relapses]

    # -- what the team did ---------------------------------------------------------------

    def guards_by(self, minute: int) -> int:
        """How many guards (schema changes, edits) the team had put in place by `minute`."""
        return sum(1 for m in self.guard_minutes if m <= minute)

    def changes(self) -> Iterator[tuple[ev.Statement, Change]]:
        for event in of_kind(self.events, ev.Statement):
            change = self.change_of(event)
            if change is not None:
                yield event, change

    def change_of(self, e: ev.Statement) -> Change | None:
        """A statement as a Change when it wrote, or tried to (None for a plain read)."""
        is_read = e.rows is not None and not e.writes
        if e.ok and (is_read or (e.rowcount is None and not e.writes and not e.schema_changed)):
            return None
        return Change(seq=e.seq, time=self.time(e), role=e.role, automated=e.automated,
                      sql=e.sql.strip(), ok=e.ok, rowcount=e.rowcount, error=e.error,
                      error_kind=e.error_kind, task=e.task, statement=e.statement,
                      break_glass=e.break_glass, schema_changed=e.schema_changed,
                      writes=e.writes)

    def runs(self, task: str) -> list[Run]:
        """Every run of an automated task, in order (skipped runs included, with no
        statements)."""
        found: list[Run] = []
        current: list[ev.Statement] = []
        for event in self.events:
            if isinstance(event, ev.Statement) and event.automated and event.task == task:
                current.append(event)
            elif isinstance(event, ev.Automation) and event.task == task:
                found.append(Run(tuple(current), event))
                current = []
        return found

    def stopped_before(self, step: str) -> bool:
        """Whether the race stopped before this step: the step it follows did not happen."""
        info = self.steps.get(step)
        return info is not None and info.after is not None and not any(
            isinstance(e, ev.RaceStep) and e.step == info.after and e.happened
            for e in self.events)

    # -- moments the exercise's phases name ------------------------------------------------

    def phase_of(self, team: str) -> ev.PhaseInfo | None:
        return next((p for p in self.phases if p.team == team), None)

    def _moment(self, team: str) -> Moment | None:
        phase = self.phase_of(team)
        if phase is None:
            return None
        if phase.milestone:
            found = next((m for m in of_kind(self.events, ev.Milestone)
                          if m.id == phase.milestone), None)
            return Moment(found, found.label or found.id) if found else None
        if team == "stopped":
            skipped = next((a for a in of_kind(self.events, ev.Automation)
                            if a.outcome == "skipped"), None)
            return Moment(skipped, f"{skipped.role} skipped its run ({skipped.note})"
                          ) if skipped else None
        if self.fault_minute is None:
            return None
        for event, change in self.changes():
            if (not change.automated and change.ok and not change.schema_changed
                    and (change.rowcount or 0) > 0 and event.minute >= self.fault_minute):
                return Moment(event, "first hand change to the world after the fault")
        return None
