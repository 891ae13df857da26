"""Every kind of event a session records: the contract between the engine and what shows it.

Each kind is a frozen dataclass. This module alone turns events into JSON lines and back,
and validates a line once, at the edge, so every consumer (the TUI, the debrief, `review`,
`transcript`, scoring) reads typed values and never picks a dict apart.

Schema versions: 3 is written today (`session_start.schema`). A log without the field was
written before it existed (version 1); its lines have the same shape and read the same way.
Version 3 adds to `session_start` what the debrief needs from the exercise (`night`,
`sources`, `phases`, `race_steps`, `checklist_title`, `checklist`); versions 1 and 2 read
with those empty. Version 4 adds the `seat_lost` kind (a team seat whose terminal stopped
beating); versions 1 to 3 never hold it and read the same.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import field
from typing import Any, ClassVar, Union

from raceday.inert import json_text
from raceday.transcript import verdicts as vd
from raceday.transcript.verdicts import BlockedWrite as BlockedWrite
from raceday.value import Value, frozen

SCHEMA_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)

JSON = Any  # a JSON value as json.loads gives it (rows of results, the score's sections)

_CLOCK = re.compile(r"^\d\d:\d\d$")
_MAX_MINUTE = 7 * 24 * 60  # no exercise is longer than a week


class EventError(ValueError):
    """A line that is not a valid event; the message names the field and what is wrong."""



@frozen(kw_only=True)
class Event(Value):
    """What every event carries: its place in the log and the clock it happened at."""

    kind: ClassVar[str] = ""
    seq: int = 0
    sim_time: str = ""
    minute: int = 0
    wall_time: str = ""
    after_team_left: bool = False  # the rest of the night, played by the automation alone


# -- the session ----------------------------------------------------------------------------


@frozen(kw_only=True)
class Reveal(Value):
    """One entry of that night's timeline, set beside the team's in the debrief."""

    at: str
    title: str
    source: str
    phase: str | None = None
    event_at: str | None = None


@frozen(kw_only=True)
class FindingInfo(Value):
    """One of the exercise's findings, and whether it is the true cause: the debrief
    judges declarations by these."""

    text: str
    correct: bool


@frozen(kw_only=True)
class PhaseInfo(Value):
    """A moment of the real night the debrief sets the team's beside, and which of the team's
    events answers it: fault | detected | stopped | repaired | restored (`milestone` names the
    exercise's milestone for stopped and repaired)."""

    id: str
    label: str
    team: str
    milestone: str | None = None


@frozen(kw_only=True)
class PracticeInfo(Value):
    """One practice of the exercise's checklist, and what in a session tests it.

    `judge` is how raceday looks for evidence: guards (the race steps named in `steps`, and
    edits of the automation statements in `statements`), row-counts, recovery, or
    removal-limits."""

    id: str
    title: str
    text: str
    action: str = ""
    judge: str = "guards"
    steps: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()
    harms: tuple[str, ...] = ()  # the guards' harm verdicts that are its evidence
    nights: tuple[str, ...] = ()  # practice nights whose harm verdicts are its evidence
    elsewhere: str = ""  # the exercise that tests it, when this one cannot


@frozen(kw_only=True)
class StepInfo(Value):
    """A race step as the exercise defines it: the task whose run may do its damage."""

    id: str
    title: str
    task: str
    after: str | None = None


@frozen(kw_only=True)
class SessionStart(Event):
    """A session's first event: the exercise, who plays, the clock, and what the debrief
    needs of the exercise, so a transcript is read without it."""

    kind: ClassVar[str] = "session_start"
    schema: int = 1
    exercise: str
    title: str
    players: tuple[str, ...]
    automated: tuple[str, ...]
    pace: str
    clock_start: str
    zone: str
    summary: str
    roles: Mapping[str, str]
    event_timeline: tuple[Reveal, ...] = ()
    event_figures: Mapping[str, int | None] = field(default_factory=dict)
    findings: Mapping[str, FindingInfo] = field(default_factory=dict)
    length_minutes: int | None = None
    # what the debrief needs from the exercise (absent from transcripts written before them)
    night: str | None = None  # the real event the debrief compares with ("that night")
    sources: Mapping[str, str] = field(default_factory=dict)  # source tag -> what it stands for
    phases: tuple[PhaseInfo, ...] = ()
    race_steps: tuple[StepInfo, ...] = ()
    checklist_title: str | None = None
    checklist: tuple[PracticeInfo, ...] = ()
    origin: str = ""
    """"script" for a headless run of a play script (`raceday run`): the history keeps those
    apart from sessions people played; empty for a session played in the TUI."""
    unknown: int | None = None
    """An unknown night's draw (`raceday play --unknown`): the seed its night is drawn with,
    so a resume plays the same night; the night itself is told only at the end
    (`NightRevealed`). None: tonight's race, as the exercise tells it."""


@frozen(kw_only=True)
class TimelineEnd(Event):
    """The exercise's clock reached its end: the night is over, the session not yet ended."""

    kind: ClassVar[str] = "timeline_end"
    note: str = ""


@frozen(kw_only=True)
class TeamLeft(Event):
    """The team ended early: the rest of the night plays itself out before it is judged."""

    kind: ClassVar[str] = "team_left"
    note: str = ""
    until: str = ""


@frozen(kw_only=True)
class NightRevealed(Event):
    """An unknown session's night, told once it can no longer be played to: which night of
    the family it was, when its harm began, and what gave it away first."""

    kind: ClassVar[str] = "night_revealed"
    night: str
    night_kind: str  # "race", "practice" or "quiet"
    title: str
    later: int = 0  # minutes its fault came later than the exercise's
    began_at: str | None = None
    gave_away: str | None = None


@frozen(kw_only=True)
class SessionResumed(Event):
    """`raceday resume` rebuilt the session from its first `recorded` events (a crash, a
    kill): play goes on from here; `note` says what was repaired or differed."""

    kind: ClassVar[str] = "session_resumed"
    recorded: int
    note: str = ""


@frozen(kw_only=True)
class Wait(Event):
    """The team let simulated time pass, to `until`."""

    kind: ClassVar[str] = "wait"
    until: str
    next_inject: bool = False
    """A wait for the next inject: it ends at the first one that arrives, which is sooner
    than `until` when a fault begins on the way and brings one."""


@frozen(kw_only=True)
class Inject(Event):
    """One of the night's injects reached the team: an alarm, message, status or reveal
    (`inject_kind`), for the roles in `to`."""

    kind: ClassVar[str] = "inject"
    id: str
    inject_kind: str
    title: str
    text: str = ""
    to: tuple[str, ...] = ()
    source: str | None = None
    expect: tuple[str, ...] = ()
    """What the team is expected to do or say about it, for the facilitator to mark (a
    `facilitation` event, action "expect"); never scored."""
    objective: str = ""  # the objective whose AAR rating the marks inform


@frozen(kw_only=True)
class Note(Event):
    """A note: an observer's (`author`, who wrote it) or the session's own."""

    kind: ClassVar[str] = "note"
    text: str
    role: str | None = None
    author: str | None = None


@frozen(kw_only=True)
class Cast(Event):
    """Who sat in which seat: role -> the name the cast gave (roles without one are left
    out). Written once, after `session_start`, when people play."""

    kind: ClassVar[str] = "cast"
    names: Mapping[str, str] = field(default_factory=dict)


@frozen(kw_only=True)
class Facilitation(Event):
    """The facilitator's hand on the session: `action` is pause, resume, speed (`speed`, the
    new one), length (`speed` for the target real length in `detail`), schedule (an
    inject planned for `at`, its title in `detail`, for `to` or everyone), start (the lobby's
    clock started at `speed`; who had joined in `detail`), skip (where it stops, in
    `detail`), hint (its id in `detail`, for `to` or everyone), screen (the console's
    answer key hidden or shown, in `detail`), automate (a player's due story task, its id in
    `detail`, done by the automation), ruling (see `ruling`) or expect (the facilitator's
    mark of what the team was expected to do about an inject: the inject's id in `inject`,
    the expectation's number (from 1) in `declaration`, its words in `detail`, the mark
    (met, partly, not met) in `ruling`; a later mark of it replaces this one)."""

    kind: ClassVar[str] = "facilitation"
    action: str
    speed: float | None = None
    at: str | None = None
    to: tuple[str, ...] = ()
    detail: str = ""
    text: str = ""  # a scheduled inject's text (so `raceday resume` schedules it again whole)
    when: str = ""
    """A planned inject that follows the world: the harm (invariant id) whose fault sends it,
    `after` minutes into the fault (`at` is then empty)."""
    after: int = 0
    inject_kind: str = ""  # a planned inject's kind: message, status or alarm (empty: message)
    ruling: str = ""
    """action "ruling": the facilitator's word on a declaration (right, partly or wrong), the
    declaration's `seq` in `declaration`, its finding in `detail`, its role in `to`, its time
    in `at` and the facilitator's note in `text`; a later ruling on it replaces this one."""
    declaration: int = 0
    inject: str = ""
    """The master list's entry a plan, schedule-live, move or cancel acts on ("prepared:ID",
    "live:N"): a resumed host rebuilds the list from them."""


@frozen(kw_only=True)
class Refused(Event):
    """An action the session would not take (a monitor that writes, an unknown finding…)."""

    kind: ClassVar[str] = "refused"
    action: str
    error: str
    role: str | None = None
    name: str | None = None
    sql: str | None = None
    statement: str | None = None


# -- statements and the automation ------------------------------------------------------------


@frozen(kw_only=True)
class Statement(Event):
    """One SQL statement, a player's or the automation's, and what it did."""

    kind: ClassVar[str] = "statement"
    role: str
    sql: str
    ok: bool
    rowcount: int | None = None
    rows: int | None = None
    truncated: bool = False
    error: str | None = None
    error_kind: str | None = None
    elapsed_ms: float = 0.0
    automated: bool = False
    task: str | None = None
    statement: str | None = None
    break_glass: bool = False
    schema_changed: bool = False
    writes: tuple[str, ...] = ()
    made_writes: tuple[tuple[str, str], ...] = ()
    """(trigger, table): tables a trigger the team made may write inside this statement."""


@frozen(kw_only=True)
class Automation(Event):
    """One run of an automated task: applied, failed, changed 0 rows, or skipped."""

    kind: ClassVar[str] = "automation"
    role: str
    task: str
    title: str
    outcome: str  # applied | failed | zero_rows | skipped
    attempt: int = 0
    next: str | None = None
    changed: int | None = None
    note: str | None = None


@frozen(kw_only=True)
class TaskDue(Event):
    """A player's task came due: the player does by hand what the automation would have
    run (`context`: what they are told)."""

    kind: ClassVar[str] = "task_due"
    role: str
    task: str
    title: str
    context: str = ""
    hint_available: bool = False


@frozen(kw_only=True)
class TaskDone(Event):
    """A player's task done (its check read rows), worth `points`."""

    kind: ClassVar[str] = "task_done"
    role: str
    task: str
    title: str
    points: int = 0


@frozen(kw_only=True)
class Edit(Event):
    """A change to one of the automation's own statements."""

    kind: ClassVar[str] = "edit"
    role: str
    statement: str
    sql: str
    before: str


@frozen(kw_only=True)
class RaceStep(Event):
    """A race step's damage happened: the automation's run (or a player's own, `by_player`)
    did what the step's check looks for."""

    kind: ClassVar[str] = "race_step"
    step: str
    title: str
    happened: bool = True
    by_player: bool = False


# -- the world's health -------------------------------------------------------------------------


@frozen(kw_only=True)
class Fault(Event):
    """A harm began: an invariant's check returned rows (`relapse`: again, after the world
    was restored)."""

    kind: ClassVar[str] = "fault"
    invariant: str
    fault: str
    relapse: bool = False
    rows: tuple[tuple[JSON, ...], ...] = ()
    objects: tuple[str, ...] = ()  # world-broken: one sentence per object the team broke


@frozen(kw_only=True)
class InvariantClear(Event):
    """An invariant that was violated holds again."""

    kind: ClassVar[str] = "invariant_clear"
    invariant: str
    fault: str


@frozen(kw_only=True)
class Restored(Event):
    """No invariant is violated any more: the world is healthy again."""

    kind: ClassVar[str] = "restored"
    note: str = ""


@frozen(kw_only=True)
class Milestone(Event):
    """One of the exercise's milestones was reached (its check returned rows)."""

    kind: ClassVar[str] = "milestone"
    id: str
    label: str


@frozen(kw_only=True)
class Chart(Event):
    """A `chart` panel item as the night left it, written at the end of the session so the
    debrief can draw it without the world: the minutes, one series per other column, and
    the moments of that night (minute, title) it marks."""

    kind: ClassVar[str] = "chart"
    label: str
    series: tuple[str, ...] = ()
    minutes: tuple[int, ...] = ()
    values: tuple[tuple[float, ...], ...] = ()
    clock: tuple[str, ...] = ()
    mark_minutes: tuple[int, ...] = ()
    mark_titles: tuple[str, ...] = ()


@frozen(kw_only=True)
class CheckFailed(Event):
    """One of the exercise's own checks could not run against the team's world."""

    kind: ClassVar[str] = "check_failed"
    sql: str
    error: str
    fail_closed: bool = False  # read as harm present (an invariant or race step)


# -- monitors, findings, hints ----------------------------------------------------------------


@frozen(kw_only=True)
class MonitorSaved(Event):
    """A player saved a monitor: a query run every simulated minute, alerting on rows."""

    kind: ClassVar[str] = "monitor_saved"
    role: str
    name: str
    sql: str


@frozen(kw_only=True)
class MonitorRemoved(Event):
    """A player removed a monitor."""

    kind: ClassVar[str] = "monitor_removed"
    name: str


@frozen(kw_only=True)
class MonitorError(Event):
    """A monitor's query failed when it ran."""

    kind: ClassVar[str] = "monitor_error"
    name: str
    error: str


@frozen(kw_only=True)
class Alert(Event):
    """A monitor began returning rows: `matched` when it alerted on the fault (the world
    unhealthy, the monitor not noisy), which counts as detection."""

    kind: ClassVar[str] = "alert"
    name: str
    role: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[JSON, ...], ...] = ()
    count: int = 0
    matched: bool = True
    noise: bool = False  # this monitor returned rows while the world was healthy


