"""The session's state and its plumbing: the agenda, the clock's face, events out, the
cap on actions. Its parts (checks, evidence, monitors, automation) build on it, one
module each; `Session` is all of them together."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from raceday.engine.clock import Pace, clock_time
from raceday.engine.statement_text import param_names
from raceday.engine.unknown_night import DrawnNight, live_exercise
from raceday.exercise.model import Exercise, Inject, ShiftSpec, Task
from raceday.judge.facts import Facts, Look, RaceStepState
from raceday.judge.harms import HarmClock, History
from raceday.judge.score import Score
from raceday.judge.variant import draw, session_seed
from raceday.store.protocol import Store
from raceday.store.results import Answer, StatementResult
from raceday.transcript import events as ev
from raceday.transcript.events import Event
from raceday.transcript.log import EventLog
from raceday.value import Value, frozen

Listener = Callable[[Event], None]
E = TypeVar("E", bound=Event)

# The invariant id a broken truth is reported under (the world counts as faulty).
BROKEN_WORLD = "world-broken"
MAX_ACTIONS_PER_MINUTE = 100
"""Player and facilitator actions (submissions, monitors, declarations, edits, hints, notes,
injects) one simulated minute takes; past it an action is refused until the clock moves on.
A team acts a few times a minute; a script or a stuck key must not flood the transcript."""
MAX_MONITORS = 50
"""Saved monitors at once: each runs every simulated minute."""


class SessionError(Exception):
    """An action the session cannot take (unknown role, unknown monitor…): one clear line."""


@frozen
class Monitor(Value):
    """A player's saved query: it alerts when it returns rows."""

    name: str
    role: str
    sql: str
    saved_at: int


HANDED = "routine tasks to the automation"
"""A hand-over's `detail` (resume reads it back: the other is "back to the player")."""


@frozen
class PendingTask(Value):
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


DUE_INJECT, DUE_TASK = 0, 1


