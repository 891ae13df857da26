"""The exercise model: what an exercise file says, as frozen values.

An exercise is data. Everything the engine does comes from these values; nothing here
talks to a database or a screen.
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from raceday.exercise.customers import CustomerTable
from raceday.value import Value, frozen


class Policy(StrEnum):
    """What automation does when its write changes 0 rows or fails."""

    IGNORE = "ignore"
    RETRY = "retry"
    STOP = "stop"


class InjectKind(StrEnum):
    """How an inject is shown: alarms stand out, the rest read as news."""

    ALARM = "alarm"
    MESSAGE = "message"
    STATUS = "status"
    REVEAL = "reveal"


@frozen
class Clock(Value):
    """The exercise's simulated clock: where the night starts and how time is spent."""

    start: datetime
    end: datetime
    zone: str
    minutes_per_statement: int = 1
    minutes_per_look: int | None = None
    """Turns pace: what a submission that only read costs (None: as any statement). The
    onboarding's are free, so a newcomer's looks never cost the score."""

    @cached_property  # asked for by every minute of a night (3,000 times a session)
    def length_minutes(self) -> int:
        return int((self.end - self.start) / timedelta(minutes=1))


@frozen
class Role(Value):
    """A seat at the table: what it may read and write, and whether it may change the schema."""

    id: str
    name: str
    briefing: str = ""
    read: tuple[str, ...] = ("*",)
    write: tuple[str, ...] = ()
    break_glass: tuple[str, ...] = ()
    schema: bool = False
    automated: bool = False
    example: str = ""

    def may_read(self, table: str) -> bool:
        return "*" in self.read or table in self.read or self.may_write(table)

    def may_write(self, table: str) -> bool:
        return "*" in self.write or table in self.write or table in self.break_glass


@frozen
class Statement(Value):
    """A named piece of automation SQL; players may replace it with an `edit`."""

    id: str
    role: str
    sql: str
    description: str = ""
    line: int = 0
    history: bool = False
    """What the night left behind (an outage's aftermath), not automation a team runs: no
    edit may change it, or a team could undo the night instead of recovering from it."""


@frozen
class Retry(Value):
    """When a write does not take, try again every `every` minutes until `until` (minutes)."""

    every: int
    until: int | None = None
    limit: int | None = None


@frozen
class Task(Value):
    """A role's action, due at a time.

    When no player holds the role, the automation runs `statements` in order through the
    same store path as players. `remember` keeps columns of the first row a statement
    returns as named values for later statements (`:plan`): that is how an Enactor applies,
    much later, the plan it checked at the start. `when` is the kill switch: the task runs
    only while that query returns a row. When a player holds the role the task is shown to
    them instead, and `done_when` tells when they have done it.
    """

    id: str
    role: str
    at: int
    title: str
    statements: tuple[str, ...] = ()
    every: int | None = None
    until: int | None = None
    when: str | None = None
    skipped: str = ""
    """What a run `when` skipped is recorded with; empty: "the automation is switched off"."""
    remember: tuple[str, ...] = ()
    on_zero_rows: Policy = Policy.IGNORE
    on_error: Policy = Policy.IGNORE
    retry: Retry | None = None
    done_when: str | None = None
    context: str = ""
    hint: str = ""
    proves: tuple[str, ...] = ()
    """Race steps the task's guard must stop: its points count only when the final replay
    shows them prevented and no good write of the normal night refused (a no-op edit, or a
    job that merely did nothing, proves nothing)."""
    keeps: tuple[str, ...] = ()
    """Harms (invariants) the task's guard must keep from the customers in the final replay's
    race nights: the customers' view, which no edited statement can pad."""
    points: int = 0
    line: int = 0
    changes: tuple[PracticeChange, ...] = ()
    """Set only on a practice night's copy of the exercise: what goes wrong in which run."""

    def change_at(self, minute: int) -> PracticeChange | None:
        return next((c for c in self.changes if c.at == minute), None)

    def times(self) -> list[int]:
        """Every minute this task falls due (once, or every N minutes until T)."""
        if self.every is None:
            return [self.at]
        end = self.until if self.until is not None else self.at
        return list(range(self.at, end + 1, self.every))