@frozen(kw_only=True)
class AlertClear(Event):
    """A monitor that alerted returns no rows any more."""

    kind: ClassVar[str] = "alert_clear"
    name: str


@frozen(kw_only=True)
class Detected(Event):
    """The fault was first detected, `latency_minutes` after it began, and how."""

    kind: ClassVar[str] = "detected"
    how: str
    latency_minutes: int


@frozen(kw_only=True)
class Declaration(Event):
    """A player declared a finding (the cause as they see it), with its verdict."""

    kind: ClassVar[str] = "declaration"
    role: str
    finding: str
    text: str
    correct: bool
    verdict: str = ""  # confirmed | unseen | false_alarm | wrong | repeat ("" before judged),
    # or to_rule: `finding` is OWN_WORDS and `text` the player's own words, for the facilitator
    why: str = ""  # what the player is told at once: does it count, and if not, why


@frozen(kw_only=True)
class Hint(Event):
    """A hint revealed to the team, at a cost of `cost` points."""

    kind: ClassVar[str] = "hint"
    id: str
    text: str
    cost: int = 0
    task: str | None = None
    to: tuple[str, ...] = ()
    """The roles the facilitator gave it to (empty: everyone); the team pays for it anyway."""


# -- team play: seats and their commands ------------------------------------------------------


