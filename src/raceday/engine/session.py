"""A session: one exercise played from start to score.

The session turns actions (a statement, a wait, a declaration) into events. It owns no
timers and no threads: the caller says what time it is (`advance_to`) or spends time by
acting (the `turns` pace). Every event is written to the transcript before it is returned
or shown to anyone.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from raceday.engine.clock import Pace, clock_time
from raceday.engine.directives import directive_problem, stops_on_zero_rows
from raceday.engine.looks import (
    CHANCE,
    UNSTEADY,
    chance,
    declared_why,
    short_sql,
    tables_words,
)
from raceday.errors import MachineError, RacedayError
from raceday.exercise.model import (
    Exercise,
    Inject,
    InjectKind,
    Invariant,
    Policy,
    PracticeChange,
    ShiftSpec,
    Task,
)
from raceday.judge.detection import judge_diagnoses, sort_alerts
from raceday.judge.facts import Facts, Look, RaceStepState, step_statuses
from raceday.judge.harms import HarmClock, History
from raceday.judge.score import Score, replay_guards, score_session
from raceday.judge.tasks import unproven_tasks
from raceday.judge.variant import draw, session_seed
from raceday.store import end_world
from raceday.store.protocol import Store
from raceday.store.results import StatementResult
from raceday.store.transactions import NotControl, transaction_control
from raceday.transcript import events as ev
from raceday.transcript.events import Event
from raceday.transcript.log import EventLog, TranscriptWriteError
from raceday.transcript.wording import ZERO_ROWS_STOP

Listener = Callable[[Event], None]
E = TypeVar("E", bound=Event)

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=1024)
def _param_names(sql: str) -> tuple[str, ...]:
    """The named parameters (`:plan`) a statement uses."""
    return tuple(_PARAM.findall(sql))
_ALERT_ROWS_SHOWN = 5
# The invariant id a broken truth is reported under (the world counts as faulty).
BROKEN_WORLD = "world-broken"
MAX_ACTIONS_PER_MINUTE = 100
"""Player and facilitator actions (submissions, monitors, declarations, edits, hints, notes,
injects) one simulated minute takes; past it an action is refused until the clock moves on.
A team acts a few times a minute; a script or a stuck key must not flood the transcript."""
MAX_MONITORS = 50
"""Saved monitors at once: each runs every simulated minute."""


# What callers around the session may record: nothing that decides a score.
_OUTSIDE_EVENTS = (ev.Cast, ev.Facilitation, ev.SeatJoined, ev.SeatLeft, ev.SeatCommand,
                   ev.CommandRefused, ev.SessionResumed)


class SessionError(Exception):
    """An action the session cannot take (unknown role, unknown monitor…): one clear line."""


@dataclass(frozen=True)
class Monitor:
    """A player's saved query: it alerts when it returns rows."""

    name: str
    role: str
    sql: str
    saved_at: int


HANDED = "routine tasks to the automation"
"""A hand-over's `detail` (resume reads it back: the other is "back to the player")."""


@dataclass(frozen=True)
class PendingTask:
    """A task of a player-held role that has fallen due and is not done yet."""

    task: Task
    due: int
    context: str
    since: int = -1
    """The first time it fell due without being done (a repeating task falls due again
    while still open: `due` is the latest time, `since` the first)."""


class _Due(NamedTuple):
    """What falls due when, in the agenda's heap: compared as a tuple in C (a dataclass's
    generated comparisons were 3% of a replay); `order` is unique, so `attempt` and `item`
    are never compared."""

    minute: int
    phase: int
    order: int
    attempt: int = 0
    item: Any = None


_INJECT, _TASK = 0, 1