@frozen
class Inject(Value):
    """Something the players see: an alarm, a message, a status post, a reveal.

    It arrives at a time (`at`, minutes since the clock's start) or follows the world
    (`on_fault`: an invariant's id; it arrives once, `after` minutes into the first spell of
    that invariant's fault that lasts so long, and never if the fault never begins). Exactly
    one of the two is set. With `within` (minutes, at least `after`), the fault need not hold
    in one spell: the inject arrives once it has held `after` minutes in all within the last
    `within`, so a fault that flaps still brings it.

    A reveal may say which moment of the real night it is (`phase`: first-symptom, detection,
    automation-stopped, repair, restore) and, when it tells of a time other than its own,
    when that was (`event_at`, "HH:MM" that night), so the debrief can set the team beside it.
    """

    id: str
    at: int | None
    title: str
    text: str = ""
    kind: InjectKind = InjectKind.MESSAGE
    to: tuple[str, ...] = ()
    source: str = ""
    phase: str = ""
    event_at: str = ""
    line: int = 0
    on_fault: str = ""
    after: int = 0
    within: int = 0
    expect: tuple[str, ...] = ()
    """What the team is expected to do or say about it ("names the lock"), each a short line
    the facilitator marks met, partly or not met (live or in the hot wash): the marks fill
    the AAR's inject responses and the rating of `objective`, never the score."""
    objective: str = ""
    """The objective (a part of the score: detection, guards, recovery, tasks) whose AAR
    rating the marks of `expect` inform; empty: the inject's row only."""

    @property
    def timed(self) -> bool:
        """It arrives at a fixed time, whatever the world does."""
        return self.at is not None


@frozen
class Invariant(Value):
    """A query that must return no rows; rows mean the named fault is present.

    `went_back` instead names a harm that needs history: a query giving (key, value) rows,
    and the fault is present while any key's value is below the highest it has had this
    night. raceday keeps that history itself, where no role can read or write it.
    `outage` False: a harm the guards are judged on that is not the customers' outage (no
    fault event, no detection or recovery rests on it)."""

    id: str
    fault: str
    sql: str
    line: int = 0
    went_back: str = ""
    outage: bool = True


@frozen
class Milestone(Value):
    """A condition the engine watches; the first time its query returns rows is recorded.

    `again`: only once the fault has begun, and only after the query has returned no rows
    since then (the customers' view coming back, whoever wrote the row)."""

    id: str
    label: str
    sql: str
    line: int = 0
    again: bool = False


OWN_WORDS = "own-words"
"""The finding id of a declaration in the player's own words (no exercise may use it): the
judge cannot check such a finding, so it counts only as the facilitator rules it."""
MAX_OWN_WORDS = 200
"""The longest finding in a player's own words, in characters (one line)."""


@frozen
class Finding(Value):
    """Something a responder may declare; right ones score, wrong ones cost."""

    id: str
    text: str
    correct: bool
    explanation: str = ""
    evidence: str | None = None
    """What must be present in the world when the finding is declared for it to count: an
    invariant id (violated at that moment) or a race step id (happened by then). A correct
    finding declared without its evidence is a false alarm."""
    line: int = 0


@frozen
class Hint(Value):
    """A hint a facilitator can reveal; revealing it costs points.

    `play` is a play script (a path inside the exercise's folder) doing what the hint teaches;
    `raceday check` plays it and refuses the exercise when it earns no more `earns` points
    than doing nothing: a hint that teaches a guard keyed on tonight's numbers shows it."""

    id: str
    text: str
    task: str | None = None
    cost: int = 0
    play: str | None = None
    earns: str = "guards"
    line: int = 0