@frozen(kw_only=True)
class SeatJoined(Event):
    """A player took a seat of a team session (`rejoin`: the seat had been taken before)."""

    kind: ClassVar[str] = "seat_joined"
    seat: str
    role: str
    player: str
    rejoin: bool = False


@frozen(kw_only=True)
class SeatReady(Event):
    """A seated player said, in the lobby, that they are ready to start (`ready`), or took it
    back; the facilitator's console shows who is, and asks before starting without them."""

    kind: ClassVar[str] = "seat_ready"
    seat: str
    role: str
    player: str
    ready: bool = True


@frozen(kw_only=True)
class SeatLeft(Event):
    """A player left a seat; the seat stays theirs to come back to."""

    kind: ClassVar[str] = "seat_left"
    seat: str
    role: str
    player: str


@frozen(kw_only=True)
class SeatLost(SeatLeft):
    """A seat's terminal stopped beating (it died, or lost its way to session.db): the host
    heard nothing for `silent_seconds`. A kind of leaving, so whatever reads a departure reads
    this one too; the player's rejoin (`seat_joined`, `rejoin`) brings the seat back."""

    kind: ClassVar[str] = "seat_lost"
    silent_seconds: int


@frozen(kw_only=True)
class SeatCommand(Event):
    """A seat's command the host accepted, and who sent it; what it did follows."""

    kind: ClassVar[str] = "seat_command"
    seat: str
    role: str
    player: str
    action: str
    command: int