class SessionCore:
    """What every part of a session shares: its state, its events, its agenda."""

    origin = ""  # "script": a headless run (open_session sets it before `start`)

    def __init__(
        self,
        exercise: Exercise,
        store: Store,
        log: EventLog,
        players: Sequence[str],
        pace: Pace = Pace.TURNS,
        night: DrawnNight | None = None,
    ) -> None:
        unknown = [r for r in players if r not in exercise.role_ids]
        if unknown:
            raise SessionError(
                f"unknown role {unknown[0]!r}; roles are {', '.join(exercise.role_ids)}"
            )
        self.exercise = exercise
        self.night = night
        """The drawn night of an unknown session (None: tonight's race, as the file tells it)."""
        self.live = live_exercise(exercise, night) if night is not None else exercise
        """What the clock plays: the drawn night's tasks; the exercise itself otherwise."""
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
        self.history_statements = frozenset(s.id for s in exercise.statements if s.history)
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
        self.unattended: dict[str, int] = {}
        """role -> the grace in minutes after which the automation does a due story task of
        a seat nobody is at (a host sets it: seats never taken, a headless host's seats)."""
        self.handed: set[str] = set()
        """Roles a player holds whose routine (repeating) tasks the facilitator handed to the
        automation; their one-off (story) tasks stay the player's."""
        self._violated: set[str] = set()
        self._ever_violated: set[str] = set()
        self._faults: dict[str, str] = {}  # what each violated invariant was reported as
        self._alerting: set[str] = set()
        self._counter = 0
        self._broken_checks: set[str] = set()
        self._forged_at: int | None = None  # first write of a table only the service restores
        self._trusted_sql: dict[str, str] = {}  # a check's SQL -> as run, its kept tables given
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
        # tables each automated role wrote in its open transaction, and those the last
        # statement committed (they show, with the fault they may bring, only at its COMMIT)
        self._open_writes: dict[str, set[str]] = {}
        self._committed_writes: set[str] = set()
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
        self._table_writes: dict[str, int] = {}  # table (lower case) -> statements that wrote it
        self._unnamed_writes = 0  # changes not named by table: every kept answer is stale
        # monitor -> ((role, sql), _world_key of its reads, its last answer)
        self._monitor_kept: dict[str, tuple[tuple[str, str], tuple[int, ...], StatementResult]] = {}
        # a trusted query's SQL -> (its parameters, _world_key of its reads, its answer)
        self._check_kept: dict[str, tuple[tuple[Any, ...], tuple[int, ...], tuple[str, ...],
                                          list[Any]]] = {}
        # a check's SQL -> its answer (or error), asked with the rest of its round at once
        self._asked_ahead: dict[str, Answer] = {}
        # an exercise check's SQL -> ((schema epoch, commits) when asked, the tables it reads)
        self._check_reads: dict[str, tuple[tuple[int, int, int], tuple[str, ...] | None]] = {}
        self._commits = 0  # held transactions committed: their writes show only now
        self._flood_noted = -1  # the minute a refusal for too many actions was recorded
        self._txn_lost: dict[str, int] = {}
        """role -> minute its held transaction was rolled back (an error, a failed BEGIN or
        COMMIT): the role's next task that does not begin one is skipped, not run outside it."""
        self._build_agenda()

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

    def _build_agenda(self) -> None:
        for inject in self.exercise.injects:
            if inject.at is not None:
                if self.night is not None and inject.at > 0:
                    continue  # a timed inject tells tonight's story: on an unknown night the
                    # world tells it, by the injects its harms bring
                self._schedule(inject.at, DUE_INJECT, inject)
            else:  # it follows the world: scheduled when its fault first begins
                self._on_fault.setdefault(inject.on_fault, []).append(inject)
        normal_only = set(self.live.replay.normal) if self.live.replay else set()
        for task in self.live.tasks:
            if task.id in normal_only:
                continue
            for minute in task.times():
                self._schedule(minute, DUE_TASK, task)

    def _schedule(self, minute: int, phase: int, item: Any, attempt: int = 0) -> None:
        self._counter += 1
        heapq.heappush(self._agenda, _Due(minute, phase, self._counter, attempt, item))

    def _send(self, inject: Inject) -> None:
        self.injects_heard += 1
        self._emit(ev.Inject(
            id=inject.id,
            inject_kind=inject.kind.value,
            title=inject.title,
            text=inject.text,
            to=tuple(inject.to),
            source=inject.source,
            expect=inject.expect,
            objective=inject.objective,
        ))

    def _fault_began(self, invariant: str) -> None:
        """The injects an invariant's fault brings, each once a session: now, or as long
        after as it says, if this spell of the fault lasts that long (an alarm reports the
        world as it is: one whose fault has cleared by its time waits for the next spell).
        One with `within` counts every spell in that window, so a flapping fault brings it."""
        onset = self._onsets[invariant] = self._onsets.get(invariant, 0) + 1
        for inject in list(self._on_fault.get(invariant, [])):
            self._fault_inject_due(inject, onset)

    def _fault_inject_due(self, inject: Inject, onset: int) -> None:
        """Send `inject` if its fault has held long enough, or look again at the earliest
        minute it can have (this spell, `onset`, rides in the agenda's `attempt`)."""
        short = inject.after - self._held(inject)
        if short > 0:
            self._schedule(self.minute + short, DUE_INJECT, inject, onset)
            return
        self._on_fault[inject.on_fault].remove(inject)
        self._send(inject)

    def _held(self, inject: Inject) -> int:
        """Minutes its fault has held: in this spell, or with `within` in all its spells of
        that window (a fault that flaps brings it too)."""
        if inject.within:
            return self.harm_clock.held(inject.on_fault, self.minute - inject.within,
                                        self.minute)
        runs = self.harm_clock.stretches.get(inject.on_fault)
        began = runs[-1][0] if runs else None
        return self.minute - began if began is not None else 0

    def _still(self, inject: Inject, onset: int) -> bool:
        """Is the spell of the fault that scheduled `inject` still on, and the inject unsent?"""
        fault = inject.on_fault
        return (fault in self._violated and self._onsets.get(fault) == onset
                and inject in self._on_fault.get(fault, ()))

    def _require_player(self, role: str) -> None:
        if role not in self.exercise.role_ids:
            raise SessionError(
                f"unknown role {role!r}; roles are {', '.join(self.exercise.role_ids)}"
            )
        if role not in self.players:
            raise SessionError(f"role {role!r} is played by the automation, not by a player")

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

    @property
    def healthy(self) -> bool:
        return not self._violated

    def _detect(self, how: str) -> None:
        facts = self.facts
        if facts.fault_started is None or facts.detected_at is not None:
            return
        facts.detected_at = self.minute
        facts.detected_by = how
        self._emit(ev.Detected(how=how, latency_minutes=self.minute - facts.fault_started))

    def _params(self, role: str, sql: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        values: dict[str, Any] = {"now": self.minute, "now_hhmm": self.clock_face}
        values.update(self.memory.get(role, {}))
        if extra:
            values.update(extra)
        return {name: values.get(name) for name in param_names(sql)}

    def _steps_of(self, task: Task) -> list[RaceStepState]:
        if self._steps_by_task is None:
            self._steps_by_task = {}
            for state in self.facts.race_steps(self.exercise):
                self._steps_by_task.setdefault(state.step.task, []).append(state)
        return self._steps_by_task.get(task.id, [])