@frozen
class RaceStep(Value):
    """One named step of the race: a task whose run may or may not do its damage.

    `happened` is a query run right after the task's run; rows mean the step happened.
    `after` names the step this one follows in the race: it can only be prevented by a run
    after that step happened, and is prevented with it when that step was prevented.
    """

    id: str
    task: str
    happened: str
    title: str = ""
    points: int = 0
    after: str | None = None
    line: int = 0


@frozen
class GoodPath(Value):
    """A write the guards must still allow: run and rolled back, it must change rows."""

    id: str
    title: str
    sql: tuple[str, ...]
    role: str
    penalty: int


@frozen
class DetectionRubric(Value):
    """How detection scores: full `points` within `full_within` minutes of the fault
    (`invariant`), none after `zero_after`, linear in between."""

    points: int
    invariant: str
    full_within: int
    zero_after: int
    match: str = ""
    wrong_finding_cost: int = 0
    event_minutes: int | None = None


@frozen
class HarmWorth(Value):
    """What keeping one harm away is worth in the replayed races.

    `grade` "minutes": the share of the harm's minutes avoided, against the same race on the
    exercise's own world; "any": all or nothing, earned only when the harm never occurs."""

    invariant: str
    points: int
    grade: str = "minutes"
    night: str = ""
    """A practice night's id: the harm is judged on that night alone. Empty: on the race
    nights (tonight's and the variant)."""
    line: int = 0


HARM_GRADES = ("minutes", "any")


@frozen
class GuardsRubric(Value):
    """Guards are judged by the harm they keep away (`harms`) when the exercise lists its
    harms; else by the race steps they prevent (`steps`, the older rubric). Each good write
    of the normal night a guard refuses costs `collateral`; refusing more than the guards
    could earn is an outage of its own."""

    points: int
    steps: tuple[RaceStep, ...] = ()
    good_path: tuple[GoodPath, ...] = ()
    harms: tuple[HarmWorth, ...] = ()
    collateral: int = 5


@frozen
class RecoveryItem(Value):
    """A recovery criterion: a milestone reached, optionally before another; with
    `no_relapse`, the repair held (and the milestone, if one is named, was reached)."""

    id: str
    title: str
    points: int
    milestone: str | None = None
    before: str | None = None
    healthy_at_end: bool = False
    no_relapse: bool = False
    outage: bool = False
    """Scored on a curve over the minutes the world was faulty (relapses included): full
    within `full_within`, a third at the rubric's `event_minutes`, none when the fault
    lasted the whole night."""
    full_within: int = 0


@frozen
class SafetyNet(Value):
    """One of the world's own safety nets (a one-flip rollback, the plan history): a repair
    that tears it down has collateral of its own, checked as the night ends."""

    id: str
    title: str
    broken: str
    """A check of raceday's: rows mean the net is gone (the first row says where)."""
    penalty: int


@frozen
class RecoveryRubric(Value):
    """How recovery scores: its items' points added up, less a torn safety net's penalty."""

    points: int
    items: tuple[RecoveryItem, ...] = ()
    event_minutes: int | None = None
    forged: tuple[str, ...] = ()
    """Tables only the service itself may bring back (DWFM's leases): a player's write to one
    forges the state the recovery measures, so nothing it shows after that write counts."""
    safety_nets: tuple[SafetyNet, ...] = ()