@frozen(kw_only=True)
class CommandRefused(Event):
    """A command the host would not run: a role the seat was not given, a forged or replayed
    token, an unknown seat."""

    kind: ClassVar[str] = "command_refused"
    seat: str
    action: str
    error: str
    command: int
    role: str | None = None
    player: str | None = None


# -- the replay and the score -------------------------------------------------------------------


@frozen(kw_only=True)
class StepReplay(Value):
    """One race step as the replay saw it."""

    id: str
    title: str
    status: str  # prevented | happened | not reached
    at: str | None = None
    outcome: str = ""  # what the step's statements did: "applied (1 row)", "refused: ...", ...
    next: str | None = None
    faults_after: tuple[str, ...] = ()


@frozen(kw_only=True)
class MonitorCheck(Value):
    """A monitor's alert on the fault, run again on the replay's normal night at the same
    minute: rows there mean the alert was not caused by the fault (noise)."""

    name: str
    at: str
    rows: int = 0
    error: str | None = None
    digest: str = ""  # a fingerprint of the rows, to compare with tonight's

    @property
    def caused_by_fault(self) -> bool:
        return self.error is None and self.rows == 0


@frozen(kw_only=True)
class ReplayGuards(Value):
    """The guard points a replay earns on its own."""

    points: int
    max: int
    penalty: int = 0
    worth: Mapping[str, int] = field(default_factory=dict)


