"""Replay the race against the team's database and judge each guard by its effect.

The replay is an ordinary session with no players: the same timeline, the same store path,
the team's schema and edited statements, the exercise's seed data. Then the normal night
(without the delayed worker) is played twice, on the original world and on the team's, and
every write that took on the first but not on the second is a good write the guards block.

When the exercise defines a shifted race (`replay: shifted`), all of it is played a second
time on other numbers (the clock elsewhere, the delayed worker later, the seed renumbered):
a race step is prevented only when it is prevented in both races, and a good write refused
on either normal night is refused. A guard keyed on tonight's plan numbers or times is not a
guard.

The normal night on the original world depends on nothing the team does, so which of its
runs are good writes is kept (in the process, and on disk beside other caches: see
`_good_writes`) per exercise, seed and code, and started in forked children as soon as a
session opens (`prepare_ahead`); the normal nights write no transcript of their own
(only their runs are compared); and a night played again on the same world with the same
statements (ctrl+r pressed twice) is not played again: the engine is deterministic.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import secrets
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from raceday.cache import cache_folder, code_digest, write_atomically
from raceday.engine import collector
from raceday.engine.aside import Aside, can_fork
from raceday.engine.clock import Pace, clock_time
from raceday.exercise.model import (
    Exercise,
    PracticeChange,
    PracticeNight,
    ShiftSpec,
    Statement,
)
from raceday.judge.facts import step_statuses
from raceday.judge.guards import practice_words
from raceday.judge.variant import swap_names
from raceday.store.protocol import Store
from raceday.store.replay_world import build_replay_world, remove_earlier_worlds, remove_world
from raceday.store.sqlite_store import WorldStore
from raceday.transcript import events as ev
from raceday.transcript.events import BlockedWrite, ReplayResult, StepReplay
from raceday.transcript.log import EventLog
from raceday.transcript.verdicts import HarmNight
from raceday.transcript.wording import describe_run

_log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the session calls the replay: at run time this module never imports it
    from concurrent.futures import ThreadPoolExecutor

    from raceday.engine.session import Session
    from raceday.store.postgres.store import PostgresStore


_DERIVED_KEPT = 32
_derivations: OrderedDict[tuple[str, int, Hashable], tuple[Exercise, Exercise]] = OrderedDict()


def _derived(how: str, exercise: Exercise, change: Hashable,
             make: Callable[[], Exercise]) -> Exercise:
    """The same derived exercise (the same object) for the same exercise and change, replay
    after replay: its digest (`_exercise_digest`, kept by identity) is then worked out once,
    not from its whole repr each time."""
    key = (how, id(exercise), change)
    seen = _derivations.get(key)
    if seen is not None and seen[0] is exercise:  # the ref keeps the id the same exercise's
        _derivations.move_to_end(key)
        return seen[1]
    made = make()
    _derivations[key] = (exercise, made)
    while len(_derivations) > _DERIVED_KEPT:
        _derivations.popitem(last=False)
    return made


def _with_statements(exercise: Exercise, sql: dict[str, str]) -> Exercise:
    def make() -> Exercise:
        statements = tuple(
            Statement(s.id, s.role, sql.get(s.id, s.sql), s.description, s.line)
            for s in exercise.statements
        )
        return replace(exercise, statements=statements)

    return _derived("statements", exercise, tuple(sorted(sql.items())), make)


def _without_delayed(exercise: Exercise) -> Exercise:
    """The normal night: no delayed worker's tasks, and the normal night's own tasks run."""
    if exercise.replay is None:
        return exercise
    replay = exercise.replay
    delayed = set(replay.delayed)
    return _derived("normal", exercise, None, lambda: replace(
        exercise, tasks=tuple(t for t in exercise.tasks if t.id not in delayed),
        replay=replace(replay, normal=())))


def _shift(exercise: Exercise, shift: ShiftSpec) -> Exercise:
    return _derived("shift", exercise, shift, lambda: _shifted(exercise, shift))


def _shifted(exercise: Exercise, shift: ShiftSpec) -> Exercise:
    """The same night on another clock, with the named tasks falling due later."""
    moved = timedelta(minutes=shift.clock)
    clock = replace(exercise.clock, start=exercise.clock.start + moved,
                    end=exercise.clock.end + moved)
    later = dict(shift.later)
    tasks = tuple(
        replace(t, at=t.at + later[t.id],
                until=t.until + later[t.id] if t.until is not None else None)
        if t.id in later else t
        for t in exercise.tasks)
    return _names_swapped(replace(exercise, clock=clock, tasks=tasks), shift.swapped)


def _names_swapped(exercise: Exercise, swapped: tuple[tuple[str, str], ...]) -> Exercise:
    """The night with the drawn names traded in every statement (the team's edits included),
    in the tasks' conditions and in the race steps' checks (the story told of the night)."""
    if not swapped:
        return exercise

    def sql(text: str | None) -> str | None:
        return swap_names(text, swapped) if text is not None else None

    statements = tuple(replace(s, sql=swap_names(s.sql, swapped)) for s in exercise.statements)
    tasks = tuple(replace(t, when=sql(t.when), done_when=sql(t.done_when))
                  for t in exercise.tasks)
    guards = exercise.scoring.guards
    if guards is not None:
        guards = replace(guards, steps=tuple(replace(s, happened=swap_names(s.happened, swapped))
                                             for s in guards.steps))
    return replace(exercise, statements=statements, tasks=tasks,
                   scoring=replace(exercise.scoring, guards=guards))


def _describe_shift(exercise: Exercise, shift: ShiftSpec, *, reveal: bool = True) -> str:
    """The variant night in words: its numbers only once they can no longer be played to
    (the final replay); before that, what kind of night it is."""
    drawn = exercise.replay is not None and exercise.replay.shifted is not None \
        and exercise.replay.shifted.drawn
    if drawn and not reveal:
        return "a variant night drawn for this session (its numbers are shown at the end)"
    start = (exercise.clock.start + timedelta(minutes=shift.clock)).strftime("%H:%M")
    parts = [f"the clock from {start}"]
    if shift.seed.strip():
        parts.append("the plans renumbered")
    parts += [f"{task} {minutes} min later" for task, minutes in shift.later]
    parts += [f"'{first}' and '{other}' trading places" for first, other in shift.swapped]
    name = "the variant night" if drawn else "the shifted race"
    return f"{name} ({', '.join(parts)})"


Probe = tuple[int, str, str, str]
E = TypeVar("E", bound=ev.Event)
T = TypeVar("T")


class _UnwrittenLog(EventLog):
    """A normal night's log: events numbered as the transcript would number them, kept in
    memory only (nobody reads a normal night's transcript; its runs are compared at once)."""

    def __init__(self, folder: Path) -> None:  # noqa: D107 - no file is opened
        self.folder = folder
        self.path = folder / "events.jsonl"
        self._seq = 0

    def append(self, event: E) -> E:
        self._seq += 1
        return ev.stamped(event, seq=self._seq)

    def close(self) -> None:
        pass


_MEMO_SIZE = 12
_PREPARE_BYTES = 1 << 20
"""`prepare` plays the normal night ahead only for a world up to this size (the flagship's
is 80 kB; with 1,000 more endpoints, 1.6 MB)."""
_IMAGE_BYTES = 8 << 20
_played: OrderedDict[str, tuple[Session, Path, bytes | None]] = OrderedDict()
"""Nights already played in this process: key -> (the session, the folder it wrote, the
world it left when small: the next replay deletes the earlier replays' worlds)."""
_exercise_digests: dict[int, tuple[Exercise, str]] = {}
_RACES_KEPT = 4
_race_events: OrderedDict[Path, tuple[ev.Event, ...]] = OrderedDict()
"""The events of the race nights played last in this process, by their folder: the replay
walk reads them here rather than parse the transcript just written (`race_night`)."""


def race_night(folder: Path) -> tuple[ev.Event, ...] | None:
    """The events of the race night whose transcript is in `folder` (`<replay>/race`), as
    played in this process (the same events its events.jsonl holds), or None."""
    return _race_events.get(folder.resolve())


def _keep_race(folder: Path, events: list[ev.Event]) -> None:
    _race_events[folder.resolve()] = tuple(events)
    _race_events.move_to_end(folder.resolve())
    while len(_race_events) > _RACES_KEPT:
        _race_events.popitem(last=False)


def _exercise_digest(exercise: Exercise) -> str:
    """A fingerprint of everything the exercise says (its repr: frozen values all the way)."""
    known = _exercise_digests.get(id(exercise))
    if known is not None and known[0] is exercise:
        return known[1]
    digest = hashlib.sha256(repr(exercise).encode("utf-8")).hexdigest()
    if len(_exercise_digests) > 64:
        _exercise_digests.clear()
    _exercise_digests[id(exercise)] = (exercise, digest)  # the ref keeps the id unique
    return digest


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    for part in (path, path.with_name(path.name + "-wal")):
        if part.exists():
            digest.update(part.read_bytes())
    return digest.hexdigest()


def _play(kind: type[Session], exercise: Exercise, world: Path, folder: Path, until: int,
          *, judge_world: bool = True, probes: tuple[Probe, ...] = (),
          transcript: bool = True, track_harms: bool = False) -> Session:
    """Play the timeline with every role automated, to `until`, and close it.

    `judge_world` False: a normal night, where only the runs' outcomes are compared, so the
    world's checks (truth, invariants, milestones) are not run, and no transcript is written.
    `transcript` False: no transcript either (the shifted race: only its session is read).
    The same night on a byte-identical world was played before in this process: its session
    is given back, and its final world and transcript copied here."""
    transcript = transcript and judge_world
    key = json.dumps([kind.__module__, kind.__qualname__, _exercise_digest(exercise),
                      _file_digest(world), until, judge_world, probes, transcript,
                      track_harms])
    seen = _played.get(key)
    if seen is not None and seen[1].is_dir() and (
            seen[2] is not None or seen[1].with_name(seen[1].name + ".db").exists()):
        _played.move_to_end(key)
        before, old, image = seen
        shutil.copytree(old, folder)
        if image is not None:
            world.write_bytes(image)
        else:
            shutil.copyfile(old.with_name(old.name + ".db"), world)
        return before
    folder.mkdir(parents=True)
    session = _play_on(kind, exercise, WorldStore.open(world, exercise.roles, durable=False),
                       folder, until, judge_world=judge_world, probes=probes,
                       transcript=transcript, track_harms=track_harms)
    if world == folder.with_name(folder.name + ".db"):  # the layout the copy above assumes
        small = world.stat().st_size <= _IMAGE_BYTES and not world.with_name(
            world.name + "-wal").exists()
        _played[key] = (session, folder, world.read_bytes() if small else None)
        while len(_played) > _MEMO_SIZE:
            _played.popitem(last=False)
    return session


def _play_on(kind: type[Session], exercise: Exercise, store: Store, folder: Path, until: int,
             *, judge_world: bool = True, probes: tuple[Probe, ...] = (),
             transcript: bool = True, track_harms: bool = False) -> Session:
    """Play the timeline on an open world (`folder` exists), to `until`, and close it; the
    replay's log is a throw-away, so it is not synced to disk (nor written at all without
    `judge_world` or `transcript`)."""
    log = EventLog(folder, durable=False) if judge_world and transcript \
        else _UnwrittenLog(folder)
    session = kind(exercise, store, log, (), Pace.TURNS)
    session.judge_world = judge_world
    session.track_harms = track_harms
    session.probes = list(probes)
    session.start()
    session.advance_to(until)
    session.store.close()
    session.log.close()
    return session


Run = tuple[list[ev.Statement], ev.Automation]


def _runs(session: Session, task_id: str) -> list[Run]:
    """Each run of a task: its statement events and the closing automation event."""
    runs: list[Run] = []
    current: list[ev.Statement] = []
    for event in session.events:
        if isinstance(event, ev.Statement) and event.task == task_id:
            current.append(event)
        elif isinstance(event, ev.Automation) and event.task == task_id:
            runs.append((current, event))
            current = []
    return runs


def _faults_at(session: Session, minute: int) -> tuple[str, ...]:
    """Faults present right after `minute` (from the fault and clear events)."""
    present: dict[str, str] = {}
    for event in session.events:
        if event.minute > minute:
            break
        if isinstance(event, ev.Fault):
            present[event.invariant] = event.fault
        elif isinstance(event, ev.InvariantClear):
            present.pop(event.invariant, None)
    return tuple(present.values())


def _step_replays(exercise: Exercise, race: Session) -> tuple[StepReplay, ...]:
    steps: list[StepReplay] = []
    states = race.facts.race_steps(exercise)
    statuses = step_statuses(states)
    by_id = {s.step.id: s for s in states}
    for state in states:
        step = state.step
        status = statuses[step.id]
        runs = [r for r in _runs(race, step.task) if r[1].outcome != "skipped"]
        chosen = None
        if status == "happened":
            chosen = next((r for r in runs if r[1].minute == state.happened_at), None)
        elif status == "prevented":
            upstream = by_id.get(step.after) if step.after else None
            if upstream is not None and statuses[upstream.step.id] == "prevented":
                steps.append(StepReplay(id=step.id, title=step.title, status=status,
                                        outcome=f"the race stopped at {upstream.step.id}"))
                continue
            since = upstream.happened_at if upstream and upstream.happened_at is not None else -1
            candidates = [r for r in runs if r[1].minute >= since]
            # show the run where the guard spoke: refused or changed nothing, else the first
            chosen = next((r for r in candidates if r[1].outcome != "applied"),
                          candidates[0] if candidates else None)
        if chosen is None:
            steps.append(StepReplay(id=step.id, title=step.title, status=status,
                                    outcome="never ran"))
            continue
        statements, closing = chosen
        steps.append(StepReplay(id=step.id, title=step.title, status=status,
                                at=closing.sim_time, outcome=describe_run(statements),
                                next=closing.next, faults_after=_faults_at(race, closing.minute)))
    return tuple(steps)


def _harms_of(exercise: Exercise, race: Session, until: int) -> dict[str, tuple[int, int | None]]:
    """Each harm's minutes in a played race night, and when it first began."""
    return {i.id: (race.harm_clock.minutes(i.id, until), race.harm_clock.first(i.id))
            for i in exercise.invariants}


_baselines: dict[str, dict[str, tuple[int, int | None]]] = {}


Harms = dict[str, tuple[int, int | None]]


def _baseline_key(kind: type[Session], exercise: Exercise, until: int, renumber: str) -> str:
    return hashlib.sha256(json.dumps(["baseline", "sqlite", kind.__module__, kind.__qualname__,
                                      code_digest(), _exercise_digest(exercise), until,
                                      renumber]).encode()).hexdigest()


def _baseline_cached(key: str) -> Harms | None:
    """A baseline known in this process or kept in the cache folder (beside the normal
    nights' good writes), or None."""
    known = _baselines.get(key)
    if known is not None:
        return known
    cached = _cache_file(key)
    if cached is None:
        return None
    try:
        data: Any = json.loads(cached.read_text(encoding="utf-8"))
        known = {str(h): (int(m), None if f is None else int(f))
                 for h, (m, f) in data["harms"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: played again
    _baselines[key] = known
    return known


def _baseline(kind: type[Session], exercise: Exercise, until: int, renumber: str) -> Harms:
    """The harms of the race on the exercise's own world with its own statements: what the
    customers saw with no guard at all. The same every time for the same exercise, seed and
    code, so it is played once and kept (in this process and in the cache folder); a
    session's own variant is played ahead in a child when the session opens."""
    key = _baseline_key(kind, exercise, until, renumber)
    known = _baseline_cached(key)
    if known is not None:
        return known
    with tempfile.TemporaryDirectory(prefix="raceday-baseline-") as scratch:
        pristine = Path(scratch) / "pristine.db"
        WorldStore.create(pristine, exercise.world_sql, exercise.roles).close()
        world = Path(scratch) / "race.db"
        build_replay_world(pristine, exercise.world_sql, world, renumber)
        race = _play_on(kind, exercise, WorldStore.open(world, exercise.roles, durable=False),
                        _scratch_folder(Path(scratch) / "race"), until, transcript=False)
        known = _harms_of(exercise, race, until)
    _baselines[key] = known
    if len(_baselines) > 32:
        _baselines.pop(next(iter(_baselines)))
    cached = _cache_file(key)
    if cached is not None:  # not written (a full disk): played again next time
        write_atomically(cached, json.dumps({"harms": known}))
    return known


def _scratch_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return folder


def _harm_nights(exercise: Exercise, race: Session, baseline: dict[str, tuple[int, int | None]],
                 until: int, night: str, practice: str = "") -> tuple[HarmNight, ...]:
    """Each harm of one race night beside the same night on the exercise's own world."""
    mine = _harms_of(exercise, race, until)
    return tuple(
        HarmNight(harm=harm, night=night, minutes=minutes,
                  baseline=baseline.get(harm, (0, None))[0],
                  first_at=race.time_of(first) if first is not None else None,
                  practice=practice)
        for harm, (minutes, first) in mine.items())


def _practiced(exercise: Exercise, night: PracticeNight,
               shift: ShiftSpec | None = None) -> Exercise:
    """A practice night: the normal night (no delayed worker) with the night's changes in
    the runs they name; the statements stay the team's. It plays on the variant's clock and
    names (`shift`), so a guard keyed on the times or names the file gives passes nothing."""
    clock, swapped = (shift.clock, shift.swapped) if shift is not None else (0, ())

    def make() -> Exercise:
        moved = timedelta(minutes=clock)
        normal = _without_delayed(_names_swapped(replace(exercise, clock=replace(
            exercise.clock, start=exercise.clock.start + moved, end=exercise.clock.end + moved)),
            swapped))
        changes: dict[str, list[PracticeChange]] = {}
        for change in night.changes:
            changes.setdefault(change.task, []).append(change)
        kept = {t.id for t in normal.tasks}
        tasks = []
        for t in exercise.tasks:  # the night's order: a delayed run keeps its place
            if t.id in kept and t.id in changes:
                tasks.append(replace(t, changes=tuple(changes[t.id])))
            elif t.id in kept:
                tasks.append(next(n for n in normal.tasks if n.id == t.id))
            elif t.id in changes:  # the delayed worker, once, in the run the night names
                tasks += [replace(t, at=c.at, every=None, until=None, changes=(c,))
                          for c in changes[t.id]]
        return replace(normal, tasks=tuple(tasks))

    return _derived("practice", exercise, (night.id, clock, swapped), make)


def _practice_nights_sqlite(kind: type[Session], exercise: Exercise, team_exercise: Exercise,
                            live: Path, folder: Path, until: int,
                            shift: ShiftSpec | None = None) -> tuple[HarmNight, ...]:
    """Each practice night on a world built from the team's as the race's is, beside the
    same night on the exercise's own world."""
    found: list[HarmNight] = []
    for night in exercise.replay.practice if exercise.replay is not None else ():
        where = folder / f"practice-{night.id}"
        where.mkdir()
        world = where / "race.db"
        build_replay_world(live, exercise.world_sql, world)
        played = _play(kind, _practiced(team_exercise, night, shift), world, where / "race",
                       until, transcript=False)
        remove_world(world)
        own = _practiced(exercise, night, shift)
        found += _harm_nights(own, played, _baseline(kind, own, until, ""), until,
                              practice_words(night.title), practice=night.id)
    return tuple(found)


def _kept_some_away(nights: tuple[HarmNight, ...]) -> bool:
    return any(n.minutes < n.baseline for n in nights)


RunKey = tuple[str, int, int]  # task, minute, attempt


def _runs_by_key(session: Session) -> dict[RunKey, Run]:
    """Every task's runs (as `_runs` gives them), in one pass over the night."""
    tasks = {t.id for t in session.exercise.tasks}
    current: dict[str, list[ev.Statement]] = {}
    found: dict[RunKey, Run] = {}
    for event in session.events:
        if isinstance(event, ev.Statement):
            if event.task in tasks:
                current.setdefault(event.task, []).append(event)
        elif isinstance(event, ev.Automation) and event.task in tasks:
            found[(event.task, event.minute, event.attempt)] = (
                current.pop(event.task, []), event)
    return found


GoodRun = tuple[str, int, int, tuple[str, ...]]
"""A run that changed rows on the original world (task, minute, attempt), with the statements
of it that changed rows."""


def _changed_statements(statements: list[ev.Statement]) -> tuple[str, ...]:
    """The run's statements that changed rows (an edit that became several statements counts
    as one: its parts carry the same id)."""
    return tuple(dict.fromkeys(
        e.statement for e in statements if e.ok and e.writes and e.rowcount and e.statement))


def _good_runs(original: Session) -> list[GoodRun]:
    """The runs that changed rows on the original world, in the order of the night."""
    before = _runs_by_key(original)
    return [(*key, _changed_statements(before[key][0]))
            for key in sorted(before, key=lambda k: (k[1], k[0], k[2]))
            if before[key][1].outcome != "failed" and before[key][1].changed]


Outcomes = dict[RunKey, tuple[str | None, tuple[str, ...]]]
"""Each run of a normal night on the team's world: None when it changed rows, else what it
did instead (why a good write would not have taken); and the statements that changed rows."""


def _outcomes(team: Session) -> Outcomes:
    return {key: (None if now.outcome != "failed" and now.changed else describe_run(statements),
                  _changed_statements(statements))
            for key, (statements, now) in _runs_by_key(team).items()}


def _blocked(good: list[GoodRun], outcomes: Outcomes,
             time_of: Callable[[int], str]) -> tuple[BlockedWrite, ...]:
    """Runs that changed rows on the original world (`good`) and changed none (or failed) on
    the team's, or in which a statement that changed rows changed none.

    Statements are compared by id, not by text: the team may have edited a statement into
    several (mark, then purge), and a statement that still changed rows is not blocked; but
    a run that changed something is no alibi for a statement of it that no longer does.
    """
    blocked = []
    for task, minute, attempt, changed in good:
        key = (task, minute, attempt)
        if key not in outcomes:
            blocked.append(BlockedWrite(task=task, at=time_of(minute),
                                        outcome="no statement ran"))
            continue
        outcome, now_changed = outcomes[key]
        lost = [s for s in changed if s not in now_changed]
        if outcome is None and lost:
            outcome = f"{', '.join(lost)} changed 0 rows"
        if outcome is not None:
            blocked.append(BlockedWrite(task=task, at=time_of(minute), outcome=outcome))
    return tuple(blocked)


_RANK = {"prevented": 0, "not reached": 1, "happened": 2}


def _hidden(harms: tuple[HarmNight, ...], reveal: bool) -> tuple[HarmNight, ...]:
    """Before the end, a variant night's times are not shown: they would tell its clock."""
    if reveal:
        return harms
    return tuple(replace(h, first_at=None) if h.night != "tonight's race" else h for h in harms)


def _merge_steps(steps: tuple[StepReplay, ...], shifted: tuple[StepReplay, ...],
                 what: str, reveal: bool = True) -> tuple[StepReplay, ...]:
    """Each step as the worse of the two races saw it: prevented only when prevented in both."""
    other = {s.id: s for s in shifted}
    merged = []
    for step in steps:
        seen = other.get(step.id)
        if seen is None or _RANK.get(seen.status, 0) <= _RANK.get(step.status, 0):
            merged.append(step)
            continue
        tonight = (f" (tonight's race: {step.status}"
                   f"{' at ' + step.at if step.at else ''})")
        if not reveal:  # its time and outcome could tell the variant's numbers
            seen = replace(seen, at=None, outcome="", next=None, faults_after=())
        merged.append(replace(seen, outcome=f"in {what}{tonight}: {seen.outcome}".rstrip(": ")))
    return tuple(merged)


NormalHarms = tuple[HarmNight, ...]
TeamNight = tuple[Outcomes, tuple[ev.MonitorCheck, ...], NormalHarms]
Nights = tuple[tuple[BlockedWrite, ...], tuple[ev.MonitorCheck, ...], NormalHarms]


def _normal_harms(team: Session, until: int, night: str) -> NormalHarms:
    """The customers' harms (outage invariants) the team's world showed on a normal night:
    the exercise's own normal night has none, so each is the guards' doing."""
    found = []
    for invariant in team.exercise.invariants:
        minutes = team.harm_clock.minutes(invariant.id, until)
        first = team.harm_clock.first(invariant.id)
        if invariant.outage and minutes:
            found.append(HarmNight(harm=invariant.id, night=night, minutes=minutes,
                                   first_at=team.time_of(first) if first is not None else None))
    return tuple(found)
_nights_known: OrderedDict[str, Nights] = OrderedDict()
"""The normal nights' answers already worked out in this process (a child's included)."""


def _team_night(kind: type[Session], team_exercise: Exercise, team_world: Path, folder: Path,
                until: int, probes: tuple[Probe, ...], night: str) -> TeamNight:
    """The normal night on the team's world (`team_world`, built as the race's is): how each
    run went, and the team's alerts run again at their minutes."""
    team = _play(kind, _without_delayed(team_exercise), team_world, folder / "normal-team",
                 max([until, *(p[0] for p in probes)]), judge_world=False, probes=probes,
                 track_harms=True)
    remove_world(team_world)  # never read again
    return _outcomes(team), tuple(team.probe_results), _normal_harms(team, until, night)


def _aside(play: Callable[[Path], T], scratch: Path, small: bool,
           started: list[Aside[Any]]) -> Callable[[], T]:
    """`play(scratch)`, started now in a forked child (`Aside`) when the world is `small`,
    while the caller plays the race; else played here when the answer is asked for. The
    scratch folder is the play's alone, and is gone afterwards either way: a child that fails
    half-way leaves nothing the same call made here would trip on."""

    def clear() -> None:
        shutil.rmtree(scratch, ignore_errors=True)

    def run() -> T:
        scratch.mkdir(mode=0o700)  # the nights' worlds: this user's only
        try:
            return play(scratch)
        finally:
            clear()

    if not small:
        return run
    aside = Aside(run, before_here=clear)
    started.append(aside)

    def answer() -> T:
        started.remove(aside)
        return aside.result()

    return answer


def _good_writes_aside(kind: type[Session], exercise: Exercise, folder: Path, until: int,
                       renumber: str, small: bool, started: list[Aside[Any]],
                       ) -> Callable[[], list[GoodRun]]:
    """`_good_writes`, from this process's memory or the cache folder at once, else played
    aside (`_aside`) while the race plays."""
    key = _good_key(kind, exercise, until, renumber)
    ahead = _ahead.pop(key, None)  # taken first: its child is collected, not left to exit
    known = _good_cached(key) if ahead is None else None
    if known is not None:
        return lambda: known

    def play(scratch: Path) -> list[GoodRun]:
        return _good_writes(kind, exercise, scratch, until, renumber)

    get = ahead or _aside(
        play, folder / f"original-night{renumber.strip() and '-shifted'}", small, started)

    def answer() -> list[GoodRun]:
        good = get()
        _good_known[key] = good  # a child's, kept here
        cached = _cache_file(key)
        if cached is not None and not cached.exists():  # started ahead for another folder
            _write_good(cached, good)
        return good

    return answer


def _normal_nights_aside(kind: type[Session], exercise: Exercise, team_exercise: Exercise,
                         team_world: Path, folder: Path, until: int, renumber: str,
                         probes: tuple[Probe, ...], small: bool, started: list[Aside[Any]],
                         ) -> Callable[[], Nights]:
    """The normal night on the original world and on the team's (`team_world`, built as the
    race's is, with the same `renumber`), each played aside (`_aside`) while the race plays:
    the good writes refused, and the team's alerts run again on the team's normal night at
    their minutes. The same nights asked for again (the same exercise, statements and world:
    ctrl+r twice) are not played again."""
    key = json.dumps([kind.__module__, kind.__qualname__, _exercise_digest(exercise),
                      _exercise_digest(team_exercise), _file_digest(team_world), until,
                      renumber, probes])
    known = _nights_known.get(key)
    if known is not None:
        remove_world(team_world)
        return lambda: known
    goods = _good_writes_aside(kind, exercise, folder, until, renumber, small, started)

    def play(scratch: Path) -> TeamNight:
        world = scratch / "normal-team.db"  # a copy: the team's world stays as it was
        shutil.copyfile(team_world, world)
        return _team_night(kind, team_exercise, world, scratch, until, probes, which)

    which = "the variant's normal night" if renumber.strip() else "the normal night"
    night = _aside(play, folder / "normal-nights", small, started) if small else (
        lambda: _team_night(kind, team_exercise, team_world, folder, until, probes, which))
    start = team_exercise.clock.start

    def answer() -> Nights:
        good = goods()
        outcomes, checks, harmed = night()
        remove_world(team_world)
        nights = (_blocked(good, outcomes, lambda minute: clock_time(start, minute)), checks,
                  harmed)
        _nights_known[key] = nights
        while len(_nights_known) > _MEMO_SIZE:
            _nights_known.popitem(last=False)
        return nights

    return answer


def _world_bytes(world: Path) -> int:
    wal = world.with_name(world.name + "-wal")
    return world.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


_good_known: dict[str, list[GoodRun]] = {}


def _good_writes(kind: type[Session], exercise: Exercise, folder: Path, until: int,
                 renumber: str) -> list[GoodRun]:
    """The good writes of the normal night on the original world: it is the same every time
    for the same exercise, seed and code, so it is played once and kept (in this process, and
    in raceday's cache folder, named by a digest of all three)."""
    key = _good_key(kind, exercise, until, renumber)
    good = _good_cached(key)
    if good is not None:
        return good
    pristine = folder / "normal-pristine.db"
    WorldStore.create(pristine, exercise.world_sql, exercise.roles).close()
    if renumber.strip():
        original_world = folder / "normal-original.db"
        build_replay_world(pristine, exercise.world_sql, original_world, renumber)
    else:
        original_world = pristine
    original = _play(kind, _without_delayed(exercise), original_world,
                     folder / "normal-original", until, judge_world=False)
    good = _good_runs(original)
    for world in (pristine, original_world):  # never read again
        remove_world(world)
    cached = _cache_file(key)
    if cached is not None:
        _write_good(cached, good)
    _good_known[key] = good
    return good


def _good_key(kind: type[Session], exercise: Exercise, until: int, renumber: str) -> str:
    return _normal_night_key(kind, _without_delayed(exercise), until, renumber, "sqlite")


def _good_cached(key: str) -> list[GoodRun] | None:
    """The good writes named `key` (`_good_key`) already known in this process or kept in the
    cache folder, or None."""
    good = _good_known.get(key)
    if good is None:
        cached = _cache_file(key)
        good = _read_good(cached) if cached is not None else None
        if good is not None:
            _good_known[key] = good
    return good


def _normal_night_key(kind: type[Session], normal: Exercise, until: int, renumber: str,
                      db: str) -> str:
    """The name of a normal night's good writes: the database kind (`sqlite`,
    `postgresql`: each plays its own dialect), the session's kind, the code, the exercise."""
    return hashlib.sha256(json.dumps([db, kind.__module__, kind.__qualname__, code_digest(),
                                      _exercise_digest(normal), until, renumber]).encode()
                          ).hexdigest()


def _cache_file(key: str) -> Path | None:
    """Where a normal night's good writes are kept: $RACEDAY_CACHE_DIR, else the user's cache
    folder; None when RACEDAY_CACHE_DIR is empty (no cache on disk)."""
    folder = cache_folder()
    return folder / "normal-nights" / f"{key}.json" if folder is not None else None


def _read_good(path: Path) -> list[GoodRun] | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return [(str(t), int(m), int(a), tuple(str(x) for x in c))
                for t, m, a, c in data["good"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: the night is played again


def _write_good(path: Path, good: list[GoodRun]) -> None:
    # not written (a full disk, a read-only home): the next replay plays the night again
    write_atomically(path, json.dumps({"good": good}))


def _copy_world(built: Path, path: Path) -> None:
    """A second copy of a freshly built replay world (closed: all of it in the one file)."""
    shutil.copyfile(built, path)


_ahead: dict[str, Callable[[], list[GoodRun]]] = {}
"""Good writes of the original world's normal nights being played in forked children since a
session opened (`prepare_ahead`), by `_good_key`: the first replay (or `prepare`) that needs
one takes that child's answer instead of playing the night again."""
_ahead_started: list[Aside[Any]] = []
_ahead_folders: list[Path] = []
"""The scratch folders of the children not taken yet (a child stopped half-way leaves its)."""


def _wanted(session: Session) -> list[tuple[Exercise, str]]:
    """The original nights every replay needs: tonight's, and the variant's (with its seed)
    when the exercise has one."""
    exercise, shift = session.exercise, session.variant
    return [(exercise, "")] + ([(_shift(exercise, shift), shift.seed)]
                               if shift is not None else [])


def _until(session: Session) -> int:
    replay = session.exercise.replay
    return replay.until if replay is not None and replay.until is not None \
        else session.end_minute


def _preparable(session: Session) -> bool:
    """A replay of this session plays the original world's normal nights, and they are small
    enough to be played ahead of it (a large world's would hold up the players)."""
    exercise, store = session.exercise, session.store
    return (exercise.replay is not None and bool(exercise.replay.delayed)
            and isinstance(store, WorldStore) and _world_bytes(store.path) <= _PREPARE_BYTES)


def prepare_ahead(session: Session) -> None:
    """Start what `prepare` does in forked children and return at once: a headless run's
    script plays meanwhile, as the TUI's players read the screen, and its replay (the final
    one, at least) takes the answers over. Nothing is started when no child can be forked
    (the replay plays the nights when it needs them), or when the answers are known. Never
    fails: whatever goes wrong here, the replay meets again and reports."""
    if not can_fork():
        return
    try:
        if not _preparable(session):
            return
        kind, until = type(session), _until(session)
        with collector.paused():  # the children play with the collector held off
            _baselines_ahead(kind, session, until)
            for normal, renumber in _wanted(session):
                key = _good_key(kind, normal, until, renumber)
                if key in _ahead or _good_cached(key) is not None:
                    continue
                # made and removed by the child (`_aside`): a parent killed at once leaves none
                folder = Path(tempfile.gettempdir()) / f"raceday-prepare-{secrets.token_hex(8)}"
                _ahead_folders.append(folder)

                def play(scratch: Path, normal: Exercise = normal, renumber: str = renumber,
                         ) -> list[GoodRun]:
                    return _good_writes(kind, normal, scratch, until, renumber)

                get = _aside(play, folder, True, _ahead_started)

                def answer(get: Callable[[], list[GoodRun]] = get, folder: Path = folder,
                           ) -> list[GoodRun]:
                    if folder in _ahead_folders:
                        _ahead_folders.remove(folder)
                    return get()

                _ahead[key] = answer
    except Exception:  # the replay plays it itself, and says what fails
        _log.info("the replay's normal nights could not be started ahead", exc_info=True)


def _baselines_ahead(kind: type[Session], session: Session, until: int) -> None:
    """The race on the exercise's own world (tonight's and the session's variant), played in
    one child that leaves its answers in the cache folder: the final replay finds them
    there, or plays them itself if the child is not done."""
    missing = [(e, r) for e, r in _wanted(session)
               if _baseline_cached(_baseline_key(kind, e, until, r)) is None]
    if not missing or cache_folder() is None:
        return

    def play() -> bool:
        for ex, renumber in missing:
            _baseline(kind, ex, until, renumber)
        return True

    _ahead_started.append(Aside(play))


def discard_ahead() -> None:
    """Stop the children `prepare_ahead` started whose answers nobody took, and remove their
    folders (at exit; and between tests, each of which starts from nothing)."""
    _ahead.clear()
    for aside in list(_ahead_started):
        aside.discard()
    _ahead_started.clear()
    for folder in _ahead_folders:
        shutil.rmtree(folder, ignore_errors=True)
    _ahead_folders.clear()


atexit.register(discard_ahead)


def prepare(session: Session) -> None:
    """Do ahead what every replay of `session` needs whatever the team does: raceday's code
    digest, and the good writes of the normal nights of the original world (tonight's, and
    the shifted race's when there is one), read from the cache folder or played now, side by
    side (`_aside`). The TUI asks for it once the session is open, while the players read the
    screen, so the first ctrl+r does not wait for it. (Nothing is done for a large world,
    whose normal night would hold up the players' first statements.) Never fails: whatever
    goes wrong here, the replay meets again and reports."""
    started: list[Aside[Any]] = []
    try:
        if not _preparable(session):
            return
        with collector.paused():
            _prepare(session, started)
    except Exception:  # the replay plays it itself, and says what fails
        _log.info("the replay's normal night could not be prepared", exc_info=True)
    finally:
        for aside in started:
            aside.discard()


def _prepare(session: Session, started: list[Aside[Any]]) -> None:
    until = _until(session)
    with tempfile.TemporaryDirectory(prefix="raceday-replay-") as scratch:
        goods = [_good_writes_aside(type(session), normal, Path(scratch), until, renumber,
                                    True, started)
                 for normal, renumber in _wanted(session)]
        for good in goods:
            good()


def replay_race(session: Session, probes: tuple[Probe, ...] = (), *,
                keep_world: bool = True, reveal: bool = False) -> ReplayResult:
    """Replay the race on a copy of the team's world; the live world is not touched.

    `probes` (minute, name, role, sql): the team's alerts on the fault and the looks behind
    its diagnoses, run again on the team's normal night at the same minutes (the result's
    `monitor_checks`). Only the race's world is kept (for the replay walk), and only until
    the next replay; `keep_world=False` (the final replay, never walked) keeps none."""
    with collector.paused():
        if _on_postgres(session):
            return replay_race_postgres(session, probes, keep_world=keep_world, reveal=reveal)
        return _replay_race_sqlite(session, probes, keep_world=keep_world, reveal=reveal)


def _replay_race_sqlite(session: Session, probes: tuple[Probe, ...], *,
                        keep_world: bool, reveal: bool) -> ReplayResult:
    exercise = session.exercise
    root = session.folder / "replay"
    remove_earlier_worlds(root)
    n = 1
    while (root / str(n)).exists():
        n += 1
    folder = root / str(n)
    folder.mkdir(parents=True)
    live = folder / "team-now.db"
    session.store.backup_to(live)
    until = _until(session)
    team_exercise = _with_statements(exercise, session.statement_sql)

    race_world = folder / "race.db"
    warnings = build_replay_world(live, exercise.world_sql, race_world)
    delayed = bool(exercise.replay and exercise.replay.delayed)
    kind = type(session)  # the replay plays sessions of the kind it was given
    started: list[Aside[Any]] = []  # children whose answer is not asked for yet
    small = _world_bytes(race_world) <= _PREPARE_BYTES  # its nights played aside
    try:
        nights: Callable[[], Nights] | None = None
        if delayed:  # the team's normal night starts from the same world: built once, copied
            _copy_world(race_world, folder / "normal-team.db")
            nights = _normal_nights_aside(kind, exercise, team_exercise,
                                          folder / "normal-team.db", folder, until, "", probes,
                                          small, started)
        race = _play(kind, team_exercise, race_world, folder / "race", until)
        _keep_race(folder / "race", race.events)
        steps = _step_replays(exercise, race)
        harms = _harm_nights(exercise, race, _baseline(kind, exercise, until, ""), until,
                             "tonight's race")
        fault = race.facts.fault_started
        fault_at = race.time_of(fault) if fault is not None else None
        warnings.extend(f"an exercise check failed in the replay (the team's schema broke it): "
                        f"{e.error}" for e in race.events if isinstance(e, ev.CheckFailed))

        shift = session.variant
        more_nights: Callable[[], Nights] | None = None
        what = ""
        # Nothing prevented or kept away in tonight's race: the variant can only agree (the
        # worse of the two nights counts), so it is not played.
        if shift is not None and (any(s.status == "prevented" for s in steps)
                                  or _kept_some_away(harms)):
            what = _describe_shift(exercise, shift, reveal=reveal)
            other = folder / "shifted"
            other.mkdir()
            shifted_world = other / "race.db"
            build_replay_world(live, exercise.world_sql, shifted_world, shift.seed)
            shifted_exercise = _shift(exercise, shift)
            if delayed:
                _copy_world(shifted_world, other / "normal-team.db")
                more_nights = _normal_nights_aside(kind, shifted_exercise,
                                                   _shift(team_exercise, shift),
                                                   other / "normal-team.db", other, until,
                                                   shift.seed, (), small, started)
            shifted = _play(kind, _shift(team_exercise, shift), shifted_world, other / "race",
                            until, transcript=False)  # nobody reads it: merged below
            remove_world(shifted_world)
            steps = _merge_steps(steps, _step_replays(shifted_exercise, shifted), what, reveal)
            harms += _harm_nights(shifted_exercise, shifted,
                                  _baseline(kind, shifted_exercise, until, shift.seed), until,
                                  "the variant night")
            if fault_at is None and shifted.facts.fault_started is not None:
                fault_at = (f"{shifted.time_of(shifted.facts.fault_started)} in {what}"
                            if reveal else f"in {what}")

        harms += _practice_nights_sqlite(kind, exercise, team_exercise, live, folder, until,
                                         shift)

        # the normal nights' answers last: their children played beside both races
        blocked: tuple[BlockedWrite, ...] = ()
        checks: tuple[ev.MonitorCheck, ...] = ()
        normal_harms: NormalHarms = ()
        if nights is not None:
            blocked, checks, normal_harms = nights()
        if more_nights is not None:
            seen = {b.task for b in blocked}
            more, _, more_harms = more_nights()
            normal_harms += _hidden(more_harms, reveal)
            blocked += tuple(replace(b, outcome=f"{b.outcome}, on the normal night of {what}")
                             for b in more if b.task not in seen)
    finally:
        for aside in started:  # the replay failed before it asked for these answers
            aside.discard()
    remove_world(live)
    if not keep_world:
        remove_world(race_world)
    return ReplayResult(
        steps=steps,
        fault_at=fault_at,
        blocked_good_writes=blocked,
        warnings=tuple(dict.fromkeys(warnings)),
        folder=str(folder.relative_to(session.folder)),  # relative: transcripts stay the same
        monitor_checks=checks,
        harms=_hidden(harms, reveal),
        normal_harms=normal_harms,
    )


# -- on PostgreSQL ----------------------------------------------------------------------------
# The same replay when the session's world is a schema on a PostgreSQL server: each replay
# world is a schema forked on the same server (`PostgresStore.fork`: the team's schema, the
# seed rows) and dropped once played; only the race's world is kept for the replay walk, until
# the next replay (or the final one, which keeps none). Nothing here runs on SQLite.

_PG_NIGHTS = 3
"""Nights of one replay played at once on PostgreSQL (the race and the two normal nights)."""
KEPT_NOTE = "race.postgres"
_kept_pg: dict[Path, PostgresStore] = {}
"""The race world of the newest replay of each PostgreSQL session (by its replay folder),
closed, kept for the walk (`kept_race_world`)."""


def _on_postgres(session: Session) -> bool:
    return session.store.backend == "postgresql"


def kept_race_world(folder: Path) -> Store | None:
    """The newest replay's race world on PostgreSQL, opened again for the replay walk (None
    when there is none: a SQLite replay, another process, a final replay)."""
    kept = _kept_pg.get(folder.resolve())
    return kept.reopen() if kept is not None else None


def drop_kept_worlds(root: Path) -> None:
    """Drop the PostgreSQL race worlds kept under `root` (a session's replay folder)."""
    root = root.resolve()
    for folder in [f for f in _kept_pg if f.parent == root]:
        _kept_pg.pop(folder).drop()
        (folder / KEPT_NOTE).unlink(missing_ok=True)


def _drop_every_kept_world() -> None:
    """At exit: a session that ended without its final replay (aborted, closed) kept the
    race world of its last replay; it goes with the process (best effort)."""
    for folder in list(_kept_pg):
        _drop_quietly(_kept_pg.pop(folder))


def _drop_quietly(world: PostgresStore) -> None:
    """Drop a replay world; a failure (the server gone) is logged, and the next world is
    still dropped, and what made the replay fail is what it reports."""
    try:
        world.drop()
    except Exception:
        _log.warning("the replay world rd_%s_* could not be dropped", world.session,
                     exc_info=True)


def _keep(folder: Path, world: PostgresStore) -> None:
    if not _kept_pg:
        atexit.unregister(_drop_every_kept_world)
        atexit.register(_drop_every_kept_world)
    _kept_pg[folder.resolve()] = world
    # for people: which schema on the server this replay's world is, until the next replay
    (folder / KEPT_NOTE).write_text(f"{world.session}\n", encoding="utf-8")


def _fork(live: PostgresStore, made: list[PostgresStore], seed_sql: str,
          renumber: str = "") -> tuple[PostgresStore, list[str]]:
    world, warnings = live.fork(seed_sql, renumber)
    made.append(world)
    return world, warnings


def _played_pg(kind: type[Session], exercise: Exercise, world: PostgresStore, folder: Path,
               until: int, *, judge_world: bool = True, probes: tuple[Probe, ...] = (),
               track_harms: bool = False) -> Session:
    folder.mkdir(parents=True)
    return _play_on(kind, exercise, world, folder, until, judge_world=judge_world,
                    probes=probes, track_harms=track_harms)


def _good_writes_pg(kind: type[Session], exercise: Exercise, live: PostgresStore, folder: Path,
                    until: int, renumber: str, made: list[PostgresStore]) -> list[GoodRun]:
    """`_good_writes` on PostgreSQL: the normal night on a fresh world of the exercise's own
    (renumbered for the shifted race), kept under a key of its own (`postgresql`)."""
    from raceday.store.postgres.store import PostgresStore

    normal = _without_delayed(exercise)
    key = _normal_night_key(kind, normal, until, renumber, "postgresql")
    if key in _good_known:
        return _good_known[key]
    cached = _cache_file(key)
    good = _read_good(cached) if cached is not None else None
    if good is None:
        pristine = PostgresStore.create(live.dsn, exercise.world_sql, exercise.roles,
                                        row_cap=live.row_cap, time_limit_s=live.time_limit_s)
        made.append(pristine)
        world = _fork(pristine, made, exercise.world_sql, renumber)[0] if renumber.strip() \
            else pristine
        original = _played_pg(kind, normal, world, folder / "normal-original", until,
                              judge_world=False)
        good = _good_runs(original)
        if cached is not None:
            _write_good(cached, good)
    _good_known[key] = good
    return good


def _normal_nights_pg(kind: type[Session], exercise: Exercise, team_exercise: Exercise,
                      live: PostgresStore, folder: Path, until: int, renumber: str,
                      made: list[PostgresStore], pool: ThreadPoolExecutor,
                      probes: tuple[Probe, ...] = (),
                      ) -> Callable[[], Nights]:
    """`_normal_nights` on PostgreSQL, the two nights played in `pool`: call what it returns
    for the good writes refused and the probes' results, once both nights are over."""
    good = pool.submit(_good_writes_pg, kind, exercise, live, folder, until, renumber, made)
    world, _ = _fork(live, made, exercise.world_sql, renumber)
    team = pool.submit(_played_pg, kind, _without_delayed(team_exercise), world,
                       folder / "normal-team", max([until, *(p[0] for p in probes)]),
                       judge_world=False, probes=probes, track_harms=True)
    which = "the variant's normal night" if renumber.strip() else "the normal night"

    def compared() -> Nights:
        night = team.result()
        return (_blocked(good.result(), _outcomes(night), night.time_of),
                tuple(night.probe_results), _normal_harms(night, until, which))

    return compared


def _baseline_pg(kind: type[Session], exercise: Exercise, live: PostgresStore, folder: Path,
                 until: int, renumber: str, made: list[PostgresStore],
                 ) -> dict[str, tuple[int, int | None]]:
    """`_baseline` on PostgreSQL: the race on a fresh world of the exercise's own."""
    from raceday.store.postgres.store import PostgresStore

    key = json.dumps(["postgresql", kind.__module__, kind.__qualname__,
                      _exercise_digest(exercise), until, renumber])
    known = _baselines.get(key)
    if known is not None:
        return known
    pristine = PostgresStore.create(live.dsn, exercise.world_sql, exercise.roles,
                                    row_cap=live.row_cap, time_limit_s=live.time_limit_s)
    made.append(pristine)
    world = _fork(pristine, made, exercise.world_sql, renumber)[0] if renumber.strip() \
        else pristine
    race = _played_pg(kind, exercise, world, folder, until)
    known = _baselines[key] = _harms_of(exercise, race, until)
    return known


def _practice_nights_pg(kind: type[Session], exercise: Exercise, team_exercise: Exercise,
                        live: PostgresStore, folder: Path, until: int,
                        made: list[PostgresStore], pool: ThreadPoolExecutor,
                        shift: ShiftSpec | None = None) -> tuple[HarmNight, ...]:
    """`_practice_nights_sqlite` on PostgreSQL: each night on a schema forked from the
    team's, the nights played in `pool`."""
    playing = []
    for night in exercise.replay.practice if exercise.replay is not None else ():
        where = folder / f"practice-{night.id}"
        world, _ = _fork(live, made, exercise.world_sql)
        own = _practiced(exercise, night, shift)
        playing.append((night, own,
                        pool.submit(_played_pg, kind, _practiced(team_exercise, night, shift),
                                    world,
                                    where / "race", until),
                        pool.submit(_baseline_pg, kind, own, live, where / "baseline", until,
                                    "", made)))
    found: list[HarmNight] = []
    for night, own, played, baseline in playing:
        found += _harm_nights(own, played.result(), baseline.result(), until,
                              practice_words(night.title), practice=night.id)
    return tuple(found)


def replay_race_postgres(session: Session, probes: tuple[Probe, ...] = (), *,
                         keep_world: bool = True, reveal: bool = False) -> ReplayResult:
    """`replay_race` for a session whose world is on PostgreSQL: the same nights, each on a
    schema forked from the session's on the same server, all dropped when played (the
    race's kept for the walk when `keep_world`, until the next replay)."""
    live = cast("PostgresStore", session.store)
    exercise = session.exercise
    root = session.folder / "replay"
    drop_kept_worlds(root)
    n = 1
    while (root / str(n)).exists():
        n += 1
    folder = root / str(n)
    folder.mkdir(parents=True)
    until = _until(session)
    team_exercise = _with_statements(exercise, session.statement_sql)
    made: list[PostgresStore] = []
    race_world: PostgresStore | None = None
    played = False
    # Each night is its own world on its own connections, and mostly waits on the server:
    # the race and the normal nights are played side by side (each shifted one too).
    from concurrent.futures import ThreadPoolExecutor  # PostgreSQL's only: SQLite forks

    pool = ThreadPoolExecutor(max_workers=_PG_NIGHTS, thread_name_prefix="replay-night")
    try:
        race_world, warnings = _fork(live, made, exercise.world_sql)
        kind = type(session)
        racing = pool.submit(_played_pg, kind, team_exercise, race_world, folder / "race", until)
        delayed = bool(exercise.replay and exercise.replay.delayed)
        normal = _normal_nights_pg(kind, exercise, team_exercise, live, folder, until, "", made,
                                   pool, probes) if delayed else None
        baseline = pool.submit(_baseline_pg, kind, exercise, live, folder / "baseline", until,
                               "", made)
        race = racing.result()
        steps = _step_replays(exercise, race)
        harms = _harm_nights(exercise, race, baseline.result(), until, "tonight's race")
        fault = race.facts.fault_started
        fault_at = race.time_of(fault) if fault is not None else None
        warnings.extend(f"an exercise check failed in the replay (the team's schema broke "
                        f"it): {e.error}" for e in race.events if isinstance(e, ev.CheckFailed))
        shift = session.variant
        shifted_normal = None
        if shift is not None and (any(s.status == "prevented" for s in steps)
                                  or _kept_some_away(harms)):
            what = _describe_shift(exercise, shift, reveal=reveal)
            other = folder / "shifted"
            other.mkdir()
            shifted_world, _ = _fork(live, made, exercise.world_sql, shift.seed)
            shifted_exercise = _shift(exercise, shift)
            shifting = pool.submit(_played_pg, kind, _shift(team_exercise, shift), shifted_world,
                                   other / "race", until)
            if delayed:
                shifted_normal = _normal_nights_pg(kind, shifted_exercise,
                                                   _shift(team_exercise, shift), live, other,
                                                   until, shift.seed, made, pool)
            shifted_baseline = _baseline_pg(kind, shifted_exercise, live,
                                            other / "baseline", until, shift.seed, made)
            shifted = shifting.result()
            steps = _merge_steps(steps, _step_replays(shifted_exercise, shifted), what, reveal)
            harms += _harm_nights(shifted_exercise, shifted, shifted_baseline, until,
                                  "the variant night")
            if fault_at is None and shifted.facts.fault_started is not None:
                fault_at = (f"{shifted.time_of(shifted.facts.fault_started)} in {what}"
                            if reveal else f"in {what}")
        harms += _practice_nights_pg(kind, exercise, team_exercise, live, folder, until, made,
                                     pool, shift)
        blocked, checks, normal_harms = normal() if normal is not None else ((), (), ())
        if shifted_normal is not None:
            seen = {b.task for b in blocked}
            more, _, more_harms = shifted_normal()
            normal_harms += _hidden(more_harms, reveal)
            blocked += tuple(replace(b, outcome=f"{b.outcome}, on the normal night of {what}")
                             for b in more if b.task not in seen)
        played = True
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # no night still playing on a world
        for world in made:
            if world is race_world and keep_world and played:
                _keep(folder, world)
                continue
            _drop_quietly(world)
    return ReplayResult(
        steps=steps,
        fault_at=fault_at,
        blocked_good_writes=blocked,
        warnings=tuple(dict.fromkeys(warnings)),
        folder=str(folder.relative_to(session.folder)),
        monitor_checks=checks,
        harms=_hidden(harms, reveal),
        normal_harms=normal_harms,
    )