@frozen
class ShiftSpec(Value):
    """A second race on other numbers: the same night with its clock moved, some tasks
    later (the delay differs) and the seed renumbered by trusted SQL, so a guard or monitor
    keyed on tonight's particular plan numbers or times is seen for what it is."""

    clock: int = 0
    """Minutes the shifted night's clock is moved (negative: earlier)."""
    later: tuple[tuple[str, int], ...] = ()
    """Tasks that fall due this many minutes later in the shifted night."""
    seed: str = ""
    """Trusted SQL run on the seed world (foreign keys off) before the team's schema; its
    `:offset` is the renumbering drawn for the session."""
    clock_range: tuple[int, int] | None = None
    """When given, the clock's move is drawn from this range for each session."""
    later_range: tuple[tuple[str, int, int, int], ...] = ()
    """Tasks whose lateness is drawn for each session: (task, least, most, step) minutes.
    Tasks given the same range move together (one worker's delay, drawn once)."""
    renumber: tuple[int, int] | None = None
    """The range `:offset` is drawn from for each session (the seed's renumbering)."""
    swap: tuple[tuple[str, ...], ...] = ()
    """Groups of names the automation's SQL writes as text literals ('enactor-a', an
    endpoint's name): the first of each group trades places with another drawn for each
    session, in every statement of the night (the team's edits included), so the slow worker
    or the endpoint it is slow on is another one, and a guard keyed on a name is seen."""
    swapped: tuple[tuple[str, str], ...] = ()
    """The drawn trades (the first of a group, the one it trades with)."""
    count_from: int = 0
    """The minute the shifted night's minutes are counted from: every `:now` of its
    statements and checks reads this many more (the seed's `:count_from` moves the world's
    own minutes with it), so a guard keyed on tonight's minute numbers (work queued before
    minute 125) is seen. 0: counted from 0, as tonight."""
    count_from_range: tuple[int, int] | None = None
    """When given, `count_from` is drawn from this range for each session."""

    @property
    def drawn(self) -> bool:
        return (self.clock_range is not None or bool(self.later_range)
                or self.renumber is not None or bool(self.swap)
                or self.count_from_range is not None)


@frozen
class PracticeChange(Value):
    """What goes wrong in one run of a task on a practice night.

    `bind` gives the run's statements other values than the role remembered (a clean-up told
    to keep nothing); `skip` names statements the run leaves out (a plan written without its
    records). The statements themselves stay the team's, edits included: the night tests the
    guards the team wrote, not a script of the exercise's."""

    task: str
    at: int
    bind: tuple[tuple[str, int | float | str], ...] = ()
    bind_sql: tuple[tuple[str, str], ...] = ()
    """Values read from the world as the run starts (trusted SQL, first column of the first
    row): "the next plan, not written yet" is no number a guard can be keyed on."""
    skip: tuple[str, ...] = ()
    then: tuple[str, ...] = ()
    """Statements the run carries on with after its own, whatever they changed: a worker
    that goes on to its next endpoint after a write that lost. A task the normal night does
    not run (the delayed worker's) runs once, at `at`, when a change names it."""
    line: int = 0


@frozen
class PracticeNight(Value):
    """A night of the final replay that tests one practice: the normal night (no delayed
    worker) with `changes`, played on the team's world and on the exercise's own."""

    id: str
    title: str
    changes: tuple[PracticeChange, ...] = ()
    line: int = 0


RACE_NIGHT, QUIET_NIGHT = "race", "quiet"
"""The two nights of a family every exercise with a replay has: tonight's race, and the
normal night with nothing wrong (`FamilyNight.night`; any other id is a practice night's)."""


@frozen
class FamilyNight(Value):
    """One night an unknown session may draw (`raceday play --unknown`), and how often.

    `later` is (least, most, step) minutes the night's fault moves later, drawn with it: the
    delayed worker's tasks on the race, every change's run on a practice night. A quiet night
    has no fault to move."""

    night: str
    weight: int = 1
    later: tuple[int, int, int] | None = None
    line: int = 0


@frozen
class NightsSpec(Value):
    """The family of nights an unknown session is drawn from, and what its briefing says in
    place of the exercise's situation (that something may go wrong tonight, not what)."""

    family: tuple[FamilyNight, ...]
    situation: str = ""

    def night(self, night_id: str) -> FamilyNight | None:
        return next((n for n in self.family if n.night == night_id), None)