@frozen(kw_only=True)
class ReplayResult(Value):
    """What replaying the race against the team's database showed."""

    steps: tuple[StepReplay, ...] = ()
    fault_at: str | None = None
    blocked_good_writes: tuple[BlockedWrite, ...] = ()
    warnings: tuple[str, ...] = ()
    folder: str = ""
    monitor_checks: tuple[MonitorCheck, ...] = ()
    """The final replay only: each alert on the fault, run on the normal night."""
    harms: tuple[vd.HarmNight, ...] = ()
    """Each harm in each replayed race night, beside the same night on the exercise's world."""
    normal_harms: tuple[vd.HarmNight, ...] = ()
    """The customers' harms the team's world caused on the normal nights (the exercise's own
    have none): collateral of the guards."""

    @property
    def prevented(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.steps if s.status == "prevented")

    @property
    def happened(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.steps if s.status == "happened")


@frozen(kw_only=True)
class Replay(Event):
    """The race replayed against a copy of the team's database (`available` False: it
    could not be, `note` or `error` says why); the `final` one judges the guards."""

    kind: ClassVar[str] = "replay"
    available: bool
    final: bool = False  # the replay the end of the session runs, the one that scores
    result: ReplayResult | None = None
    guards: ReplayGuards | None = None
    note: str | None = None
    error: str | None = None


@frozen(kw_only=True)
class ScoreEvent(Event):
    """The final score: the verdicts as scoring decided them (see `verdicts`). Its line holds
    the score's parts at the top level, beside `reason` (the `raceday run --json` contract)."""

    kind: ClassVar[str] = "score"
    reason: str
    score: vd.Score


EVENT_TYPES: tuple[type[Event], ...] = (
    SessionStart, TimelineEnd, TeamLeft, SessionResumed, NightRevealed, Wait, Inject, Note, Cast,
    Facilitation, Refused,
    Statement, Automation, TaskDue,
    TaskDone, Edit, RaceStep, Fault, InvariantClear, Restored, Milestone, Chart, CheckFailed,
    MonitorSaved, MonitorRemoved, MonitorError, Alert, AlertClear, Detected, Declaration, Hint,
    Replay, ScoreEvent,
    SeatJoined, SeatLeft, SeatCommand, CommandRefused, SeatLost, SeatReady,
)
BY_KIND: dict[str, type[Event]] = {t.kind: t for t in EVENT_TYPES}
_BASE_FIELDS = ("seq", "sim_time", "minute", "kind")
_STAMPS = frozenset({"seq", "sim_time", "minute", "wall_time", "after_team_left"})
_E = typing.TypeVar("_E", bound=Event)


