"""The score's verdicts, as scoring decides them: typed, frozen, decided once.

`judge.score` builds a `Score` from the session's facts; the score event carries it
(`events.ScoreEvent.score`), and `events` alone turns it into the JSON of the score line and
back. The end screen, `print_score`, the debrief and `review` read these attributes; none of
them re-decides a verdict or reads a reason string for one. The field names and their order
are the JSON's (the `raceday run --json` contract): a section's `points` and `max` first, its
`reasons` last.

Lines written before a field existed read with its default (None, empty, or "" for "not
recorded"); `events.score_from_json` fills what an old line implies (race steps from its
`prevented` and `happened` lists, the fault's outcome).
"""

from __future__ import annotations

from raceday.value import Value, frozen

# A race step's verdict (the replay's, or tonight's for an exercise with no replay)
HAPPENED, PREVENTED, NOT_REACHED = "happened", "prevented", "not reached"

# What became of the fault (`Fault.outcome`)
OCCURRED = "occurred"  # the fault happened tonight
PREVENTED_OUTRIGHT = "prevented"  # no fault, and the replay shows the database stops it
NOT_NEEDED = "not needed"  # no fault and nothing to ask (no replay): full marks, not needed
HELD_OFF = "held off"  # no fault tonight, but the replay shows it: players' hands, not a guard
BLOCKED_GOOD_WRITES = "blocked good writes"  # no fault only because good writes were refused
BEFORE_THE_RACE = "before the race"  # the session ended before the race could happen
QUIET_NIGHT = "quiet night"  # an unknown session drew the night with nothing wrong
NOT_PLAYED = "not played"  # the facilitator let the night go on without its fault step
NO_FAULT_OUTCOMES = (PREVENTED_OUTRIGHT, NOT_NEEDED, HELD_OFF, BLOCKED_GOOD_WRITES,
                     BEFORE_THE_RACE, QUIET_NIGHT, NOT_PLAYED)

# How the guards were judged (`Guards.judged_by`)
BY_REPLAY, BY_LIVE, BY_NONE = "replay", "live", "none"


@frozen(kw_only=True)
class Fault(Value):
    """What became of the fault: whether it occurred, when and which, and its `outcome`."""

    occurred: bool = False
    started_at: str | None = None
    invariant: str | None = None
    what: str | None = None
    present_at_end: tuple[str, ...] = ()
    outcome: str = ""  # one of the outcomes above ("" in lines written before it)

    @property
    def prevented_outright(self) -> bool:
        return self.outcome == PREVENTED_OUTRIGHT

    @property
    def not_needed(self) -> bool:
        """No fault, and detection and recovery scored full marks as not needed."""
        return self.outcome in (PREVENTED_OUTRIGHT, NOT_NEEDED, QUIET_NIGHT, NOT_PLAYED)


@frozen(kw_only=True)
class FalseAlarm(Value):
    """A correct finding declared when its evidence was not there."""

    finding: str
    at: str


@frozen(kw_only=True)
class Detection(Value):
    """Time to alert and time to diagnosis, each from the fault's start; `latency_minutes` is
    the earlier of the two (what the points are on)."""

    points: int
    max: int
    latency_minutes: int | None = None
    detected_at: str | None = None
    by: str | None = None
    event_minutes: int | None = None  # that night's figure
    alert_minutes: int | None = None
    alerted_at: str | None = None
    alert_by: str | None = None  # the monitor's name
    diagnosis_minutes: int | None = None
    diagnosed_at: str | None = None
    diagnosis: str | None = None  # the finding's id
    false_alarms: tuple[FalseAlarm, ...] = ()
    noise: tuple[str, ...] = ()  # monitors that returned rows while the world was healthy
    reasons: tuple[str, ...] = ()


@frozen(kw_only=True)
class StepVerdict(Value):
    """A race step: the score's verdict (`status`, with its `detail`, the replay's when one
    was run) and what it did tonight (`live`, at `live_at`)."""

    id: str
    title: str = ""
    points: int = 0
    status: str = ""  # happened | prevented | not reached
    detail: str = ""
    live: str = ""  # happened | prevented | not reached ("" before it was recorded)
    live_at: str | None = None


@frozen(kw_only=True)
class GoodPath(Value):
    """A write the guards must still allow, probed at the end, and whether they did."""

    id: str
    title: str = ""
    ok: bool = True
    why: str = ""