PRACTICE_BASELINES = ("per-variant", "once")
"""What `replay: practice_baselines` may say (`ReplaySpec.practice_baselines`)."""


@frozen
class ReplaySpec(Value):
    """How the race is replayed against the team's database.

    `until` is how far the timeline is replayed (default: the clock's end). `delayed` names
    the tasks of the delayed worker: the normal path is the same night without them.
    """

    until: int | None = None
    delayed: tuple[str, ...] = ()
    normal: tuple[str, ...] = ()
    """Tasks of the normal night only (the delayed worker doing its job on time, a planned
    rollback): they never run on the night itself or in the race replay."""
    shifted: ShiftSpec | None = None
    """A second race (and normal night) on other numbers: a step counts as prevented only
    when it is prevented in both races, and a good write must take on both normal nights."""
    practice: tuple[PracticeNight, ...] = ()
    """Nights that put one practice to the test: the normal night with one thing gone wrong
    in it (`PracticeNight.changes`), judged by the harms the rubric lists for that night."""
    practice_baselines: str = "per-variant"
    """"once": the author says each practice night's baseline (the exercise's own statements,
    no guard) gives the same harms on every variant, so it is played once, on the unshifted
    night, and kept from one session to the next; `raceday check` plays it on drawn variants
    to hold the author to it. "per-variant": played on each session's variant."""

    nights: NightsSpec | None = None
    """The family an unknown session draws its live night from (`replay: nights`)."""

    def practice_night(self, night_id: str) -> PracticeNight | None:
        return next((n for n in self.practice if n.id == night_id), None)


@frozen
class PanelItem(Value):
    """One query the world panel shows, as the exercise words it.

    `show` says how its rows read: `switches` (name, on/off), `answers` (a name, then the
    values it answers with; a name with none is an alarm), `rows` (a small table).
    `onboarding` items show only in onboarding: a diagnosis that night's dashboards did not
    give is found by query, not handed out.
    `count` (answers only) counts a world too large to read whole: one row, how many names
    and how many of them answer nothing, so the panel's cost never grows with the world.
    """

    id: str
    label: str
    sql: str
    show: str = "rows"
    onboarding: bool = False
    count: str = ""


PANEL_SHOWS = ("rows", "switches", "answers", "chart")
"""`chart`: the first column is the minute (since the start), every other column a series drawn
over simulated time, with that night's moments (the reveals) marked."""


@frozen
class TruthView(Value):
    """A view whose rows must stay those of the trusted `sql` (over base tables)."""

    name: str
    sql: str


@frozen
class Truth(Value):
    """The base objects an exercise's checks rest on.

    Each table must stay a table with (at least) its original columns; each view must give
    the rows of its trusted definition. If the team drops, renames, replaces or slows one so
    that a check cannot run, the world counts as broken, with a reason naming the object.
    """

    tables: tuple[str, ...] = ()
    views: tuple[TruthView, ...] = ()


@frozen
class Scoring(Value):
    """The exercise's rubrics; a part it does not score is None (tasks: 0)."""

    detection: DetectionRubric | None = None
    guards: GuardsRubric | None = None
    recovery: RecoveryRubric | None = None
    tasks: int = 0


class PhaseTeam(StrEnum):
    """Which of the team's events answers a phase of the night."""

    FAULT = "fault"
    DETECTED = "detected"
    STOPPED = "stopped"
    REPAIRED = "repaired"
    RESTORED = "restored"


class Judge(StrEnum):
    """How the debrief looks for a checklist practice in what the team did."""

    GUARDS = "guards"
    ROW_COUNTS = "row-counts"
    RECOVERY = "recovery"
    REMOVAL_LIMITS = "removal-limits"


@frozen
class Source(Value):
    """A source tag the exercise's facts cite, and what it stands for."""

    tag: str
    title: str