def stamped(event: _E, **stamps: Any) -> _E:
    """The event with its place in the log set (seq, sim_time, minute, wall_time,
    after_team_left): `dataclasses.replace` without running `__init__` again.

    Every event is stamped twice (by the session, then by the log), and replace() costs ten
    times this copy; events have no `__post_init__` and no slots, so the copy of the fields
    with the stamps set is the same value replace() would give."""
    if not stamps.keys() <= _STAMPS:
        raise TypeError(f"not an event's stamp: {sorted(set(stamps) - _STAMPS)}")
    copy = object.__new__(type(event))
    copy.__dict__.update(event.__dict__)
    copy.__dict__.update(stamps)
    return copy


# -- to JSON ------------------------------------------------------------------------------------


_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    if type(value) in _SCALARS:  # most values: nothing to turn
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def to_record(event: Event) -> dict[str, Any]:
    """The event as the JSON object written to `events.jsonl`.

    Optional fields left at an empty default are not written, so a log stays readable.
    """
    record: dict[str, Any] = {"seq": event.seq, "sim_time": event.sim_time,
                              "minute": event.minute, "kind": event.kind}
    if isinstance(event, ScoreEvent):  # the score's sections sit at the top level (the contract)
        record["reason"] = event.reason
        record.update(score_to_json(event.score))
    elif isinstance(event, Replay):
        record["available"] = event.available
        for name in ("final", "after_team_left"):
            if getattr(event, name):
                record[name] = True
        for name in ("note", "error"):
            if getattr(event, name) is not None:
                record[name] = getattr(event, name)
        if event.guards is not None:
            record["guards"] = _plain(event.guards)
        if event.result is not None:
            result = event.result
            record.update(_plain(result))
            record["prevented"] = list(result.prevented)
            record["happened"] = list(result.happened)
    else:
        values = event.__dict__
        for name, empty, default in _written_fields(type(event)):
            value = values[name]
            if empty and bool(value == default):
                continue
            record[name] = _plain(value)
    record["wall_time"] = event.wall_time
    return record


_WRITTEN: dict[type[Any], tuple[tuple[str, bool, Any], ...]] = {}


def _written_fields(cls: type[Any]) -> tuple[tuple[str, bool, Any], ...]:
    """Each field a line may hold, in order, as (name, left out when equal to the default,
    the default): optional fields left at an empty default (a value that says nothing) are not
    worth a place in the line. Worked out once per kind."""
    known = _WRITTEN.get(cls)
    if known is None:
        plan = []
        for f in dataclasses.fields(cls):
            if f.name in _BASE_FIELDS or f.name == "wall_time":
                continue
            if f.default is not dataclasses.MISSING:
                plan.append((f.name, f.default in (None, False, (), ""), f.default))
            elif f.default_factory is not dataclasses.MISSING:
                plan.append((f.name, True, f.default_factory()))  # compared, never given out
            else:
                plan.append((f.name, False, None))
        known = _WRITTEN[cls] = tuple(plan)
    return known


def to_json_line(event: Event) -> str:
    """One line of JSON; every control (C0, C1, a lone surrogate from a terminal) is written
    as a JSON escape, so the line is whole UTF-8 and `tail -f` shows it inert."""
    return json_text(to_record(event), default=str)


def value_to_record(value: Value) -> dict[str, Any]:
    """A value that is not an event (a player's action, a statement's result, a team seat's
    snapshot) as a JSON object, by the rules events follow: every field, tuples as lists,
    nested values as objects."""
    return typing.cast(dict[str, Any], _plain(value))


# -- from JSON ----------------------------------------------------------------------------------


def from_record(record: Any) -> Event:
    """A typed event from one decoded JSON line; `EventError` names what is wrong."""
    if not isinstance(record, dict):
        raise EventError("not an event object")
    kind = record.get("kind")
    if not isinstance(kind, str):
        raise EventError("no 'kind'")
    cls = BY_KIND.get(kind)
    if cls is None:
        raise EventError(f"unknown event kind {kind!r}")
    data = dict(record)
    data.pop("kind")
    if cls is ScoreEvent:
        base = {k: data.pop(k) for k in ("seq", "sim_time", "minute", "wall_time",
                                         "after_team_left") if k in data}
        reason = data.pop("reason", "ended")
        return ScoreEvent(**_build(_ScoreBase, {**base, "reason": reason}, kind).__dict__,
                          score=score_from_json(data))
    elif cls is Replay:
        result_keys = {f.name for f in dataclasses.fields(ReplayResult)}
        if data.get("available") and "steps" in data:
            data["result"] = {k: data.pop(k) for k in list(data) if k in result_keys}
        for derived in ("prevented", "happened"):
            data.pop(derived, None)
    return typing.cast(Event, _build(cls, data, kind))


