"""What happened in a session that the score depends on, gathered as play goes."""

from __future__ import annotations

from dataclasses import dataclass, field

from raceday.exercise.model import OWN_WORDS, Exercise, RaceStep
from raceday.transcript.events import ReplayResult
from raceday.value import Value, frozen


@dataclass
class RaceStepState:
    """One race step: when its task ran (event counters), and whether the damage happened."""

    step: RaceStep
    runs: list[int] = field(default_factory=list)
    happened_at: int | None = None
    happened_seq: int | None = None

    @property
    def due(self) -> bool:
        return bool(self.runs)


HAPPENED, PREVENTED, NOT_REACHED = "happened", "prevented", "not reached"


def step_statuses(states: list[RaceStepState]) -> dict[str, str]:
    """Each step's verdict, following the race's order.

    A step that follows another (`after`) is prevented only by a run after that step
    happened; when that step was prevented, the race stopped there and this one is too.
    """
    by_id = {s.step.id: s for s in states}
    status: dict[str, str] = {}
    for state in states:
        after = state.step.after
        if state.happened_at is not None:
            status[state.step.id] = HAPPENED
        elif after is None or after not in status:
            status[state.step.id] = PREVENTED if state.runs else NOT_REACHED
        elif status[after] == HAPPENED:
            since = by_id[after].happened_seq or 0
            status[state.step.id] = PREVENTED if any(r > since for r in state.runs) else NOT_REACHED
        else:
            status[state.step.id] = status[after]
    return status


@dataclass
class Facts:
    """What the score depends on, as play goes: the fault, detection, restores, milestones,
    declarations, hints, tasks, edits, the replay."""

    fault_started: int | None = None
    fault_invariant: str | None = None
    fault_text: str | None = None
    faults_at_end: list[str] = field(default_factory=list)
    detected_at: int | None = None
    detected_by: str | None = None
    restored_at: int | None = None
    restores: list[int] = field(default_factory=list)
    relapses: list[int] = field(default_factory=list)
    healthy_at_end: bool = True
    milestones: dict[str, int] = field(default_factory=dict)
    declarations: list[tuple[int, str, bool]] = field(default_factory=list)
    hints: list[tuple[int, str]] = field(default_factory=list)
    tasks_done: dict[str, int] = field(default_factory=dict)
    # tasks whose check read as done but the final replay did not bear out: id -> why
    tasks_unproven: dict[str, str] = field(default_factory=dict)
    edits: list[tuple[int, str]] = field(default_factory=list)
    player_writes: list[tuple[int, str, tuple[str, ...]]] = field(default_factory=list)
    made_writes: dict[tuple[str, str], int] = field(default_factory=dict)
    """(trigger, table) -> the first minute a trigger the team made could write that table
    inside a statement (the automation's too); a trigger dropped later is still here."""
    good_path: list[tuple[str, str, bool, str]] = field(default_factory=list)
    failed_schema: list[tuple[int, str, str]] = field(default_factory=list)
    """The team's schema changes that failed (minute, their first words, the error): a guard
    that was never built, which the score says rather than judging as if it were."""
    nets_torn: list[tuple[str, str]] = field(default_factory=list)
    """The world's safety nets gone when the night ended: (net, where, from its first row)."""
    replay: ReplayResult | None = None
    reached_end: bool = False
    ended_at: int = 0
    night_end: int = 0
    # [start, end or None] of every stretch the world was faulty (relapses are new stretches)
    outages: list[list[int | None]] = field(default_factory=list)
    # correct findings declared with their evidence present (each once), and false alarms
    confirmed: list[tuple[int, str]] = field(default_factory=list)
    false_alarms: list[tuple[int, str]] = field(default_factory=list)
    # correct findings declared while their evidence was there, but before anything the team
    # had looked at since the fault began could show it: (minute, finding, why, in words)
    unseen: list[tuple[int, str, str]] = field(default_factory=list)
    # confirmed findings the final replay took back: every query that looked where the
    # evidence lives showed the same on the normal night (minute, finding, the last such query)
    blind: list[tuple[int, str, str]] = field(default_factory=list)
    # the first fault began with a player's own statement (role, statement), when it did
    caused_by: tuple[str, str] | None = None
    # monitor alerts while the fault was present (whatever they select), and monitors that returned
    # rows while the world was healthy (name -> first such minute): noise
    monitor_alerts: list[tuple[int, str]] = field(default_factory=list)
    noisy_monitors: dict[str, int] = field(default_factory=dict)
    # why a monitor is noise when it is not "rows while the world was healthy" (its alert on
    # the fault returned rows on the normal night too): name -> the reason in words
    noise_reasons: dict[str, str] = field(default_factory=dict)
    team_left_at: int | None = None
    # the facilitator's rulings on declarations: (the declaration's minute, its finding,
    # "right" | "partly" | "wrong", the facilitator's note); the last one on a declaration counts
    rulings: list[tuple[int, str, str, str]] = field(default_factory=list)
    # findings declared in the players' own words, to be ruled: (minute, the words); a ruling
    # names one by `own_words_key(words)` in place of a finding id
    own_words: list[tuple[int, str]] = field(default_factory=list)
    live_steps: dict[str, str] = field(default_factory=dict)
    night: str = ""
    """An unknown session's drawn night (a family night's id; empty: tonight's race as the
    file tells it), and its kind: "race", "practice" or "quiet"."""
    night_kind: str = ""
    skipped_steps: list[str] = field(default_factory=list)
    """Story tasks the facilitator let the night go on without (left due by their seat):
    a fault only they bring was not played, not kept away."""
    silent_monitors: list[str] = field(default_factory=list)
    """An unknown night's monitors the team saved that never alerted: a monitor keyed on
    one night's particulars is silent on the others, and the score says so."""

    def outage_minutes(self, until: int) -> int:
        """Minutes the world was faulty, relapses included, up to `until`."""
        return sum((end if end is not None else until) - start
                   for start, end in self.outages if start is not None)

    def race_reached(self, exercise: Exercise) -> bool:
        """Did play get far enough for "no fault" to mean something?"""
        steps = self.race_steps(exercise)
        prevented_by_replay = (self.replay is not None and bool(steps)
                               and self.replay.fault_at is None)
        reached = any(v != NOT_REACHED for v in step_statuses(steps).values())
        return self.reached_end or reached or prevented_by_replay
    _steps: list[RaceStepState] | None = None

    def race_steps(self, exercise: Exercise) -> list[RaceStepState]:
        if self._steps is None:
            guards = exercise.scoring.guards
            self._steps = [RaceStepState(s) for s in (guards.steps if guards else ())]
        return self._steps


def own_words_key(words: str) -> str:
    """How the facts and rulings name a finding declared in a player's own words."""
    return f"{OWN_WORDS}: {words}"


def ruled_finding(finding: str, text: str) -> str:
    """The finding a ruling names: the exercise's id, or the key of the player's own words."""
    return own_words_key(text) if finding == OWN_WORDS else finding


@frozen
class Look(Value):
    """One read of the world by a player in a role that is not automated (a responder),
    with a fingerprint of what it showed."""

    n: int  # its place among the team's looks
    since: int  # the event count when it ran
    minute: int
    role: str
    sql: str
    tables: frozenset[str]
    digest: str
    monitor: str | None = None  # the monitor whose run it was, if one
    blind: str = ""  # why it cannot show the fault whatever the world holds ("" when it may)

    @property
    def name(self) -> str:
        return f"look {self.n}"