@frozen
class Phase(Value):
    """A moment of the real night the debrief sets the team's beside (a row of its timeline).

    `team` says which of the team's events answers it; for stopped and repaired, `milestone`
    names the exercise's milestone (without one, the debrief looks for the team's evidence:
    the automation skipping its run, the first hand change after the fault)."""

    id: str
    label: str
    team: PhaseTeam
    milestone: str | None = None


@frozen
class Practice(Value):
    """One practice of a checklist the debrief holds the session against.

    `steps` are the race steps that test it and `statements` the automation statements whose
    edit is the practice; `judge` says where else to look (row counts, the recovery, what the
    automation removed). `action` is the corrective action when it was not seen done."""

    id: str
    title: str
    text: str
    action: str = ""
    judge: Judge = Judge.GUARDS
    steps: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()
    harms: tuple[str, ...] = ()
    """The harms (invariants) whose guard verdicts are this practice's evidence: it is done
    exactly when the guards earned points for keeping one of them away."""
    nights: tuple[str, ...] = ()
    """Practice nights whose guard verdicts are this practice's evidence, as `harms` are for
    the race nights."""
    elsewhere: str = ""
    """The exercise that tests this practice, when this one cannot: the debrief lists it
    (the article's checklist stays whole) and points there, never reads done or not done."""


@frozen
class DebriefContent(Value):
    """The exercise's own words for the debrief: the real event it compares with (`night`,
    empty for none), its sources, the phases of that night and the checklist."""

    night: str = ""
    sources: tuple[Source, ...] = ()
    phases: tuple[Phase, ...] = ()
    checklist_title: str = ""
    checklist: tuple[Practice, ...] = ()

    def source(self, tag: str) -> Source | None:
        return next((s for s in self.sources if s.tag == tag), None)


@frozen
class Exercise(Value):
    """A whole exercise, as loaded from `exercises/<id>/exercise.yaml`."""

    id: str
    title: str
    summary: str
    length: int
    level: str
    clock: Clock
    world_sql: str
    roles: tuple[Role, ...]
    statements: tuple[Statement, ...] = ()
    tasks: tuple[Task, ...] = ()
    injects: tuple[Inject, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    milestones: tuple[Milestone, ...] = ()
    customers: tuple[CustomerTable, ...] = ()
    """The customers' view: tables raceday keeps from the world as built, for its checks."""
    findings: tuple[Finding, ...] = ()
    hints: tuple[Hint, ...] = ()
    scoring: Scoring = field(default_factory=Scoring)
    briefing: str = ""
    default_roles: tuple[str, ...] = ()
    replay: ReplaySpec | None = None
    debrief: DebriefContent = field(default_factory=DebriefContent)
    truth: Truth | None = None
    panel: tuple[PanelItem, ...] = ()
    path: Path | None = None
    moved: tuple[tuple[int, str], ...] = ()
    """Old spellings this file uses: (line, what moved where), for `check --strict`."""

    def rung_below(self, hint_id: str) -> Hint | None:
        """The hint a player takes before this one: a task's hints are a ladder in the file's
        order (a pointer to the table and column, then the SQL), so the answer never comes
        before the pointer that could have been enough."""
        hint = next((h for h in self.hints if h.id == hint_id), None)
        if hint is None or hint.task is None:
            return None
        ladder = [h for h in self.hints if h.task == hint.task]
        index = ladder.index(hint)
        return ladder[index - 1] if index else None

    def role(self, role_id: str) -> Role:
        for role in self.roles:
            if role.id == role_id:
                return role
        raise KeyError(role_id)

    def statement(self, statement_id: str) -> Statement:
        for statement in self.statements:
            if statement.id == statement_id:
                return statement
        raise KeyError(statement_id)

    def finding(self, finding_id: str) -> Finding | None:
        return next((f for f in self.findings if f.id == finding_id), None)

    @property
    def role_ids(self) -> tuple[str, ...]:
        return tuple(role.id for role in self.roles)

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path else None