_V = typing.TypeVar("_V", bound=Value)


def value_from_record(cls: type[_V], data: Mapping[str, Any], where: str) -> _V:
    """A value of `cls` from a decoded JSON object, each field checked as an event's is;
    `EventError` names the field (`where.field`) and what is wrong."""
    return typing.cast(_V, _build(cls, data, where))


def _build(cls: type[Any], data: Mapping[str, Any], where: str) -> Any:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _plan_of(cls)
    each, names, direct = plan
    if not names.issuperset(data):
        unknown = next(k for k in data if k not in names)
        raise EventError(f"{where}: unknown field {unknown!r}")
    values: dict[str, Any] = {}
    for name, tp, kept, default, factory in each:
        if name in data:
            value = data[name]
            if type(value) in kept:  # most fields: kept as they are, no path to name them by
                values[name] = value
            else:
                values[name] = _coerce(tp, value, f"{where}.{name}")
        elif default is not _MISSING:
            values[name] = default
        elif factory is not _MISSING:
            values[name] = factory()
        else:
            raise EventError(f"{where}: missing field {name!r}")
    if direct:  # what its __init__ would do with these values, without doing it again
        made = object.__new__(cls)
        made.__dict__.update(values)
        return made
    return cls(**values)


_Plan = tuple[tuple[tuple[str, Any, frozenset[type[Any]], Any, Any], ...], frozenset[str], bool]
"""A class's fields as `_build` reads them: (name, annotation, types kept as they are,
default, default factory) each; every field's name; whether its `__init__` only sets them
(a `Value`'s made at run time, every field an argument): then `_build` sets them itself."""
_MISSING: Any = dataclasses.MISSING


def _plan_of(cls: type[Any]) -> _Plan:
    hints = _hints(cls)
    fields = dataclasses.fields(cls)
    each = tuple((f.name, hints[f.name], _kept_as_is(hints[f.name]), f.default,
                  f.default_factory) for f in fields)
    direct = bool(getattr(cls.__init__, "sets_fields_only", False)) and all(
        f.init for f in fields)
    return each, frozenset(f.name for f in fields), direct


def _kept_as_is(tp: Any) -> frozenset[type[Any]]:
    """The types of value `_coerce` keeps as they are for the annotation `tp` (a plain type,
    or a union of plain types and None); anything else goes through `_coerce`."""
    if tp in _EXACT:
        return frozenset({tp})
    if typing.get_origin(tp) in (Union, types.UnionType):
        options = typing.get_args(tp)
        if all(o in _EXACT or o is type(None) for o in options):
            return frozenset(options)
    return frozenset()


_HINTS: dict[type[Any], dict[str, Any]] = {}
_PLANS: dict[type[Any], _Plan] = {}
_SHAPES: dict[Any, tuple[Any, tuple[Any, ...]]] = {}
_EXACT = frozenset({str, int, bool, float})  # a value of exactly the annotated type is kept