class Session:
    """Plays one exercise. Build it with `open_session`; drive it with the public methods."""

    origin = ""  # "script": a headless run (open_session sets it before `start`)

    def __init__(
        self,
        exercise: Exercise,
        store: Store,
        log: EventLog,
        players: Sequence[str],
        pace: Pace = Pace.TURNS,
    ) -> None:
        unknown = [r for r in players if r not in exercise.role_ids]
        if unknown:
            raise SessionError(
                f"unknown role {unknown[0]!r}; roles are {', '.join(exercise.role_ids)}"
            )
        self.exercise = exercise
        self.store = store
        self.log = log
        self.players = tuple(players)
        self.pace = pace
        self.minute = 0
        self.ended = False
        self.timeline_over = False
        self.score: Score | None = None
        self.events: list[Event] = []
        self.monitors: dict[str, Monitor] = {}
        self.pending: dict[str, PendingTask] = {}
        self.statement_sql = {s.id: s.sql for s in exercise.statements}
        self.memory: dict[str, dict[str, Any]] = {r.id: {} for r in exercise.roles}
        self.facts = Facts()
        self.variant_seed = session_seed()  # in memory only: no file predicts the variant
        shift = exercise.replay.shifted if exercise.replay is not None else None
        self.variant: ShiftSpec | None = draw(shift, self.variant_seed) if shift else None
        self.harm_clock = HarmClock()  # when each harm was present, for the judge
        self._gone: set[str] = set()  # `again` milestones seen gone since the fault began
        self._history = History()  # what went_back harms compare with: raceday's memory only
        self._listeners: list[Listener] = []
        self._agenda: list[_Due] = []
        self._on_fault: dict[str, list[Inject]] = {}  # invariant -> injects its fault brings
        self._onsets: dict[str, int] = {}  # invariant -> how many times its fault has begun
        self.injects_heard = 0  # injects sent so far (a wait for the next one stops at it)
        self._stopped_tasks: set[str] = set()
        self.held: dict[str, bool] = {}  # task id -> fell due while the facilitator held it
        self.handed: set[str] = set()
        """Roles a player holds whose routine (repeating) tasks the facilitator handed to the
        automation; their one-off (story) tasks stay the player's."""
        self._violated: set[str] = set()
        self._ever_violated: set[str] = set()
        self._faults: dict[str, str] = {}  # what each violated invariant was reported as
        self._alerting: set[str] = set()
        self._counter = 0
        self._broken_checks: set[str] = set()
        self._steps_by_task: dict[str, list[RaceStepState]] | None = None
        self._world_changes = 0  # bumped by every write or schema change
        self._checked_at = -1  # the value of _world_changes when the world was last checked
        self._schema_epoch = 0  # bumped by every statement that changed the schema
        self._truth_columns: dict[str, tuple[str, ...]] = {}
        # (epoch, problems), kept while the answer cannot change until the schema does: a
        # slow object, or every view still the exercise's own definition
        self._truth_cache: tuple[int, list[str]] | None = None
        self._truth_view_sql: dict[str, str | None] = {}  # each truth view's SQL as built
        self.team_left_at: int | None = None
        self.judge_world = True
        self.track_harms = False
        """A normal night that does not judge the world still keeps the customers' harms
        (`harm_clock`, outage invariants only): a guard that causes one there costs."""
        self.probes: list[tuple[int, str, str, str]] = []
        """(minute, name, role, sql): monitors to run at the end of that minute (a replay's
        normal night runs the team's alerts again, to see if they were caused by the fault)."""
        self.probe_results: list[ev.MonitorCheck] = []
        self.alert_sql: list[tuple[int, str, str, str]] = []
        self._team_reads: dict[str, int] = {}  # table -> event count when the team last read it
        self._looks: list[Look] = []  # the team's reads of the world, in order
        self._rechecked: dict[str, str] = {}  # a look's SQL -> the answer asked again, the same
        self._fault_writes: set[str] = set()  # tables the automation wrote since a fault began
        # each confirmed finding with the looks it rests on: (minute, finding, probe names)
        self._declared_looks: list[tuple[int, str, tuple[Look, ...]]] = []
        self.look_sql: list[tuple[int, str, str, str]] = []  # probes for those looks
        self._acting: tuple[str, str] | None = None  # a player's write being checked
        self._violated_since: dict[str, int] = {}  # invariant -> event count when it first broke
        """False on a replay's normal night: only the runs' outcomes matter there, so the
        world's checks (truth, invariants, milestones) and the race steps' are skipped."""
        self.final_replay: ev.ReplayResult | None = None
        self._actions = (0, 0)  # (minute, actions taken in it)
        self._faces: dict[int, str] = {}  # minute -> clock face
        self._role_defs = {r.id: r for r in exercise.roles}  # every statement looks its role up
        self._table_writes: dict[str, int] = {}  # table (lower case) -> statements that wrote it
        self._unnamed_writes = 0  # changes not named by table: every kept answer is stale
        # monitor -> ((role, sql), _world_key of its reads, its last answer)
        self._monitor_kept: dict[str, tuple[tuple[str, str], tuple[int, ...], StatementResult]] = {}
        # a trusted query's SQL -> (its parameters, _world_key of its reads, its answer)
        self._check_kept: dict[str, tuple[tuple[Any, ...], tuple[int, ...], tuple[str, ...],
                                          list[Any]]] = {}
        # an exercise check's SQL -> ((schema epoch, commits) when asked, the tables it reads)
        self._check_reads: dict[str, tuple[tuple[int, int], frozenset[str] | None]] = {}
        self._commits = 0  # held transactions committed: their writes show only now
        self._flood_noted = -1  # the minute a refusal for too many actions was recorded
        self._txn_lost: dict[str, int] = {}
        """role -> minute its held transaction was rolled back (an error, a failed BEGIN or
        COMMIT): the role's next task that does not begin one is skipped, not run outside it."""
        self._build_agenda()

    # -- events -------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call `listener` with every event from now on (after it is in the transcript)."""
        self._listeners.append(listener)

    def _emit(self, event: E) -> E:
        if self.team_left_at is not None and not isinstance(event, ev.ScoreEvent):
            stamped = ev.stamped(event, after_team_left=True, sim_time=self.clock_face,
                                 minute=self.minute)
        else:
            stamped = ev.stamped(event, sim_time=self.clock_face, minute=self.minute)
        record = self.log.append(stamped)
        self.events.append(record)
        for listener in self._listeners:
            listener(record)
        return record

    @property
    def clock_face(self) -> str:
        face = self._faces.get(self.minute)  # asked for by every event: worked out once
        if face is None:
            face = self._faces[self.minute] = clock_time(self.exercise.clock.start, self.minute)
        return face

    def time_of(self, minute: int) -> str:
        return clock_time(self.exercise.clock.start, minute)

    @property
    def end_minute(self) -> int:
        return self.exercise.clock.length_minutes

    @property
    def folder(self) -> Path:
        return self.log.folder

    # -- start ----------------------------------------------------------------------------

    def _build_agenda(self) -> None:
        for inject in self.exercise.injects:
            if inject.at is not None:
                self._schedule(inject.at, _INJECT, inject)
            else:  # it follows the world: scheduled when its fault first begins
                self._on_fault.setdefault(inject.on_fault, []).append(inject)
        normal_only = set(self.exercise.replay.normal) if self.exercise.replay else set()
        for task in self.exercise.tasks:
            if task.id in normal_only:
                continue
            for minute in task.times():
                self._schedule(minute, _TASK, task)

    def _schedule(self, minute: int, phase: int, item: Any, attempt: int = 0) -> None:
        self._counter += 1
        heapq.heappush(self._agenda, _Due(minute, phase, self._counter, attempt, item))

    def start(self) -> Event:
        """Record the start and fire whatever is due at the first minute."""
        ex = self.exercise
        event = self._emit(ev.SessionStart(
            schema=ev.SCHEMA_VERSION,
            exercise=ex.id,
            title=ex.title,
            players=self.players,
            automated=tuple(r for r in ex.role_ids if r not in self.players),
            pace=self.pace.value,
            clock_start=ex.clock.start.isoformat(),
            zone=ex.clock.zone,
            summary=ex.summary,
            roles={r.id: r.name for r in ex.roles},
            event_timeline=tuple(
                ev.Reveal(at=self.time_of(i.at), title=i.title, source=i.source or "",
                          phase=i.phase or None, event_at=i.event_at or None)
                for i in ex.injects if i.kind.value == "reveal" and i.at is not None
            ),
            event_figures={
                "detection_minutes": d.event_minutes if (d := ex.scoring.detection) else None,
                "restore_minutes": r.event_minutes if (r := ex.scoring.recovery) else None,
            },
            findings={f.id: ev.FindingInfo(text=f.text, correct=f.correct) for f in ex.findings},
            length_minutes=self.end_minute,
            **_debrief_content(ex),
            origin=self.origin,
        ))
        self._record_truth()
        self._check_world()
        self._fire_due(self.minute)
        self._minute_checks()
        return event

    # -- time ----------------------------------------------------------------------------

    def advance_to(self, minute: int) -> None:
        """Let the clock run to `minute`, firing everything due on the way, in order."""
        target = min(minute, self.end_minute)
        while self.minute < target and not self.ended:
            self.minute += 1
            self._fire_due(self.minute)
            self._minute_checks()
            if self.minute >= self.end_minute and not self.timeline_over:
                self.timeline_over = True
                self._emit(ev.TimelineEnd(note="the exercise's timeline has run out"))

    def wait(self, until: int | None = None) -> None:
        """Run to a time, or (None) to the next inject anyone will see, or the end. An inject
        a fault brings has no time until the fault begins: waiting for the next inject stops
        at the first that arrives, one brought by a fault on the way included."""
        if until is not None:
            self._emit(ev.Wait(until=self.time_of(min(until, self.end_minute))))
            self.advance_to(until)
            return
        bound = self._next_inject_bound()
        self._emit(ev.Wait(until=self.time_of(bound), next_inject=True))
        self.run_to_next_inject(bound)

    def _next_inject_bound(self) -> int:
        upcoming = self.next_inject_minute()
        return self.end_minute if upcoming is None else min(upcoming, self.end_minute)

    def run_to_next_inject(self, bound: int | None = None) -> None:
        """Let the clock run to the next inject anyone will see: the next timed one, or
        sooner the first a fault brings on the way (or to the end). Records nothing itself:
        `wait` records the wait."""
        bound = self._next_inject_bound() if bound is None else bound
        heard = self.injects_heard
        while self.minute < bound and not self.ended and self.injects_heard == heard:
            self.advance_to(self.minute + 1)

    def next_task_due(self, roles: Sequence[str]) -> tuple[int | None, Task | None]:
        """The next minute a task of one of `roles` falls due, and that task (the normal
        night's own tasks never fall due tonight)."""
        normal = set(self.exercise.replay.normal) if self.exercise.replay else set()
        best: tuple[int | None, Task | None] = (None, None)
        for task in self.exercise.tasks:
            if task.role not in roles or task.id in normal or task.id in self._stopped_tasks:
                continue
            later = [m for m in task.times() if m > self.minute]
            if later and (best[0] is None or later[0] < best[0]):
                best = (later[0], task)
        return best

    def next_inject_minute(self) -> int | None:
        later = [d.minute for d in self._agenda if d.phase == _INJECT and d.minute > self.minute]
        return min(later) if later else None

    def _spend(self) -> None:
        if self.pace is Pace.TURNS:
            self.advance_to(self.minute + self.exercise.clock.minutes_per_statement)

    def _fire_due(self, minute: int) -> None:
        while self._agenda and self._agenda[0].minute <= minute:
            due = heapq.heappop(self._agenda)
            if due.phase == _INJECT:
                if not due.item.on_fault:
                    self._send(due.item)
                elif self._still(due.item, due.attempt):
                    self._on_fault[due.item.on_fault].remove(due.item)
                    self._send(due.item)
            else:
                self._due_task(due.item, due.attempt)

    def _send(self, inject: Inject) -> None:
        self.injects_heard += 1
        self._emit(ev.Inject(
            id=inject.id,
            inject_kind=inject.kind.value,
            title=inject.title,
            text=inject.text,
            to=tuple(inject.to),
            source=inject.source,
        ))

    def _fault_began(self, invariant: str) -> None:
        """The injects an invariant's fault brings, each once a session: now, or as long
        after as it says, if this spell of the fault lasts that long (an alarm reports the
        world as it is: one whose fault has cleared by its time waits for the next spell)."""
        onset = self._onsets[invariant] = self._onsets.get(invariant, 0) + 1
        waiting = self._on_fault.get(invariant, [])
        for inject in list(waiting):
            if inject.after <= 0:
                waiting.remove(inject)
                self._send(inject)
            else:  # the spell it belongs to rides in the agenda's `attempt`
                self._schedule(self.minute + inject.after, _INJECT, inject, onset)

    def _still(self, inject: Inject, onset: int) -> bool:
        """Is the spell of the fault that scheduled `inject` still on, and the inject unsent?"""
        fault = inject.on_fault
        return (fault in self._violated and self._onsets.get(fault) == onset
                and inject in self._on_fault.get(fault, ()))

    # -- player actions --------------------------------------------------------------------

    def _require_player(self, role: str) -> None:
        if role not in self.exercise.role_ids:
            raise SessionError(
                f"unknown role {role!r}; roles are {', '.join(self.exercise.role_ids)}"
            )
        if role not in self.players:
            raise SessionError(f"role {role!r} is played by the automation, not by a player")

    def execute(self, role: str, sql: str) -> list[StatementResult]:
        """Run a player's submission as `role`; every statement becomes an event."""
        self._require_player(role)
        flood = self._flooded("sql", role)
        if flood is not None:
            return [StatementResult(sql=sql[:200], error=flood.error, error_kind="refused")]
        results = self.store.execute(role, sql)
        self._submitted(role, results)
        return results

    def _flooded(self, action: str, role: str | None = None) -> ev.Refused | None:
        """Count an action against the minute's cap; past it, the refusal (recorded once a
        minute: the rest of the flood is refused without a line in the transcript)."""
        if self._cap_reached():
            return self._flood_refusal(action, role)
        minute, taken = self._actions
        self._actions = (self.minute, (taken if minute == self.minute else 0) + 1)
        return None

    def _cap_reached(self) -> bool:
        minute, taken = self._actions
        return minute == self.minute and taken >= MAX_ACTIONS_PER_MINUTE

    def _flood_refusal(self, action: str, role: str | None = None) -> ev.Refused:
        refusal = ev.Refused(role=role, action=action,
                             error=f"more than {MAX_ACTIONS_PER_MINUTE} actions in one simulated "
                                   f"minute ({self.clock_face}): refused until the clock moves on")
        if self._flood_noted == self.minute:
            return replace(refusal, sim_time=self.clock_face, minute=self.minute)
        self._flood_noted = self.minute
        return self._emit(refusal)

    def _submitted(self, role: str, results: Sequence[StatementResult]) -> None:
        if not results:
            return
        for i, result in enumerate(results):
            self._record_statement(role, result, automated=False)
            # asked again at once only while nothing after it in the submission wrote
            self._note_reads(result, role, recheck=not any(
                r.writes or r.schema_changed for r in results[i + 1:]))
        wrote = next((r for r in results if r.ok and (r.writes or r.schema_changed)), None)
        self._acting = (role, wrote.sql) if wrote is not None else None
        try:
            self._check_world()
        finally:
            self._acting = None
        self._check_player_tasks()
        self._spend()

    # -- resume: the recorded actions done again ---------------------------------------------

    def redo_submission(self, role: str, recorded: Sequence[ev.Statement]) -> None:
        """Do a recorded submission again (`raceday resume`): the statements that ran are run
        again, one by one; one that failed changed nothing in the world (SQLite takes a
        failed statement back whole), so its outcome is taken as recorded."""
        self._require_player(role)
        self._flooded("sql", role)  # counted as it was (it was under the cap then)
        results: list[StatementResult] = []
        for statement in recorded:
            if statement.ok:
                again = self.store.execute(role, statement.sql)
                results.extend(again[:1])
                if not again or not again[0].ok:
                    break  # the world differs from the one recorded: the caller sees it
            else:
                results.append(StatementResult(
                    sql=statement.sql, rowcount=statement.rowcount, truncated=statement.truncated,
                    elapsed_ms=statement.elapsed_ms, error=statement.error,
                    error_kind=statement.error_kind, writes=statement.writes,
                    schema_changed=statement.schema_changed))
        self._submitted(role, results)

    def pass_through(self, event: ev.Refused | ev.Replay) -> Event:
        """Record again an event whose cause is not done again while a session is resumed:
        a refusal (it changed nothing) or a replay asked for during play (its result is
        kept as it was; the replay's worlds are gone)."""
        if isinstance(event, ev.Replay) and event.result is not None:
            self.facts.replay = event.result
        if isinstance(event, ev.Refused) and "actions in one simulated minute" in event.error:
            self._flood_noted = self.minute
        return self._emit(event)

    def save_monitor(self, role: str, name: str, sql: str) -> Event:
        """Save a monitor after running it once, so a broken query is refused at once."""
        self._require_player(role)
        flood = self._flooded("monitor", role)
        if flood is not None:
            return flood
        name = name.strip()
        if not name:
            return self._emit(ev.Refused(role=role, action="monitor",
                                         error="a monitor needs a name"))
        if name not in self.monitors and len(self.monitors) >= MAX_MONITORS:
            return self._emit(ev.Refused(
                role=role, action="monitor", name=name,
                error=f"{MAX_MONITORS} monitors are saved, the most a session runs each "
                      "minute: remove one first"))
        first = self.store.probe(role, [sql])  # tried and rolled back: a monitor only reads
        why = None
        if first and first[0].error:
            why = first[0].error
        elif len(first) != 1 or not first[0].columns:
            why = "a monitor must be one SELECT"
        elif first[0].writes or first[0].rowcount:
            why = "a monitor must only read (this query writes)"
        if why is not None:
            return self._emit(ev.Refused(role=role, action="monitor", name=name, sql=sql,
                                         error=why))
        self.monitors[name] = Monitor(name, role, sql, self.minute)
        self._alerting.discard(name)
        event = self._emit(ev.MonitorSaved(role=role, name=name, sql=sql))
        self._run_monitor(self.monitors[name])
        return event

    def remove_monitor(self, name: str) -> None:
        if name in self.monitors and self._flooded("monitor") is not None:
            return
        if self.monitors.pop(name, None) is not None:
            self._emit(ev.MonitorRemoved(name=name))

    def declare(self, role: str, finding_id: str) -> Event:
        """Declare a finding; judged at once against the world as it is now.

        A correct finding counts only when its evidence is present (the fault it names is
        there now, or the race step it names has happened): otherwise it is a false alarm.
        The same finding declared again counts once.
        """
        self._require_player(role)
        flood = self._flooded("declare", role)
        if flood is not None:
            return flood
        finding = self.exercise.finding(finding_id)
        if finding is None:
            known = ", ".join(f.id for f in self.exercise.findings)
            return self._emit(ev.Refused(
                role=role,
                action="declare",
                error=f"no finding {finding_id!r}; findings are {known}",
            ))
        self._check_world(if_changed=True)
        credited = {f for _, f in self.facts.confirmed}
        look: Look | None = None
        unshown = ""
        if not finding.correct:
            verdict = "wrong"
        elif finding.id in credited:
            verdict = "repeat"
        elif not self._evidence_present(finding.evidence):
            verdict = "false_alarm"
        else:
            look, unshown = self._shown_by(finding.evidence)
            verdict = "unseen" if unshown else "confirmed"
            if unshown:
                self.facts.unseen.append((self.minute, finding.id, unshown))
        event = self._emit(ev.Declaration(
            role=role, finding=finding.id, text=finding.text, correct=finding.correct,
            verdict=verdict, why=declared_why(
                verdict, f"{self.time_of(look.minute)} ({short_sql(look.sql)})" if look else "",
                unshown, d.wrong_finding_cost if (d := self.exercise.scoring.detection) else 0,
                replayed=self.exercise.replay is not None),
        ))
        self.facts.declarations.append((self.minute, finding.id, finding.correct))
        if verdict == "confirmed":
            self.facts.confirmed.append((self.minute, finding.id))
            self._remember_looks(finding.id, finding.evidence)
            self._detect(f"declared '{finding.text}'")
        elif verdict == "repeat" and not self._shown_by(finding.evidence)[1]:
            # a later look may be the real one, should the first be taken back at the end
            self._remember_looks(finding.id, finding.evidence)
        elif verdict == "false_alarm":
            self.facts.false_alarms.append((self.minute, finding.id))
        self._spend()
        return event

    def _evidence_present(self, evidence: str | None) -> bool:
        """Is what a finding names there, or was it tonight (a fault since repaired is still
        a right diagnosis)? No evidence named: any fault so far."""
        if evidence is None:
            return bool(self._ever_violated)
        if any(i.id == evidence for i in self.exercise.invariants):
            return evidence in self._ever_violated
        return any(s.step.id == evidence and s.happened_at is not None
                   for s in self.facts.race_steps(self.exercise))

    def _note_reads(self, result: StatementResult, role: str, *, monitor: str | None = None,
                    recheck: bool = True) -> None:
        """Remember when the team last read each table (a query of theirs, or a monitor),
        and what the read showed (a monitor shows something only when it returns rows).
        A look whose answer comes from chance or the clock shows nothing (`_blind`)."""
        if result.ok:
            for table in result.reads:
                self._team_reads[table] = len(self.events)
            shown = result.rows or not monitor
            if result.reads and shown and not self.exercise.role(role).automated:
                digest = _digest(result.columns, result.rows)
                self._looks.append(Look(n=len(self._looks) + 1, since=len(self.events),
                                         minute=self.minute, role=role, sql=result.sql,
                                         tables=frozenset(result.reads), monitor=monitor,
                                         digest=digest,
                                         blind=self._blind(role, result.sql, digest, recheck)))

    def _blind(self, role: str, sql: str, digest: str, recheck: bool) -> str:
        """Why a look cannot show the fault, whatever the world holds ("" when it may): it
        calls random() or reads the clock, or it answers differently when run again at once
        on the same world (read-only, rolled back; a random() hidden in a view). Not run
        again when nothing could tell (a held transaction, a later write in the same
        submission) or when the same answer to the same query was checked before."""
        if chance(sql):
            return CHANCE
        if not recheck or not _reads_only(sql) or self._rechecked.get(sql) == digest:
            return ""
        again = self.store.probe(role, [sql])
        if len(again) != 1 or not again[0].ok:
            return ""  # it cannot be asked again now (a held transaction): the replay judges it
        if _digest(again[0].columns, again[0].rows) != digest:
            return UNSTEADY
        self._rechecked[sql] = digest
        return ""

    def _shown_by(self, evidence: str | None) -> tuple[Look | None, str]:
        """The team's latest look since the fault began that can show the evidence (it read
        a table the evidence lives in or the automation wrote since, and its answer follows
        the world), or None and why not, in words for the player. Where the evidence lives
        cannot be told (no `truth` tables, or its check reads none): no look is asked for."""
        if not self._evidence_tables(evidence):
            return None, ""
        since, began = self._fault_since(evidence)
        tables = self._seen_in(evidence)
        tried = [k for k in self._looks if k.since >= since and k.tables & tables
                 and k.monitor not in self.facts.noisy_monitors]
        good = [k for k in tried if not k.blind]
        if good:
            return good[-1], ""
        if tried:
            last = tried[-1]
            return None, (f"your look at {self.time_of(last.minute)} "
                          f"({short_sql(last.sql)}) cannot show it: {last.blind}")
        where = (f"{tables_words(tables)} (directly or through a view)" if tables
                 else "the world")
        return None, (f"no query or monitor of yours read {where} between the fault ({began}) "
                      "and this declaration: a diagnosis from memory is not a diagnosis")

    def _remember_looks(self, finding: str, evidence: str | None) -> None:
        """The team's last different reads of where the evidence lives, since the fault began:
        the final replay runs them on the normal night, and a diagnosis whose every look shows
        the same there was not seen in the world (a query that cannot show the fault). A look
        that cannot show anything (chance, the clock) is not one of them."""
        since, _began = self._fault_since(evidence)
        tables = self._seen_in(evidence) if self._evidence_tables(evidence) else set()
        latest = {k.sql: k for k in self._looks
                  if k.since >= since and k.tables & tables and not k.blind}
        looks = tuple(sorted(latest.values(), key=lambda k: k.n))[-5:]
        if not tables or not looks:
            return
        self._declared_looks.append((self.minute, finding, looks))
        for look in looks:
            self.look_sql.append((look.minute, look.name, look.role, look.sql))

    def _evidence_tables(self, evidence: str | None) -> tuple[str, ...]:
        """The world's tables the evidence's check reads (the tables the evidence lives in)."""
        sql = next((i.sql for i in self.exercise.invariants if i.id == evidence), None)
        if sql is None:
            sql = next((s.step.happened for s in self.facts.race_steps(self.exercise)
                        if s.step.id == evidence), None)
        truth = self.exercise.truth
        if sql is None or truth is None:
            return ()
        return tuple(t for t in truth.tables
                     if re.search(rf"\b{re.escape(t.lower())}\b", sql.lower()))

    def _evidence_since(self, evidence: str | None) -> int:
        """The event count when the evidence appeared."""
        if evidence in self._violated_since:
            return self._violated_since[evidence]
        return next((s.happened_seq or 0 for s in self.facts.race_steps(self.exercise)
                     if s.step.id == evidence and s.happened_at is not None), 0)

    def _fault_since(self, evidence: str | None) -> tuple[int, str]:
        """The event count, and the clock's time, from which a look can show the evidence:
        when the night's first fault began, or when the evidence appeared if that was earlier
        (a look before the fault shows nothing of it; one after may, whichever step of the
        story the finding names: the final replay judges what it showed)."""
        since = self._evidence_since(evidence)
        if self._violated_since:
            since = min(since, *self._violated_since.values())
        began = self.events[since].sim_time if since < len(self.events) else self.clock_face
        return since, began

    def _seen_in(self, evidence: str | None) -> set[str]:
        """The tables (lower case) where the evidence can be seen: those its check reads, and
        those the automation wrote since the fault began (a job's own log of what it did)."""
        return {t.lower() for t in self._evidence_tables(evidence)} | self._fault_writes

    def bound_parameters(self, role: str) -> tuple[str, ...]:
        """The named parameters the automation binds for `role`'s statements."""
        names = ["now", "now_hhmm"]
        for task in self.exercise.tasks:
            if task.role == role:
                names.extend(n for n in task.remember if n not in names)
        return tuple(names)

    def edit_statement(self, role: str, statement_id: str, sql: str) -> ev.Edit | ev.Refused:
        """Replace a named automation statement for the rest of the session."""
        self._require_player(role)
        flood = self._flooded("edit", role)
        if flood is not None:
            return flood
        if statement_id not in self.statement_sql:
            known = ", ".join(self.statement_sql)
            return self._emit(ev.Refused(
                role=role,
                action="edit",
                statement=statement_id,
                error=f"no automation statement {statement_id!r}; statements are {known}",
            ))
        if not self.exercise.role(role).schema:
            return self._emit(ev.Refused(
                role=role,
                action="edit",
                statement=statement_id,
                error=f"role {role} may not edit the automation (it may not change the schema)",
            ))
        if not sql.strip():
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error="the new SQL is empty"))
        runs_as = self.exercise.statement(statement_id).role
        bound = self.bound_parameters(runs_as)
        unbound = [n for n in dict.fromkeys(_param_names(sql)) if n not in bound]
        if unbound:
            names = ", ".join(f":{n}" for n in unbound)
            return self._emit(ev.Refused(
                role=role, action="edit", statement=statement_id,
                error=f"the automation does not bind {names}; {runs_as}'s "
                      f"statements can use {', '.join(f':{n}' for n in bound)}"))
        problem = directive_problem(sql)
        if problem is not None:
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error=problem))
        try:
            control = transaction_control(sql)
        except NotControl as exc:
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error=str(exc)))
        tried = (self.store.probe(runs_as, [sql], self._params(runs_as, sql))  # rolled back
                 if control is None else [])
        broken = next((r for r in tried if r.error_kind == "syntax"), None)
        if broken is not None:
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error=f"the new SQL does not parse: {broken.error}"))
        before = self.statement_sql[statement_id]
        self.statement_sql[statement_id] = sql
        self.facts.edits.append((self.minute, statement_id))
        return self._emit(ev.Edit(role=role, statement=statement_id, sql=sql, before=before))

    def reveal_hint(self, hint_id: str | None = None, role: str | None = None,
                    to: Sequence[str] = ()) -> Event:
        """Reveal a hint (the next unrevealed one when no id is given); it costs points. `to`:
        the roles the facilitator gives it to (empty: everyone)."""
        flood = self._flooded("hint", role)
        if flood is not None:
            return flood
        revealed = {h for _, h in self.facts.hints}
        hints = [h for h in self.exercise.hints if h.id not in revealed]
        if hint_id is not None:
            hints = [h for h in self.exercise.hints if h.id == hint_id]
        elif role is not None:
            pending_tasks = {p.task.id for p in self.pending.values()}
            preferred = [h for h in hints if h.task in pending_tasks]
            hints = preferred or hints
        if not hints:
            return self._emit(ev.Refused(action="hint", error="no hint left to reveal"))
        hint = hints[0]
        if hint.id not in revealed:
            self.facts.hints.append((hint.cost, hint.id))
        return self._emit(ev.Hint(id=hint.id, text=hint.text, cost=hint.cost, task=hint.task,
                                  to=tuple(to)))

    def send_inject(self, title: str, text: str = "", to: Sequence[str] = (),
                    kind: str = "message") -> Event:
        """A facilitator's ad-hoc inject (`kind`: message, status or alarm)."""
        flood = self._flooded("inject")
        if flood is not None:
            return flood
        return self._emit(ev.Inject(
            id="adhoc", inject_kind=InjectKind(kind).value, title=title, text=text, to=tuple(to),
            source="facilitator",
        ))

    def note(self, text: str, role: str | None = None, author: str | None = None) -> Event:
        flood = self._flooded("note", role)
        if flood is not None:
            return flood
        return self._emit(ev.Note(role=role, text=text, author=author))

    def record(self, event: E) -> E:
        """Record what the people around the session did (the cast, the facilitator's
        clock, a team host's seats and their commands): it changes nothing in play, it goes
        into the transcript at the session's clock like every event."""
        if not isinstance(event, _OUTSIDE_EVENTS):
            raise SessionError(f"{event.kind} events are the session's own to record")
        if isinstance(event, (ev.SeatCommand, ev.CommandRefused)) and self._cap_reached():
            self._flood_refusal(event.kind, event.role)  # a seat's flood: no line per command
            return replace(event, sim_time=self.clock_face, minute=self.minute)
        return self._emit(event)

    def hand_over(self, role: str, to_automation: bool) -> Event:
        """The facilitator hands a player's routine (repeating) tasks to the automation, which
        runs them as the exercise's own automation would, or takes them back for the player;
        a one-off (story) task stays the player's either way. Recorded."""
        self._require_player(role)
        if to_automation:
            self.handed.add(role)
            for task_id, pending in list(self.pending.items()):
                if pending.task.role == role and pending.task.every is not None:
                    del self.pending[task_id]  # the automation runs its next time
        else:
            self.handed.discard(role)
        return self._emit(ev.Facilitation(
            action="handover", to=(role,),
            detail=HANDED if to_automation else "back to the player"))

    def hold_task(self, task_id: str, hold: bool) -> Event:
        """The facilitator holds a task (the night's fault step) so it does not run when due,
        or releases it: one that fell due while held runs at the next minute. Recorded."""
        task = next((t for t in self.exercise.tasks if t.id == task_id), None)
        if task is None:
            raise SessionError(f"no task {task_id!r} in this exercise")
        if hold:
            self.held.setdefault(task_id, False)
        elif self.held.pop(task_id, False):
            self._schedule(self.minute + 1, _TASK, task)
        return self._emit(ev.Facilitation(action="hold" if hold else "release", to=(task.role,),
                                          detail=task_id, text=task.title))

    def schedule_on_fault(self, title: str, text: str, harm: str, after: int = 0,
                          to: Sequence[str] = (), kind: str = "message") -> Event:
        """A facilitator's inject that follows the world: it arrives when the harm's fault
        holds (`after` minutes into it), as the exercise's own alarms do, and never if the
        fault never begins."""
        harms = [i.id for i in self.exercise.invariants]
        if harm not in harms:
            raise SessionError(f"unknown harm {harm!r}; harms are {', '.join(harms)}")
        try:
            inject_kind = InjectKind(kind or "message")
        except ValueError:
            raise SessionError(f"unknown inject kind {kind!r}; kinds are message, status, "
                               "alarm") from None
        flood = self._flooded("schedule")
        if flood is not None:
            return flood
        self._counter += 1
        inject = Inject(id=f"facilitator-{self._counter}", at=None, title=title, text=text,
                        kind=inject_kind, to=tuple(to), source="facilitator", on_fault=harm,
                        after=max(0, after))
        event = self._emit(ev.Facilitation(action="schedule", to=tuple(to), detail=title,
                                           text=text, when=harm, after=inject.after,
                                           inject_kind=inject_kind.value))
        self._on_fault.setdefault(harm, []).append(inject)
        if harm in self._violated:  # it holds now: this spell of the fault sends it
            if inject.after <= 0:
                self._on_fault[harm].remove(inject)
                self._send(inject)
            else:
                self._schedule(self.minute + inject.after, _INJECT, inject,
                               self._onsets.get(harm, 0))
        return event

    def schedule_inject(self, title: str, text: str, at: int,
                        to: Sequence[str] = ()) -> Event:
        """A facilitator's inject for a later minute: it arrives like the exercise's own."""
        if at <= self.minute:
            return self.send_inject(title, text, to)
        flood = self._flooded("schedule")
        if flood is not None:
            return flood
        self._counter += 1
        inject = Inject(id=f"facilitator-{self._counter}", at=at, title=title, text=text,
                        kind=InjectKind.MESSAGE, to=tuple(to), source="facilitator")
        self._schedule(at, _INJECT, inject)
        return self._emit(ev.Facilitation(action="schedule", at=self.time_of(at), to=tuple(to),
                                          detail=title, text=text))

    def replay(self, *, final: bool = False) -> ev.Replay:
        """Replay the race against a copy of the team's database; guards are judged by it.

        The team may ask for a replay at any time to see what its guards do; the one that
        scores is the `final` replay `end` runs on the database as the night left it."""
        from raceday.engine.replay import replay_race  # replay builds sessions of its own

        rubric = self.exercise.scoring.guards
        if not self.facts.race_steps(self.exercise) and not (rubric and rubric.harms
                                                             and self.exercise.replay):
            return self._emit(ev.Replay(available=False, final=final,
                                        note="this exercise defines no race to replay"))
        if final:
            self.facts.replay = None  # guard points come from this replay alone
        try:
            result = replay_race(self, tuple(self.alert_sql + self.look_sql) if final else (),
                                 keep_world=not final, reveal=final)
        except Exception as exc:  # the live session must survive a replay that cannot be built
            from raceday.store.replay_world import remove_earlier_worlds  # sqlite3: only here

            remove_earlier_worlds(self.folder / "replay")  # what it built (a full disk?) goes
            if isinstance(exc, MachineError):  # a full disk: stop, resume once there is room
                raise
            return self._emit(ev.Replay(available=False, final=final,
                                        error=f"the replay failed: {exc}"))
        self.facts.replay = result
        if final:
            self.final_replay = result
        return self._emit(ev.Replay(available=True, final=final, result=result,
                                    guards=replay_guards(self.exercise, result)))

    # -- automation ------------------------------------------------------------------------

    def _params(self, role: str, sql: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        values: dict[str, Any] = {"now": self.minute, "now_hhmm": self.clock_face}
        values.update(self.memory.get(role, {}))
        if extra:
            values.update(extra)
        return {name: values.get(name) for name in _param_names(sql)}

    def _render_context(self, task: Task, due: int) -> str:
        values = {"at": self.time_of(due), "now": self.clock_face}
        values.update({k: str(v) for k, v in self.memory.get(task.role, {}).items()})
        text = task.context or task.title
        try:
            return text.format_map(_Missing(values))
        except (ValueError, IndexError):
            return text

    def _due_task(self, task: Task, attempt: int) -> None:
        if task.id in self._stopped_tasks:
            return
        if task.id in self.held:  # the facilitator holds it: it runs when they release it
            self.held[task.id] = True
            return
        routine_handed = task.role in self.handed and task.every is not None
        if task.role in self.players and self.team_left_at is None and not routine_handed:
            if attempt == 0:
                for step in self._steps_of(task):
                    step.runs.append(len(self.events))
                self._remember_for_player(task)
                context = self._render_context(task, self.minute)
                before = self.pending.get(task.id)
                since = before.since if before is not None else self.minute
                self.pending[task.id] = PendingTask(task, self.minute, context, since)
                self._emit(ev.TaskDue(role=task.role, task=task.id, title=task.title,
                                      context=context, hint_available=bool(task.hint)))
            return
        self._run_task(task, attempt)

    def _remember_for_player(self, task: Task) -> None:
        """Keep what the automation would have read, so later tasks can say "you checked N"."""
        if not task.remember:
            return
        role = task.role
        remembered: set[str] = set()
        for statement_id in task.statements:
            sql = self.statement_sql[statement_id]
            for result in self.store.probe(role, [sql], self._params(role, sql)):
                self._remember(task, result, remembered)

    def _remember(self, task: Task, result: StatementResult, remembered: set[str]) -> None:
        """Keep the task's `remember` columns from the first row the run returns with them."""
        if not (task.remember and result.ok and result.columns and result.rows):
            return
        row = dict(zip(result.columns, result.rows[0], strict=False))
        for name in task.remember:
            if name in row and name not in remembered:
                self.memory[task.role][name] = row[name]
                remembered.add(name)

    def _steps_of(self, task: Task) -> list[RaceStepState]:
        if self._steps_by_task is None:
            self._steps_by_task = {}
            for state in self.facts.race_steps(self.exercise):
                self._steps_by_task.setdefault(state.step.task, []).append(state)
        return self._steps_by_task.get(task.id, [])

    def _run_task(self, task: Task, attempt: int) -> None:
        role = task.role
        if not task.statements:  # a player's task with nothing for the automation to do
            return
        if task.when:
            rows = self._check_rows(task.when, self._params(role, task.when))
            if not rows:
                self._emit(ev.Automation(role=role, task=task.id, title=task.title,
                                         outcome="skipped",
                                         note=task.skipped or "the automation is switched off"))
                return
        lost = self._txn_lost.get(role)
        if lost is not None and not self._begins(task):
            del self._txn_lost[role]
            self._emit(ev.Automation(role=role, task=task.id, title=task.title, outcome="skipped",
                                     note=f"its transaction was rolled back at {self.time_of(lost)}:"
                                          " nothing is left to go on with"))
            return
        for step in self._steps_of(task):
            step.runs.append(len(self.events))
        failed = False
        writes = zero_writes = changed = 0
        last_rowcount: int | None = None
        remembered: set[str] = set()
        refused: str | None = None  # why a held transaction was refused (shown with the run)
        change = task.change_at(self.minute)  # a practice night's fault in this run
        bound = self._practice_values(change) if change is not None else None
        carried_on = change.then if change is not None else ()
        for statement_id in task.statements + carried_on:
            if change is not None and statement_id in change.skip:
                continue
            sql = self.statement_sql[statement_id]
            in_transaction = self.store.holds(role) is not None or _controls(sql)
            results = self._automation_execute(role, sql, bound)
            lost = False  # a write of this statement changed no rows, and it says to stop then
            for result in results:
                if in_transaction and not result.ok and refused is None:
                    refused = result.error
                self._record_statement(role, result, automated=True, task=task.id,
                                       statement=statement_id)
                self._remember(task, result, remembered)
                if result.is_write and not result.columns:
                    last_rowcount = result.rowcount
                    writes += 1
                    zero_writes += 0 if result.rowcount else 1
                    changed += result.rowcount or 0
                    lost = lost or (result.ok and not result.rowcount
                                    and stops_on_zero_rows(sql))
                if not result.ok:
                    failed = True
                if result.writes or result.schema_changed or (
                        result.ok and _commits(result.sql)):  # a held transaction's writes show now
                    self._check_world()
            if failed:
                break
            if lost:  # the statement's own rule: a lost conditional write ends the run
                if self.store.holds(role) is not None:
                    self._record_statement(role, self.store.rollback(role), automated=True,
                                           task=task.id, statement=statement_id)
                refused = (f"stopped: {statement_id} changed 0 rows, and its SQL says "
                           f"'{ZERO_ROWS_STOP}'")
                break
        for step in self._steps_of(task) if self.judge_world else ():
            sql = step.step.happened
            extra = {"failed": int(failed), "rowcount": last_rowcount}
            rows = self._check_rows(sql, self._params(role, sql, extra), fail_closed=True)
            if rows and step.happened_at is None:
                step.happened_at = self.minute
                step.happened_seq = len(self.events)
                self._emit(ev.RaceStep(step=step.step.id, title=step.step.title))
        zero = zero_writes > 0  # a write of the run changed 0 rows: it did not take
        outcome = "failed" if failed else "zero_rows" if zero else "applied"
        policy = task.on_error if failed else task.on_zero_rows if zero else None
        follow = self._follow_policy(task, attempt, policy)
        self._emit(ev.Automation(role=role, task=task.id, title=task.title, outcome=outcome,
                                 attempt=attempt, next=follow, changed=changed if writes else None,
                                 note=refused))

    def _practice_values(self, change: PracticeChange) -> dict[str, Any]:
        """What a practice night's run binds: its fixed values, and what its trusted queries
        read from the world now (None when a query returns nothing)."""
        values: dict[str, Any] = dict(change.bind)
        for name, sql in change.bind_sql:
            _columns, rows = self.store.app_query(sql)
            values[name] = rows[0][0] if rows and len(rows[0]) else None
        return values

    def _begins(self, task: Task) -> bool:
        """Whether the task's first statement begins a transaction."""
        try:
            control = transaction_control(self.statement_sql[task.statements[0]])
        except NotControl:
            return False
        return control is not None and control.word == "begin"

    def _automation_execute(self, role: str, sql: str,
                            bound: Mapping[str, Any] | None = None) -> list[StatementResult]:
        """An automation statement through the store: BEGIN/COMMIT/ROLLBACK hold or end the
        role's transaction (store.transactions), anything else runs as players' SQL does."""
        try:
            control = transaction_control(sql)
        except NotControl as exc:
            return [StatementResult(sql=sql.strip(), error=str(exc), error_kind="syntax")]
        if control is None:
            held = self.store.holds(role) is not None
            results = self.store.execute(role, sql, self._params(role, sql, bound))
            if held and self.store.holds(role) is None:  # an error rolled it back
                self._txn_lost[role] = self.minute
            return results
        if control.word == "begin":
            result = self.store.begin(role, control.isolation)
        elif self.store.holds(role) is None:  # as PostgreSQL does: nothing to end, no error
            result = StatementResult(sql=sql.strip())
        else:
            result = (self.store.commit if control.word == "commit" else self.store.rollback)(role)
        if result.ok and control.word == "begin":
            self._txn_lost.pop(role, None)
        elif not result.ok:
            self._txn_lost[role] = self.minute
        return [replace(result, sql=sql.strip())]

    def _follow_policy(self, task: Task, attempt: int, policy: Policy | None) -> str | None:
        if policy is None or policy is Policy.IGNORE:
            return None
        if policy is Policy.STOP:
            self._stopped_tasks.add(task.id)
            return "stopped"
        retry = task.retry
        if retry is None:
            return None
        when = self.minute + retry.every
        if retry.until is not None and when > retry.until:
            return "gave up"
        if retry.limit is not None and attempt + 1 > retry.limit:
            return "gave up"
        self._schedule(when, _TASK, task, attempt + 1)
        return f"retry at {self.time_of(when)}"

    # -- checks ----------------------------------------------------------------------------

    def _check_rows(self, sql: str, params: Mapping[str, Any] | None = None, *,
                    fail_closed: bool = False) -> list[Any]:
        """Rows of one of the exercise's own checks.

        A check the team's schema broke is reported once. A check whose rows mean harm (an
        invariant, a race step) fails closed: it reads as the harm being there, with the error
        as its row. Any other check (a milestone, a kill switch, a task done) reads as no rows.
        """
        try:
            return self.world_query(sql, params)[1]
        except MachineError:
            raise
        except RacedayError as exc:
            if sql not in self._broken_checks:
                self._broken_checks.add(sql)
                self._emit(ev.CheckFailed(sql=sql, error=str(exc), fail_closed=fail_closed))
            return [(f"the check could not run: {exc}",)] if fail_closed else []

    def world_query(self, sql: str, params: Mapping[str, Any] | None = None,
                    ) -> tuple[tuple[str, ...], list[Any]]:
        """A trusted read of the world (an exercise's check, the world panel), as the
        store's `app_query` gives it and raises; the answer is kept while none of the tables
        it read has been written since, nor the schema changed (`_check_key`)."""
        if not _reads_only(sql):  # a check that may write (WITH ... DELETE)
            self._unnamed_writes += 1
        asked = _asked(params)
        key = self._check_key(sql, params)
        kept = self._check_kept.get(sql)
        if key is not None and kept is not None and kept[0] == asked and kept[1] == key:
            return kept[2], list(kept[3])
        self._check_kept.pop(sql, None)
        columns, rows = self.store.app_query(sql, params)
        if key is not None:
            self._check_kept[sql] = (asked, key, columns, list(rows))
        return columns, list(rows)

    def _check_key(self, sql: str, params: Mapping[str, Any] | None) -> tuple[int, ...] | None:
        """What a check's answer depends on (`_world_key` of the tables it reads), or None
        when it may change with nothing written (it writes, reads the clock, calls random(),
        or the store cannot say what it reads): then it runs every time it is asked. Its
        answer is kept only while the same key holds, so it is the answer a run would give."""
        reads_of = getattr(self.store, "reads_of", None)
        if reads_of is None or not getattr(self.store, "reads_complete", False) \
                or not _reads_only(sql) or not _steady(sql):
            return None
        stamp = (self._schema_epoch, self._commits)  # what a query reads follows the schema
        known = self._check_reads.get(sql)
        if known is None or known[0] != stamp:
            known = self._check_reads[sql] = (stamp, reads_of(sql, params))
        tables = known[1]
        return None if tables is None else self._world_key(sorted(tables))

    def _record_statement(self, role: str, result: StatementResult, *, automated: bool,
                          task: str | None = None, statement: str | None = None) -> None:
        if result.error_kind == "machine":  # the world cannot be written: play cannot go on
            raise MachineError(result.error or "the world cannot be written")  # (not recorded)
        break_glass = bool(result.break_glass)  # decided by the store (StoreBase._with_break_glass)
        self._emit(ev.Statement(
            role=role,
            sql=result.sql,
            ok=result.ok,
            rowcount=result.rowcount,
            rows=len(result.rows) if result.columns else None,
            truncated=result.truncated,
            error=result.error,
            error_kind=result.error_kind,
            elapsed_ms=round(result.elapsed_ms, 3),
            automated=automated,
            task=task or None,
            statement=statement if task else None,
            break_glass=break_glass,
            schema_changed=result.schema_changed,
            writes=tuple(result.writes),
        ))
        if result.schema_changed:
            self._schema_epoch += 1
        if automated and result.ok and _commits(result.sql):
            # what the transaction wrote shows to other connections only now: every answer
            # kept while it was open (a check's, a monitor's) is stale, and so is what a
            # query reads if it changed the schema
            self._commits += 1
            self._unnamed_writes += 1
        if result.writes or result.schema_changed or (result.rowcount or 0) > 0:
            self._world_changes += 1
        for table in result.writes:
            table = table.lower()
            self._table_writes[table] = self._table_writes.get(table, 0) + 1
        if not result.ok or (not result.writes and (result.rowcount or 0) > 0):
            # a failed statement may have kept some rows (ON CONFLICT FAIL): changed, where?
            self._unnamed_writes += 1
        if result.ok and result.writes and not automated:
            self.facts.player_writes.append((self.minute, role, tuple(result.writes)))
        if result.ok and automated and self._violated_since:
            self._fault_writes.update(t.lower() for t in result.writes)

    def _check_world(self, *, if_changed: bool = False) -> None:
        """Check the truth, invariants and milestones. They take no parameters, so their
        answers can only change when the world does; `if_changed` skips the check when nothing
        was written."""
        if not (self.judge_world or self.track_harms) or (
                if_changed and self._checked_at == self._world_changes):
            return
        self._checked_at = self._world_changes
        if not self.judge_world:
            for invariant in self.exercise.invariants:
                if invariant.outage:
                    self.harm_clock.observe(invariant.id, self.minute,
                                            bool(self._harm_rows(invariant)))
            return
        truth = self.exercise.truth
        if truth is not None:
            problems = self._truth_problems()
            self._set_violation(BROKEN_WORLD, "The world is broken: " + "; ".join(problems)
                                if problems else "The world is broken",
                                [[p] for p in problems])
        for invariant in self.exercise.invariants:
            rows = self._harm_rows(invariant)
            self.harm_clock.observe(invariant.id, self.minute, bool(rows))
            if invariant.outage:
                self._set_violation(invariant.id, invariant.fault, rows)
        for milestone in self.exercise.milestones:
            if milestone.id in self.facts.milestones:
                continue
            if milestone.again and self.facts.fault_started is None:
                continue  # it can only come back once the fault has begun
            rows = self._check_rows(milestone.sql)
            if milestone.again and milestone.id not in self._gone:
                if not rows:
                    self._gone.add(milestone.id)  # gone since the fault: now it can come back
                continue
            if rows:
                self.facts.milestones[milestone.id] = self.minute
                self._emit(ev.Milestone(id=milestone.id, label=milestone.label))

    def _harm_rows(self, invariant: Invariant) -> list[Any]:
        """The rows that show the invariant's harm now; a `went_back` harm compares each
        key's value with the highest raceday has seen it have tonight."""
        if not invariant.went_back:
            return self._check_rows(invariant.sql, fail_closed=True)
        failed = len(self._broken_checks)
        rows = self._check_rows(invariant.went_back, fail_closed=True)
        if len(self._broken_checks) != failed or (
                rows and len(rows[0]) == 1 and invariant.went_back in self._broken_checks):
            return rows  # the check could not run: the harm reads as present (fail closed)
        return self._history.went_back(invariant.id, rows)

    def _set_violation(self, ident: str, fault: str, rows: Sequence[Any]) -> None:
        if rows and ident not in self._violated:
            if not self._violated:
                self.facts.outages.append([self.minute, None])
            self._violated.add(ident)
            self._ever_violated.add(ident)
            self._violated_since.setdefault(ident, len(self.events))
            relapse = self.facts.restored_at is not None
            if self.facts.fault_started is None:
                self.facts.fault_started = self.minute
                self.facts.fault_invariant = ident
                self.facts.fault_text = fault
                acting = self._acting
                if acting is not None and not self.exercise.role(acting[0]).automated:
                    self.facts.caused_by = acting
            if relapse:
                self.facts.relapses.append(self.minute)
            objects = tuple(str(r[0]) for r in rows) if ident == BROKEN_WORLD else ()
            self._faults[ident] = fault
            self._emit(ev.Fault(invariant=ident, fault=fault, relapse=relapse, rows=_short(rows),
                                objects=objects))
            if self._on_fault:
                self._fault_began(ident)
        elif not rows and ident in self._violated:
            self._violated.discard(ident)
            self._emit(ev.InvariantClear(invariant=ident, fault=fault))
            if not self._violated:
                self.facts.restored_at = self.minute
                self.facts.restores.append(self.minute)
                if self.facts.outages:
                    self.facts.outages[-1][1] = self.minute
                self._emit(ev.Restored(note="no invariant is violated any more"))

    # -- the truth the checks rest on ----------------------------------------------------

    def _record_truth(self) -> None:
        """Remember the columns each truth table has in the world as the exercise built it."""
        truth = self.exercise.truth
        if truth is None:
            return
        for table in truth.tables:
            try:
                _, rows = self.store.app_query(
                    "SELECT name FROM pragma_table_info(:t)", {"t": table})
            except MachineError:
                raise
            except RacedayError:
                rows = []
            self._truth_columns[table] = tuple(str(r[0]) for r in rows)
        for view in truth.views:
            try:
                _, rows = self.store.app_query(
                    "SELECT sql FROM sqlite_master WHERE type = 'view' AND lower(name) = :v",
                    {"v": view.name.lower()})
            except MachineError:
                raise
            except RacedayError:
                rows = []
            self._truth_view_sql[view.name.lower()] = str(rows[0][0]) if rows else None

    def _truth_problems(self) -> list[str]:
        """What the team did to the objects the checks rest on; [] when all is as it should be.

        The answer is kept until the schema changes again when it cannot change before: a
        slow object (one time-out, not one a minute), or views that are still the exercise's
        own (only a view the team redefined is compared with its definition row by row, after
        every change to the tables either reads: `world_query`)."""
        truth = self.exercise.truth
        if truth is None:
            return []
        if self._truth_cache is not None and self._truth_cache[0] == self._schema_epoch:
            return self._truth_cache[1]
        try:
            _, rows = self.store.app_query(
                "SELECT lower(name), type, sql FROM sqlite_master WHERE type IN ('table', 'view')")
        except MachineError:
            raise
        except RacedayError as exc:
            return [f"the world's schema cannot be read ({exc})"]
        kinds = {str(r[0]): str(r[1]) for r in rows}
        sqls = {str(r[0]): r[2] for r in rows}
        problems: list[str] = []
        slow = False
        static = True
        for table in truth.tables:
            kind = kinds.get(table.lower())
            if kind is None:
                problems.append(f"table {table} is gone (dropped or renamed)")
                continue
            if kind != "table":
                problems.append(f"table {table} was replaced by a {kind}")
                continue
            try:
                _, cols = self.store.app_query(
                    "SELECT name FROM pragma_table_info(:t)", {"t": table})
            except MachineError:
                raise
            except RacedayError as exc:
                problems.append(f"table {table} cannot be read ({exc})")
                continue
            have = {str(c[0]).lower() for c in cols}
            missing = [c for c in self._truth_columns.get(table, ()) if c.lower() not in have]
            if missing:
                problems.append(f"table {table} lost its column{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(missing)}")
        for view in truth.views:
            kind = kinds.get(view.name.lower())
            if kind is None:
                problems.append(f"view {view.name} is gone (dropped or renamed)")
                continue
            if kind != "view":
                problems.append(f"view {view.name} was replaced by a {kind}")
                continue
            original = self._truth_view_sql.get(view.name.lower())
            if original is not None and sqls.get(view.name.lower()) == original:
                continue  # the exercise's own view, over tables checked above
            static = False
            name = view.name.replace('"', '""')
            same = (f'SELECT (SELECT count(*) FROM "{name}") = (SELECT count(*) FROM ({view.sql})) '
                    f'AND NOT EXISTS (SELECT * FROM "{name}" EXCEPT SELECT * FROM ({view.sql})) '
                    f'AND NOT EXISTS (SELECT * FROM ({view.sql}) EXCEPT SELECT * FROM "{name}")')
            try:  # kept while the view's tables are not written (a 10k world: a scan each)
                _, answer = self.world_query(same)
            except MachineError:
                raise
            except RacedayError as exc:
                if getattr(exc, "kind", "") == "timeout":
                    slow = True
                    problems.append(f"view {view.name} is too slow to read (over the time limit)")
                else:
                    problems.append(f"view {view.name} cannot be checked ({exc})")
                continue
            if not answer or not answer[0][0]:
                problems.append(f"view {view.name} no longer gives what its definition says "
                                "(it was replaced)")
        self._truth_cache = (self._schema_epoch, problems) if slow or static else None
        return problems

    def _check_player_tasks(self) -> None:
        for task_id, pending in list(self.pending.items()):
            task = pending.task
            role = task.role
            for step in self._steps_of(task):
                sql = step.step.happened
                rows = self._check_rows(sql, self._params(role, sql, {"failed": 0}),
                                        fail_closed=True)
                if rows and step.happened_at is None:
                    step.happened_at = self.minute
                    step.happened_seq = len(self.events)
                    self._emit(ev.RaceStep(step=step.step.id, title=step.step.title,
                                           by_player=True))
            if task.done_when and BROKEN_WORLD not in self._violated:
                rows = self._check_rows(task.done_when, self._params(role, task.done_when))
                if rows:
                    del self.pending[task_id]
                    self.facts.tasks_done[task_id] = self.minute
                    self._emit(ev.TaskDone(role=role, task=task_id, title=task.title,
                                           points=task.points))

    def _run_probes(self) -> None:
        for minute, name, role, sql in self.probes:
            if minute != self.minute:
                continue
            results = self.store.probe(role, [sql])
            first = results[0] if results else None
            if first is None or not first.ok:
                error = first.error if first is not None and first.error else "no result"
                self.probe_results.append(ev.MonitorCheck(name=name, at=self.clock_face,
                                                          error=error))
            else:
                self.probe_results.append(ev.MonitorCheck(
                    name=name, at=self.clock_face, rows=len(first.rows),
                    digest=_digest(first.columns, first.rows)))

    def _minute_checks(self) -> None:
        if self.probes:
            self._run_probes()
        if self.team_left_at is None:
            for monitor in list(self.monitors.values()):
                self._run_monitor(monitor)
        self._check_world(if_changed=True)
        self._check_player_tasks()

    def _monitor_result(self, monitor: Monitor) -> StatementResult | None:
        """The monitor's answer now: the one it gave last time while none of the tables it
        read has been written since (nor the schema changed), else it runs again."""
        kept = self._monitor_kept.get(monitor.name)
        if kept is not None and kept[0] == (monitor.role, monitor.sql) \
                and kept[1] == self._world_key(kept[2].reads):
            return kept[2]
        results = self.store.execute(monitor.role, monitor.sql)
        result = results[0] if results else None
        if (result is not None and result.ok and len(results) == 1
                and getattr(self.store, "reads_complete", False) and _steady(monitor.sql)):
            self._monitor_kept[monitor.name] = ((monitor.role, monitor.sql),
                                                self._world_key(result.reads), result)
        else:
            self._monitor_kept.pop(monitor.name, None)
        return result

    def _world_key(self, tables: Sequence[str]) -> tuple[int, ...]:
        """What a read of `tables` depends on: the schema, the writes to each of them, and the
        changes no table was named for."""
        writes = self._table_writes
        return (self._schema_epoch, self._unnamed_writes, *(writes.get(t, 0) for t in tables))

    def _run_monitor(self, monitor: Monitor) -> None:
        result = self._monitor_result(monitor)
        if result is None or not result.ok:
            error = result.error if result else "no result"
            if monitor.name not in self._alerting:
                self._emit(ev.MonitorError(name=monitor.name, error=error or ""))
                self._alerting.add(monitor.name)
            return
        self._note_reads(result, monitor.role, monitor=monitor.name)
        self._check_world(if_changed=True)
        if result.rows and self.healthy and monitor.name not in self.facts.noisy_monitors:
            # rows while nothing is wrong: noise, now and for the rest of the night
            self.facts.noisy_monitors[monitor.name] = self.minute
        if result.rows and monitor.name not in self._alerting:
            self._alerting.add(monitor.name)
            noise = monitor.name in self.facts.noisy_monitors
            # An alert on the fault counts whatever it selects (`matched`): the final replay
            # keeps it only if the normal night, with no fault, gives no rows at that minute
            # (`_judge_alerts`); rows while the world was healthy made it noise already.
            matched = not noise and not self.healthy
            self._emit(ev.Alert(name=monitor.name, role=monitor.role, columns=tuple(result.columns),
                                rows=_short(result.rows), count=len(result.rows), matched=matched,
                                noise=noise))
            if matched:
                self.facts.monitor_alerts.append((self.minute, monitor.name))
                self.alert_sql.append((self.minute, monitor.name, monitor.role, monitor.sql))
                self._detect(f"monitor '{monitor.name}' alerted")
        elif not result.rows and monitor.name in self._alerting:
            self._alerting.discard(monitor.name)
            self._emit(ev.AlertClear(name=monitor.name))

    def _detect(self, how: str) -> None:
        facts = self.facts
        if facts.fault_started is None or facts.detected_at is not None:
            return
        facts.detected_at = self.minute
        facts.detected_by = how
        self._emit(ev.Detected(how=how, latency_minutes=self.minute - facts.fault_started))

    # -- end -------------------------------------------------------------------------------

    @property
    def healthy(self) -> bool:
        return not self._violated

    def end(self, reason: str = "ended") -> Score:
        """Play out the rest of the night, replay the race, judge the good paths, score,
        write the score event and close the transcript.

        When the team ends before the clock runs out, the rest of the night plays itself out
        with only the automation (every role automated, no monitors), so what is judged is
        what the night would have done; those events carry `after_team_left`. Writing the
        debrief is the caller's step: the engine decides, it does not render.
        """
        if self.score is not None:
            return self.score
        if self.log.broken is not None:  # nothing more can be recorded: no score, say why
            self.close()
            raise TranscriptWriteError(self.log.broken)
        self._check_player_tasks()
        if reason != "aborted" and not self.timeline_over:
            self._emit(ev.TeamLeft(note="the team has left: the rest of the night plays itself "
                                    "out with only the automation",
                               until=self.time_of(self.end_minute)))
            self.team_left_at = self.minute
            self.facts.team_left_at = self.minute
            self.advance_to(self.end_minute)
        self.team_left_at = None  # the closing events are the judge's, not the night's
        if reason != "aborted":
            from raceday.engine.charts import chart_events  # the night's charts, for the debrief

            for chart in chart_events(self):
                self._emit(chart)
        if reason != "aborted" and self.exercise.replay is not None:
            self.replay(final=True)
            self._judge_alerts()
            self._judge_looks()
        good_path: list[tuple[str, str, bool, str]] = []
        guards = self.exercise.scoring.guards
        for path in guards.good_path if guards else ():
            results = self.store.probe(path.role, path.sql, self._params(path.role, " ".join(path.sql)))
            failed = next((r for r in results if not r.ok), None)
            changed = sum(r.rowcount or 0 for r in results if r.is_write)
            ok = failed is None and changed > 0
            why = failed.error or "" if failed else ("" if ok else "it changed 0 rows")
            good_path.append((path.id, path.title, ok, why or ""))
        self.facts.good_path = good_path
        self._judge_tasks()
        self.facts.healthy_at_end = self.healthy
        self.facts.faults_at_end = [self._faults.get(i, i) for i in sorted(self._violated)]
        self.facts.reached_end = self.timeline_over
        self.facts.ended_at = self.minute
        self.facts.night_end = self.end_minute
        self.facts.live_steps = step_statuses(self.facts.race_steps(self.exercise))
        self.score = score_session(self.exercise, self.facts, self.time_of)
        self._emit(ev.ScoreEvent(reason=reason, score=self.score))
        self.ended = True
        end_world(self.store, self.folder)  # on PostgreSQL: dropped unless --keep-world
        self.log.close()
        _add_to_history(self.folder, self.events)
        return self.score


    def _judge_tasks(self) -> None:
        for task_id, why in unproven_tasks(self.exercise, self.facts).items():
            del self.facts.tasks_done[task_id]
            self.facts.tasks_unproven[task_id] = why

    def _judge_alerts(self) -> None:
        result = self.final_replay
        if result is None:
            return
        kept, noisy = sort_alerts(self.facts.monitor_alerts, result, self.time_of)
        self.facts.monitor_alerts = kept
        for name, (minute, why) in noisy.items():
            if name not in self.facts.noisy_monitors:
                self.facts.noisy_monitors[name] = minute
                self.facts.noise_reasons[name] = why

    def _judge_looks(self) -> None:
        result = self.final_replay
        if result is None or not self._declared_looks:
            return
        self.facts.confirmed, blind = judge_diagnoses(
            self._declared_looks, self.facts.confirmed, set(self.facts.noisy_monitors), result,
            self.time_of)
        self.facts.blind.extend(blind)

    def close(self) -> None:
        """Close the world and the transcript without a score (the transcript cannot be
        written, or the program is going away): `raceday resume` goes on from here."""
        self.store.close()
        self.log.close()


# Functions whose answer changes with no write to any table: a monitor calling one (or
# reading the clock, or a pragma) runs every minute.
_UNSTEADY_FUNCTIONS = frozenset({
    "random", "randomblob", "changes", "last_insert_rowid", "total_changes", "date", "time",
    "datetime", "julianday", "strftime", "unixepoch", "timediff"})


_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_FIRST_WORD = re.compile(r"\s*(?:(?:--[^\n]*(?:\n|$)|/\*.*?\*/)\s*)*([A-Za-z]+)", re.DOTALL)


@lru_cache(maxsize=256)
def _steady(sql: str) -> bool:
    """True when the query's answer can change only with the tables it reads (or the schema).
    Read on the text (a name in a string counts too: that only makes it run again)."""
    lowered = sql.lower()
    if "current_" in lowered or "pragma" in lowered:
        return False
    return not ({name.lower() for name in _CALL.findall(sql)} & _UNSTEADY_FUNCTIONS)


@lru_cache(maxsize=256)
def _reads_only(sql: str) -> bool:
    """A check that starts with SELECT or VALUES (anything else might write)."""
    first = _FIRST_WORD.match(sql)
    return first is not None and first.group(1).upper() in ("SELECT", "VALUES")


def _asked(params: Mapping[str, Any] | None) -> tuple[Any, ...]:
    """A check's parameters as a key: the type too (SQLite tells 1 from 1.0 and True)."""
    return tuple((k, type(v).__name__, v) for k, v in sorted((params or {}).items()))


def _digest(columns: Sequence[str], rows: Sequence[Any]) -> str:
    """A fingerprint of a result, to tell whether two nights showed the same."""
    return hashlib.sha256(repr((tuple(columns), [tuple(r) for r in rows])).encode()).hexdigest()[:16]


def _add_to_history(folder: Path, events: Sequence[Event]) -> None:
    """Index the finished session into the history beside its folder. The transcript stands
    whatever happens here: `raceday history` indexes any session the history lacks."""
    from raceday.history.index import record_session  # sqlite-utils, needed only at the end

    try:
        record_session(folder, events)
    except Exception as exc:  # derived data: a warning, never the session's failure
        logging.getLogger(__name__).warning("raceday: history not updated: %s", exc)


def _debrief_content(ex: Exercise) -> dict[str, Any]:
    """What the debrief needs from the exercise, carried in `session_start` so that a
    transcript alone rebuilds it."""
    content = ex.debrief
    guards = ex.scoring.guards
    return {
        "night": content.night or None,
        "sources": {s.tag: s.title for s in content.sources},
        "phases": tuple(ev.PhaseInfo(id=p.id, label=p.label, team=p.team.value,
                                     milestone=p.milestone) for p in content.phases),
        "race_steps": tuple(ev.StepInfo(id=s.id, title=s.title, task=s.task, after=s.after)
                            for s in (guards.steps if guards else ())),
        "checklist_title": content.checklist_title or None,
        "checklist": tuple(ev.PracticeInfo(id=p.id, title=p.title, text=p.text, action=p.action,
                                           judge=p.judge.value, steps=p.steps,
                                           statements=p.statements, harms=p.harms,
                                           nights=p.nights)
                           for p in content.checklist),
    }


class _Missing(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _controls(sql: str) -> bool:
    """Whether an automation statement is transaction control (store.transactions)."""
    try:
        return transaction_control(sql) is not None
    except NotControl:
        return False


def _commits(sql: str) -> bool:
    """Whether an automation statement was a COMMIT (store.transactions)."""
    try:
        control = transaction_control(sql)
    except NotControl:
        return False
    return control is not None and control.word == "commit"


def _short(rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(row) for row in rows[:_ALERT_ROWS_SHOWN])