@frozen(kw_only=True)
class BlockedWrite(Value):
    """A write of the normal night that the original world took and the team's refused."""

    task: str
    at: str
    outcome: str
    lost: tuple[str, ...] = ()
    """The run's statements that changed rows on the original world and not on the team's:
    the good writes refused (a statement the team edited among them is that edit's doing)."""


@frozen(kw_only=True)
class HarmNight(Value):
    """One harm in one replayed night: the minutes it was present with the team's world and
    edits (`minutes`), and in the same night on the exercise's own world (`baseline`)."""

    harm: str
    night: str = ""  # which night, in words ("tonight's race", "a variant night")
    minutes: int = 0
    baseline: int = 0
    first_at: str | None = None  # when it began with the team's world
    practice: str = ""  # a practice night's id; empty on the race nights


@frozen(kw_only=True)
class HarmVerdict(Value):
    """What keeping one harm away earned: on the night where the team's world did worst."""

    id: str
    title: str = ""
    points: int = 0
    max: int = 0
    grade: str = "minutes"  # minutes | any
    minutes: int = 0
    baseline: int = 0
    night: str = ""
    first_at: str | None = None
    practice: str = ""  # judged on this practice night alone; empty: on the race nights

    @property
    def key(self) -> str:
        """Unique among a score's verdicts: a harm may be judged on a practice night too."""
        return f"{self.practice}:{self.id}" if self.practice else self.id


@frozen(kw_only=True)
class Guards(Value):
    """The guard points: harm by harm, race step by race step, and the good writes refused."""

    points: int
    max: int
    harms: tuple[HarmVerdict, ...] = ()  # what the guards earned, harm by harm
    collateral: int = 0  # points the refused good writes cost
    prevented: tuple[str, ...] = ()  # the steps credited as prevented
    happened: tuple[str, ...] = ()
    steps: tuple[StepVerdict, ...] = ()
    good_path: tuple[GoodPath, ...] = ()
    judged_by: str = ""  # replay | live | none
    blocked_good_writes: tuple[BlockedWrite, ...] = ()
    reasons: tuple[str, ...] = ()

    def step(self, step_id: str) -> StepVerdict | None:
        return next((s for s in self.steps if s.id == step_id), None)


@frozen(kw_only=True)
class RecoveryCredit(Value):
    """One recovery criterion as the judge weighed it: the debrief's checklist reads these,
    so that it credits exactly what the score credited."""

    id: str
    title: str
    points: int
    max: int
    milestone: str | None = None  # the milestone the criterion rests on, if any
    at: str | None = None  # when that milestone was reached


@frozen(kw_only=True)
class Recovery(Value):
    """Minutes of outage over the night (relapses included) and whether the repair held."""

    points: int
    max: int
    restored: bool = False  # healthy at the end
    restored_at: str | None = None  # the restore that held
    first_restored_at: str | None = None
    minutes_to_restore: int | None = None
    outage_minutes: int | None = None
    relapses: tuple[str, ...] = ()  # when the fault came back after a restore
    event_minutes: int | None = None  # that night's figure
    items: tuple[RecoveryCredit, ...] = ()
    reasons: tuple[str, ...] = ()


@frozen(kw_only=True)
class Tasks(Value):
    """The points of the players' tasks done (`done`)."""

    points: int
    max: int
    done: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


@frozen(kw_only=True)
class Hints(Value):
    """The hints revealed and what they cost."""

    revealed: tuple[str, ...] = ()
    cost: int = 0


Section = Detection | Guards | Recovery | Tasks


@frozen(kw_only=True)
class Score(Value):
    """The whole score; a part the exercise does not score is None."""

    total: int
    max: int
    fault: Fault = Fault()
    detection: Detection | None = None
    guards: Guards | None = None
    recovery: Recovery | None = None
    tasks: Tasks | None = None
    hints: Hints = Hints()
    reasons: tuple[str, ...] = ()

    @property
    def parts(self) -> tuple[tuple[str, Section], ...]:
        """(name, section) for each part the exercise scores, in the score's order."""
        named = (("detection", self.detection), ("guards", self.guards),
                 ("recovery", self.recovery), ("tasks", self.tasks))
        return tuple((name, part) for name, part in named if part is not None)

    @property
    def steps(self) -> tuple[StepVerdict, ...]:
        return self.guards.steps if self.guards else ()