def _hints(cls: type[Any]) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _coerce(tp: Any, value: Any, where: str) -> Any:
    """Check `value` against the annotation `tp`, turning lists into tuples and objects into
    the dataclasses they stand for."""
    if tp is type(value) and tp in _EXACT:  # most values (what the checks below would keep)
        return value
    if tp is Any:
        return value
    shape = _SHAPES.get(tp)
    if shape is None:  # typing's answers, asked once per annotation
        shape = _SHAPES[tp] = (typing.get_origin(tp), typing.get_args(tp))
    origin = shape[0]
    if origin in (Union, types.UnionType):
        options = shape[1]
        if value is None:
            if type(None) in options:
                return None
            raise EventError(f"{where}: must not be null")
        present = [o for o in options if o is not type(None)]
        if len(present) == 1 and dataclasses.is_dataclass(present[0]):
            return _coerce(present[0], value, where)  # an optional object: its own error
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(option, value, where)
            except EventError:
                continue
        raise EventError(f"{where}: {_kind_of(value)} is not {_name(tp)}")
    if origin is tuple:
        if not isinstance(value, list):
            raise EventError(f"{where}: expected a list, got {_kind_of(value)}")
        items = shape[1]
        if len(items) == 2 and items[1] is Ellipsis:  # tuple[X, ...]: any length
            if items[0] is Any:  # a row's cells: kept as they are
                return tuple(value)
            return tuple(_coerce(items[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(items):  # tuple[X, Y]: a pair, each in its place
            raise EventError(f"{where}: expected {len(items)} items, got {len(value)}")
        return tuple(_coerce(t, v, f"{where}[{i}]")
                     for i, (t, v) in enumerate(zip(items, value, strict=True)))
    if origin is typing.Literal:
        if value not in shape[1]:
            words = ", ".join(repr(o) for o in shape[1])
            raise EventError(f"{where}: expected one of {words}, got {value!r}"[:200])
        return value
    if origin in (Mapping, dict, typing.Mapping):
        if not isinstance(value, dict):
            raise EventError(f"{where}: expected an object, got {_kind_of(value)}")
        _, item = shape[1]
        return {k: _coerce(item, v, f"{where}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise EventError(f"{where}: expected an object, got {_kind_of(value)}")
        return _build(typing.cast(type[Any], tp), value, where)
    if tp is bool:
        if not isinstance(value, bool):
            raise EventError(f"{where}: expected true or false, got {_kind_of(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise EventError(f"{where}: expected a whole number, got {_kind_of(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EventError(f"{where}: expected a number, got {_kind_of(value)}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise EventError(f"{where}: expected text, got {_kind_of(value)}")
        return value
    raise EventError(f"{where}: cannot read a value of type {_name(tp)}")  # pragma: no cover


def _kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(value), "a value")


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


# -- the score ----------------------------------------------------------------------------------


@frozen(kw_only=True)
class _ScoreBase(Event):
    """The score line's own fields, checked like any event's."""

    reason: str


def score_to_json(score: vd.Score) -> dict[str, Any]:
    """The score as its line (and `raceday run --json`) holds it: a part the exercise does not
    score is left out."""
    record: dict[str, Any] = {"total": score.total, "max": score.max,
                              "fault": _plain(score.fault)}
    for name, part in score.parts:
        record[name] = _plain(part)
    record["hints"] = _plain(score.hints)
    record["reasons"] = list(score.reasons)
    return record


def score_from_json(data: Mapping[str, Any]) -> vd.Score:
    """A score line's parts, typed; `EventError` names a field of the wrong shape.

    Lines written before a field existed read with its default, and with what they imply:
    race steps from the `prevented` and `happened` lists (before steps were recorded), and
    the fault's outcome (before it was recorded) from whether it occurred and whether the
    race was credited as prevented with detection at full marks."""
    score = typing.cast(vd.Score, _build(vd.Score, data, "score"))
    guards = score.guards
    if guards is not None and not guards.steps and (guards.prevented or guards.happened):
        steps = tuple(vd.StepVerdict(id=i, status=status)
                      for status, ids in ((vd.HAPPENED, guards.happened),
                                          (vd.PREVENTED, guards.prevented)) for i in ids)
        score = dataclasses.replace(score, guards=dataclasses.replace(guards, steps=steps))
    if not score.fault.outcome:
        detection = score.detection
        full = detection is not None and detection.points == detection.max
        outcome = (vd.OCCURRED if score.fault.occurred
                   else vd.PREVENTED_OUTRIGHT if full and guards is not None and guards.prevented
                   else vd.NOT_NEEDED if full else "")
        score = dataclasses.replace(score, fault=dataclasses.replace(score.fault, outcome=outcome))
    return score


def check_base(event: Event, where: str, length_minutes: int | None) -> None:
    """The fields every event has: a clock face and a minute inside the exercise."""
    if not _CLOCK.match(event.sim_time):
        raise EventError(f"{where}: sim_time {event.sim_time!r} is not HH:MM")
    limit = length_minutes if length_minutes is not None else _MAX_MINUTE
    if not 0 <= event.minute <= limit:
        raise EventError(f"{where}: minute {event.minute} is outside the exercise (0 to {limit})")
