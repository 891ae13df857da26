"""The replay (`replay_race`: one replay over forked worlds, `replay_forked.replay_over`),
and its nights on a world in a file (SQLite's: `FileNights`): each night on a copy of the
team's file built as the race's is, played in a forked child beside the race.

The normal night and the race on the original world depend on nothing the team does, so
which of the normal night's runs are good writes, and what harm the race did with no guard
(a baseline), are kept (in the process, and on disk beside other caches: see
`_good_writes`, `_baseline`) per exercise, seed and code; those a session needs (its
variant's and practice nights' included) are played in one forked child, one after another,
as soon as the session opens (`prepare_ahead`). The normal nights write no transcript of
their own (only their runs are compared); and a night played again on the same world with
the same statements (ctrl+r pressed twice) is not played again: the engine is deterministic.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from raceday.engine import collector, replay_cache
from raceday.engine.ahead_thread import AHEAD
from raceday.engine.aside import Aside, Chain, can_fork
from raceday.engine.clock import clock_time
from raceday.engine.night import Night, NightKind, Probe, play_on, replay_until
from raceday.engine.race_changes import on_first_change
from raceday.engine.replay_cache import (
    cache_file,
    normal_night_key,
    read_good,
    write_good,
)
from raceday.engine.replay_exercises import (
    exercise_digest,
    practice_baseline,
    practice_baseline_seed,
    variant_of,
    without_delayed,
)
from raceday.engine.replay_forked import ReplayNights, replay_over
from raceday.engine.replay_outcomes import (
    GoodRun,
    Harms,
    HarmTimes,
    Nights,
    TeamNight,
    blocked_writes,
    good_runs,
    harm_times,
    harms_of,
    normal_night_harms,
    run_outcomes,
)
from raceday.engine.replay_postgres import ServerNights, prepare_ahead_postgres
from raceday.exercise.model import Exercise
from raceday.store import create_world_file, open_world_file
from raceday.store.replay_world import build_replay_world, remove_earlier_worlds, remove_world
from raceday.store.world_digest import world_fingerprint
from raceday.transcript import events as ev
from raceday.transcript.events import ReplayResult

_log = logging.getLogger(__name__)
T = TypeVar("T")


_MEMO_SIZE = 12
_PREPARE_BYTES = 1 << 20
"""`prepare` plays the normal night ahead only for a world up to this size (the flagship's
is 80 kB; with 1,000 more endpoints, 1.6 MB)."""
_FORK_BYTES = 64 << 20
"""The final replay plays its nights side by side (each in a child, on a copy of the world)
for a world up to this size (the flagship with 10,000 more endpoints: 16 MB); a larger one's
nights are played one after another, so that its copies are never all on disk at once."""
_IMAGE_BYTES = 8 << 20
_played: OrderedDict[str, tuple[Night, Path, bytes | None]] = OrderedDict()
"""Nights already played in this process: key -> (the session, the folder it wrote, the
world it left when small: the next replay deletes the earlier replays' worlds)."""
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


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    for part in (path, path.with_name(path.name + "-wal")):
        if part.exists():
            digest.update(part.read_bytes())
    return digest.hexdigest()


def play_night(kind: NightKind, exercise: Exercise, world: Path, folder: Path, until: int,
          *, judge_world: bool = True, probes: tuple[Probe, ...] = (),
          transcript: bool = True, track_harms: bool = False) -> Night:
    """Play the timeline with every role automated, to `until`, and close it.

    `judge_world` False: a normal night, where only the runs' outcomes are compared, so the
    world's checks (truth, invariants, milestones) are not run, and no transcript is written.
    `transcript` False: no transcript either (the shifted race: only its session is read).
    The same night on a byte-identical world was played before in this process: its session
    is given back, and its final world and transcript copied here."""
    transcript = transcript and judge_world
    key = json.dumps([kind.__module__, kind.__qualname__, exercise_digest(exercise),
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
    session = play_on(kind, exercise, open_world_file(world, exercise.roles, durable=False),
                       folder, until, judge_world=judge_world, probes=probes,
                       transcript=transcript, track_harms=track_harms)
    if world == folder.with_name(folder.name + ".db"):  # the layout the copy above assumes
        small = world.stat().st_size <= _IMAGE_BYTES and not world.with_name(
            world.name + "-wal").exists()
        _played[key] = (session, folder, world.read_bytes() if small else None)
        while len(_played) > _MEMO_SIZE:
            _played.popitem(last=False)
    return session


def _baseline(kind: NightKind, exercise: Exercise, until: int, renumber: str) -> Harms:
    """The harms of the race on the exercise's own world with its own statements: what the
    customers saw with no guard at all. The same every time for the same exercise, seed and
    code, so it is played once and kept (in this process and in the cache folder); a
    session's own (its variant's, its practice nights') are played ahead in a child when the
    session opens (`_ahead_chain`), whose answer is waited for rather than played again."""
    key = replay_cache.baseline_key(kind, exercise, until, renumber, "sqlite")
    known = replay_cache.baseline_cached(key)
    if known is not None:
        return known
    ahead = _baselines_pending.pop(key, None)
    known = ahead() if ahead is not None else None
    if known is not None:
        replay_cache.remember_baseline(key, known)  # the child wrote the cache file
        return known
    known = play_baseline(kind, exercise, until, renumber)
    replay_cache.keep_baseline(key, known)
    return known


def play_baseline(kind: NightKind, exercise: Exercise, until: int, renumber: str) -> Harms:
    """`_baseline` played now, neither read from nor kept in a cache (`raceday check` plays
    the baselines of variants no session will draw)."""
    with tempfile.TemporaryDirectory(prefix="raceday-baseline-") as scratch:
        pristine = Path(scratch) / "pristine.db"
        create_world_file(pristine, exercise.world_sql, exercise.roles).close()
        world = Path(scratch) / "race.db"
        build_replay_world(pristine, exercise.world_sql, world, renumber)
        if not renumber.strip():  # the world every practice night's baseline starts from
            replay_cache.keep_world(replay_cache.world_key(exercise), world_fingerprint(world))
        race = play_on(kind, exercise, open_world_file(world, exercise.roles, durable=False),
                        _scratch_folder(Path(scratch) / "race"), until, transcript=False)
        return harms_of(exercise, race, until)


_baselines_pending: dict[str, Callable[[], Harms | None]] = {}
"""Baselines being played in a child since a session opened (`_ahead_chain`), by
`baseline_key`: the child's answer, waited for, or None (it failed: played here)."""


def _own_world(exercise: Exercise) -> str:
    """The fingerprint of the world a replay builds from the exercise's own world (as a
    baseline starts from it), kept in this process and the cache folder."""
    key = replay_cache.world_key(exercise)
    known = replay_cache.world_cached(key)
    if known is not None:
        return known
    with tempfile.TemporaryDirectory(prefix="raceday-own-world-") as scratch:
        pristine = Path(scratch) / "pristine.db"
        create_world_file(pristine, exercise.world_sql, exercise.roles).close()
        world = Path(scratch) / "race.db"
        build_replay_world(pristine, exercise.world_sql, world)
        known = world_fingerprint(world)
    replay_cache.keep_world(key, known)
    return known


def _scratch_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return folder


def _baseline_aside(kind: NightKind, exercise: Exercise, until: int, renumber: str,
                    scratch: Path, fork: bool, started: list[Aside[Any]],
                    ) -> Callable[[], Harms]:
    """`_baseline` on the exercise's own world (built with `renumber`): known, or being
    played ahead, it is taken when asked for; else played aside (`_aside`) from now."""
    key = replay_cache.baseline_key(kind, exercise, until, renumber, "sqlite")
    if key in _baselines_pending and _take_over(key):  # the child has not begun it
        del _baselines_pending[key]
    if replay_cache.baseline_cached(key) is not None or key in _baselines_pending:
        return lambda: _baseline(kind, exercise, until, renumber)
    get = _aside(lambda _scratch: _baseline(kind, exercise, until, renumber), scratch, fork,
                 started)

    def answer() -> Harms:
        known = get()
        replay_cache.remember_baseline(key, known)  # a child's: it wrote the cache file
        return known

    return answer


_PRACTICE_KEPT = 24
_practice_known: OrderedDict[str, HarmTimes] = OrderedDict()
"""The team's practice nights already played in this process (their harm times), by the
night, the team's statements and the world they started from: ctrl+r twice plays none."""


def _practice_night_aside(kind: NightKind, own: Exercise, team: Exercise, live: Path,
                          built: str, folder: Path, until: int, renumber: str, fork: bool,
                          started: list[Aside[Any]]) -> Callable[[], HarmTimes]:
    """The team's practice night `team` (with the team's statements) on a world built from
    the team's as the race's is (`built`: that world's file digest; `renumber`: the
    variant's seed), played aside."""
    key = json.dumps([kind.__module__, kind.__qualname__, exercise_digest(team), built, until,
                      renumber])
    known = _practice_known.get(key)
    if known is not None:
        return lambda: known

    def play(scratch: Path) -> HarmTimes:
        world = scratch / "race.db"
        build_replay_world(live, own.world_sql, world, renumber)
        played = play_night(kind, team, world, scratch / "race", until, transcript=False)
        remove_world(world)
        return harm_times(own, played, until)

    get = _aside(play, folder, fork, started)

    def answer() -> HarmTimes:
        got = get()
        _practice_known[key] = got
        while len(_practice_known) > _PRACTICE_KEPT:
            _practice_known.popitem(last=False)
        return got

    return answer


_nights_known: OrderedDict[str, Nights] = OrderedDict()
"""The normal nights' answers already worked out in this process (a child's included)."""


def _team_night(kind: NightKind, team_exercise: Exercise, team_world: Path, folder: Path,
                until: int, probes: tuple[Probe, ...], night: str) -> TeamNight:
    """The normal night on the team's world (`team_world`, built as the race's is): how each
    run went, and the team's alerts run again at their minutes."""
    team = play_night(kind, without_delayed(team_exercise), team_world, folder / "normal-team",
                 max([until, *(p[0] for p in probes)]), judge_world=False, probes=probes,
                 track_harms=True)
    remove_world(team_world)  # never read again
    return run_outcomes(team), tuple(team.probe_results), normal_night_harms(team, until, night)


def _aside(play: Callable[[Path], T], scratch: Path, fork: bool,
           started: list[Aside[Any]]) -> Callable[[], T]:
    """`play(scratch)`, started now in a forked child (`Aside`) when `fork` (and a child can
    be forked), while the caller plays the race; else played here when the answer is asked
    for. The scratch folder is the play's alone, and is gone afterwards either way: a child
    that fails half-way leaves nothing the same call made here would trip on."""

    def clear() -> None:
        shutil.rmtree(scratch, ignore_errors=True)

    def run() -> T:
        scratch.mkdir(mode=0o700)  # the nights' worlds: this user's only
        try:
            return play(scratch)
        finally:
            clear()

    if not fork:
        return run
    aside = Aside(run, before_here=clear)
    started.append(aside)

    def answer() -> T:
        started.remove(aside)
        return aside.result()

    return answer


def _good_writes_aside(kind: NightKind, exercise: Exercise, folder: Path, until: int,
                       renumber: str, fork: bool, started: list[Aside[Any]],
                       ) -> Callable[[], list[GoodRun]]:
    """`_good_writes`, from this process's memory or the cache folder at once, else played
    aside (`_aside`) while the race plays."""
    key = _good_key(kind, exercise, until, renumber)
    ahead = _ahead.pop(key, None)  # taken first: its child is collected, not left to exit
    if ahead is not None and _take_over(key):  # the child has not begun it: aside from now
        ahead = None
    known = _good_cached(key) if ahead is None else None
    if known is not None:
        return lambda: known

    def play(scratch: Path) -> list[GoodRun]:
        return _good_writes(kind, exercise, scratch, until, renumber)

    get = ahead or _aside(
        play, folder / f"original-night{renumber.strip() and '-shifted'}", fork, started)

    def answer() -> list[GoodRun]:
        good = get()
        replay_cache.good_known[key] = good  # a child's, kept here
        cached = cache_file(key)
        if cached is not None and not cached.exists():  # started ahead for another folder
            write_good(cached, good)
        return good

    return answer


def normal_nights_aside(kind: NightKind, exercise: Exercise, team_exercise: Exercise,
                         team_world: Path, folder: Path, until: int, renumber: str,
                         probes: tuple[Probe, ...], fork: bool, started: list[Aside[Any]],
                         ) -> Callable[[], Nights]:
    """The normal night on the original world and on the team's (`team_world`, built as the
    race's is, with the same `renumber`), each played aside (`_aside`) while the race plays:
    the good writes refused, and the team's alerts run again on the team's normal night at
    their minutes. The same nights asked for again (the same exercise, statements and world:
    ctrl+r twice) are not played again."""
    key = json.dumps([kind.__module__, kind.__qualname__, exercise_digest(exercise),
                      exercise_digest(team_exercise), _file_digest(team_world), until,
                      renumber, probes])
    known = _nights_known.get(key)
    if known is not None:
        remove_world(team_world)
        return lambda: known
    goods = _good_writes_aside(kind, exercise, folder, until, renumber, fork, started)

    def play(scratch: Path) -> TeamNight:
        world = scratch / "normal-team.db"  # a copy: the team's world stays as it was
        shutil.copyfile(team_world, world)
        return _team_night(kind, team_exercise, world, scratch, until, probes, which)

    which = "the variant's normal night" if renumber.strip() else "the normal night"
    night = _aside(play, folder / "normal-nights", fork, started) if fork else (
        lambda: _team_night(kind, team_exercise, team_world, folder, until, probes, which))
    start = team_exercise.clock.start

    def answer() -> Nights:
        good = goods()
        outcomes, checks, harmed = night()
        remove_world(team_world)
        nights = (blocked_writes(good, outcomes, lambda minute: clock_time(start, minute)), checks,
                  harmed)
        _nights_known[key] = nights
        while len(_nights_known) > _MEMO_SIZE:
            _nights_known.popitem(last=False)
        return nights

    return answer


def _world_bytes(world: Path) -> int:
    wal = world.with_name(world.name + "-wal")
    return world.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _good_writes(kind: NightKind, exercise: Exercise, folder: Path, until: int,
                 renumber: str) -> list[GoodRun]:
    """The good writes of the normal night on the original world: it is the same every time
    for the same exercise, seed and code, so it is played once and kept (in this process, and
    in raceday's cache folder, named by a digest of all three)."""
    key = _good_key(kind, exercise, until, renumber)
    good = _good_cached(key)
    if good is not None:
        return good
    pristine = folder / "normal-pristine.db"
    create_world_file(pristine, exercise.world_sql, exercise.roles).close()
    if renumber.strip():
        original_world = folder / "normal-original.db"
        build_replay_world(pristine, exercise.world_sql, original_world, renumber)
    else:
        original_world = pristine
    original = play_night(kind, without_delayed(exercise), original_world,
                     folder / "normal-original", until, judge_world=False)
    good = good_runs(original)
    for world in (pristine, original_world):  # never read again
        remove_world(world)
    cached = cache_file(key)
    if cached is not None:
        write_good(cached, good)
    replay_cache.good_known[key] = good
    return good


def _good_key(kind: NightKind, exercise: Exercise, until: int, renumber: str) -> str:
    return normal_night_key(kind, without_delayed(exercise), until, renumber, "sqlite")


def _good_cached(key: str) -> list[GoodRun] | None:
    """The good writes named `key` (`_good_key`) already known in this process or kept in the
    cache folder, or None."""
    good = replay_cache.good_known.get(key)
    if good is None:
        cached = cache_file(key)
        good = read_good(cached) if cached is not None else None
        if good is not None:
            replay_cache.good_known[key] = good
    return good


def copy_world(built: Path, path: Path) -> None:
    """A second copy of a freshly built replay world (closed: all of it in the one file)."""
    shutil.copyfile(built, path)


_ahead: dict[str, Callable[[], list[GoodRun]]] = {}
"""Good writes of the original world's normal nights being played in a forked child since a
session opened (`prepare_ahead`), by `_good_key`: the first replay (or `prepare`) that needs
one takes that child's answer instead of playing the night again."""
_ahead_started: list[Aside[Any] | Chain[Any]] = []
_ahead_begun: dict[str, Callable[[], bool]] = {}
"""By the key of a night in `_ahead` or `_baselines_pending`: take it over from the child if
it has not begun it (True: the caller plays it, the child skips it)."""


def _take_over(key: str) -> bool:
    begun = _ahead_begun.pop(key, None)
    return begun is not None and begun()
_ahead_folders: list[Path] = []
"""The scratch folders of the children not taken yet (a child stopped half-way leaves its)."""


def _wanted(session: Night) -> list[tuple[Exercise, str]]:
    """The original nights every replay needs: tonight's, and the variant's (with its seed)
    when the exercise has one."""
    exercise, shift = session.exercise, session.variant
    return [(exercise, "")] + ([(variant_of(exercise, shift), shift.seed)]
                               if shift is not None else [])


def _preparable(session: Night, *, any_size: bool = False) -> bool:
    """A replay of this session plays the original world's normal nights, and they are small
    enough to be played ahead of it on the TUI's runner (a large world's would hold up the
    players' first statements), or `any_size`: played in a forked child, which holds up
    nobody's statements."""
    exercise, world = session.exercise, session.store.world_file
    return (exercise.replay is not None and bool(exercise.replay.delayed)
            and world is not None and (any_size or _world_bytes(world) <= _PREPARE_BYTES))


def prepare_ahead(session: Night) -> None:
    """Start what `prepare` does, and the baselines every final replay needs, in one forked
    child (`_ahead_chain`) and return at once: a headless run's script plays meanwhile, as
    the TUI's players read the screen, and its replay (the final one, at least) takes the
    answers over. Nothing is started when no child can be forked (the replay plays the
    nights when it needs them), or when the answers are known. Never fails: whatever goes
    wrong here, the replay meets again and reports. On PostgreSQL the nights are played in
    a background thread instead (`prepare_ahead_postgres`)."""
    if session.store.world_file is None:  # on a server: played in a thread
        try:
            prepare_ahead_postgres(session)
        except Exception:  # the replay plays them itself, and says what fails
            _log.info("the replay's nights could not be started ahead", exc_info=True)
        return
    if not can_fork():
        return
    try:
        if not _preparable(session, any_size=True):
            return
        with collector.paused():  # the child plays with the collector held off
            _ahead_chain(type(session), session, replay_until(session))
    except Exception:  # the replay plays it itself, and says what fails
        _log.info("the replay's original nights could not be started ahead", exc_info=True)


def _ahead_chain(kind: NightKind, session: Night, until: int) -> None:
    """The original nights not known yet, played one after another in one child (`Chain`),
    in the order replays need them: tonight's race and normal night on the exercise's own
    world, then the practice nights' baselines (every final replay needs all of these;
    tonight's are known after the first session). The variant's race and normal night are
    needed only when tonight's race had a step prevented or a harm kept away, which a team
    that changed neither its schema nor a statement cannot have: they are played in a child
    of their own, at the lowest priority, once a player first changes one
    (`race_changes.on_first_change`). A replay that needs a night a child has not begun
    plays it itself (`Chain.take_over`), beside the child, rather than wait."""
    exercise, shift = session.exercise, session.variant
    tonight, *variant = _wanted(session)
    practice = exercise.replay.practice if exercise.replay is not None else ()
    _chain(kind, until, [tonight],
           [(practice_baseline(exercise, night, shift),
             practice_baseline_seed(exercise, shift)) for night in practice])
    if variant:
        on_first_change(session, lambda: _later_chain(kind, until, variant))


def _later_chain(kind: NightKind, until: int, nights: list[tuple[Exercise, str]]) -> None:
    with collector.paused():  # the child plays with the collector held off
        _chain(kind, until, nights, [], perhaps=True)


def _chain(kind: NightKind, until: int, nights: list[tuple[Exercise, str]],
           baselines: list[tuple[Exercise, str]], *, perhaps: bool = False) -> None:
    """One child playing each of `nights` (its race's baseline, then its normal night), then
    each of `baselines` (the race's only), those not known yet; `perhaps`: at the lowest
    priority (only perhaps needed: they take only a core nothing else wants)."""
    calls: list[Callable[[], Any]] = []
    takers: list[Callable[[int], None]] = []
    folders: list[Path] = []

    def good(normal: Exercise, renumber: str) -> None:
        key = _good_key(kind, normal, until, renumber)
        if key in _ahead or _good_cached(key) is not None:
            return
        # made and removed by the child (a parent killed at once leaves none), or at exit
        folder = Path(tempfile.gettempdir()) / f"raceday-prepare-{secrets.token_hex(8)}"
        folders.append(folder)

        def play() -> list[GoodRun]:
            folder.mkdir(mode=0o700)  # the nights' worlds: this user's only
            try:
                return _good_writes(kind, normal, folder, until, renumber)
            finally:
                shutil.rmtree(folder, ignore_errors=True)

        def take(index: int) -> None:
            def answer() -> list[GoodRun]:
                if folder in _ahead_folders:
                    _ahead_folders.remove(folder)
                got = None if chain.take_over(index) else chain.child_answer(index)
                if got is not None:
                    return cast("list[GoodRun]", got[0])
                shutil.rmtree(folder, ignore_errors=True)  # the child stopped half-way
                with tempfile.TemporaryDirectory(prefix="raceday-replay-") as scratch:
                    return _good_writes(kind, normal, Path(scratch), until, renumber)

            def take_over() -> bool:
                if not chain.take_over(index):
                    return False
                if folder in _ahead_folders:  # the child will never make it
                    _ahead_folders.remove(folder)
                return True

            _ahead[key] = answer
            _ahead_begun[key] = take_over

        calls.append(play)
        takers.append(take)

    def baseline(ex: Exercise, renumber: str) -> None:
        key = replay_cache.baseline_key(kind, ex, until, renumber, "sqlite")
        if key in _baselines_pending or replay_cache.baseline_cached(key) is not None:
            return

        def take(index: int) -> None:
            def answer() -> Harms | None:
                got = None if chain.take_over(index) else chain.child_answer(index)
                return None if got is None else cast(Harms, got[0])

            _baselines_pending[key] = answer
            _ahead_begun[key] = lambda: chain.take_over(index)

        calls.append(lambda: _baseline(kind, ex, until, renumber))
        takers.append(take)

    for normal, renumber in nights:
        baseline(normal, renumber)
        good(normal, renumber)
    for own, renumber in baselines:
        baseline(own, renumber)
    _ahead_folders.extend(folders)  # before the child can make them
    chain: Chain[Any] = Chain(calls, perhaps_from=0 if perhaps else None)
    if not chain.forked:
        for folder in folders:
            _ahead_folders.remove(folder)
        return
    _ahead_started.append(chain)
    for index, take in enumerate(takers):
        take(index)


def discard_ahead() -> None:
    """Stop the children `prepare_ahead` started whose answers nobody took, and remove their
    folders (at exit; and between tests, each of which starts from nothing)."""
    _ahead.clear()
    _baselines_pending.clear()
    _ahead_begun.clear()
    AHEAD.stop()
    for aside in list(_ahead_started):
        aside.discard()
    _ahead_started.clear()
    for folder in _ahead_folders:
        shutil.rmtree(folder, ignore_errors=True)
    _ahead_folders.clear()


atexit.register(discard_ahead)


def prepare(session: Night) -> None:
    """Do ahead what every replay of `session` needs whatever the team does: raceday's code
    digest, and the good writes of the normal nights of the original world (tonight's, and
    the shifted race's when there is one), read from the cache folder or played now, side by
    side (`_aside`). The TUI asks for it once the session is open, while the players read the
    screen, so the first ctrl+r does not wait for it. (Nothing is done for a large world,
    whose normal night would hold up the players' first statements.) Never fails: whatever
    goes wrong here, the replay meets again and reports. On PostgreSQL there is nothing
    more to do: `prepare_ahead`, which the TUI calls first, started every night in a thread."""
    if session.store.world_file is None:
        return
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


def _prepare(session: Night, started: list[Aside[Any]]) -> None:
    """The good writes not known yet nor being played ahead (`prepare_ahead`: the replay
    takes those; waiting for them here would hold up the players' first statements)."""
    kind, until = type(session), replay_until(session)
    with tempfile.TemporaryDirectory(prefix="raceday-replay-") as scratch:
        goods = [_good_writes_aside(kind, normal, Path(scratch), until, renumber, True, started)
                 for normal, renumber in _wanted(session)
                 if _good_key(kind, normal, until, renumber) not in _ahead]
        for good in goods:
            good()


def replay_race(session: Night, probes: tuple[Probe, ...] = (), *,
                keep_world: bool = True, reveal: bool = False) -> ReplayResult:
    """Replay the race on a copy of the team's world; the live world is not touched.

    `probes` (minute, name, role, sql): the team's alerts on the fault and the looks behind
    its diagnoses, run again on the team's normal night at the same minutes (the result's
    `monitor_checks`). Only the race's world is kept (for the replay walk), and only until
    the next replay; `keep_world=False` (the final replay, never walked) keeps none. One
    replay (`replay_forked.replay_over`) over the nights of the world's database: a world
    in a file (`Store.world_file`) forks as a file, the rest on their server."""
    with collector.paused():
        nights: ReplayNights = FileNights(session) if session.store.world_file is not None \
            else ServerNights(session)
        return replay_over(nights, session, probes, keep_world=keep_world, reveal=reveal)


class FileNights:
    """The nights of a replay of a world in a file: each on a copy of the file built as the
    race's is (`build_replay_world`), played in a forked child beside the race (`_aside`)
    when the world is small enough (`_FORK_BYTES`), the races here."""

    db = "sqlite"

    def __init__(self, session: Night) -> None:
        self.session = session
        self.started: list[Aside[Any]] = []  # children whose answer is not asked for yet
        self.built: dict[str, Path] = {}  # by renumbering: the race's worlds, as built
        self.fork = False
        self.live = self.race_world = Path()
        self.built_warnings: list[str] = []
        self.race_digest = ""

    def clear_earlier(self, root: Path) -> None:
        remove_earlier_worlds(root)

    def open(self, folder: Path) -> None:
        self.live = folder / "team-now.db"
        self.session.store.backup_to(self.live)
        self.race_world = self.built[""] = folder / "race.db"
        self.built_warnings = build_replay_world(self.live, self.session.exercise.world_sql,
                                                 self.race_world)
        self.fork = _world_bytes(self.race_world) <= _FORK_BYTES  # the nights beside the race

    def same_as_own(self, exercise: Exercise, team_exercise: Exercise) -> bool:
        # the practice nights' worlds are built as the race's is: the same as it, now
        return world_fingerprint(self.race_world) == _own_world(exercise)

    def race(self, kind: NightKind, team_exercise: Exercise, folder: Path,
             until: int) -> Callable[[], Night]:
        def play() -> Night:
            race = play_night(kind, team_exercise, self.race_world, folder, until)
            _keep_race(folder, race.events)
            return race
        return play

    def warnings(self) -> list[str]:
        return self.built_warnings

    def normal(self, kind: NightKind, exercise: Exercise, team_exercise: Exercise,
               folder: Path, until: int, renumber: str, probes: tuple[Probe, ...],
               ) -> Callable[[], Nights]:
        # the team's normal night starts from the race's world: built once, copied
        copy_world(self.built[renumber], folder / "normal-team.db")
        return normal_nights_aside(kind, exercise, team_exercise, folder / "normal-team.db",
                                   folder, until, renumber, probes, self.fork, self.started)

    def baseline(self, kind: NightKind, exercise: Exercise, folder: Path, until: int,
                 renumber: str) -> Callable[[], Harms]:
        return lambda: _baseline(kind, exercise, until, renumber)

    def practice_baseline(self, kind: NightKind, exercise: Exercise, folder: Path,
                          until: int, renumber: str) -> Callable[[], Harms]:
        return _baseline_aside(kind, exercise, until, renumber,
                               folder.with_name(folder.name + "-own"), self.fork, self.started)

    def practice_night(self, kind: NightKind, own: Exercise, team: Exercise, folder: Path,
                       until: int, renumber: str) -> Callable[[], HarmTimes]:
        if not self.race_digest:  # the race's world as built (the race not played yet)
            self.race_digest = _file_digest(self.race_world)
        return _practice_night_aside(kind, own, team, self.live, self.race_digest, folder,
                                     until, renumber, self.fork, self.started)

    def shifted(self, kind: NightKind, team_exercise: Exercise, folder: Path, until: int,
                renumber: str) -> Callable[[], Night]:
        world = self.built[renumber] = folder / "race.db"
        build_replay_world(self.live, self.session.exercise.world_sql, world, renumber)

        def play() -> Night:
            shifted = play_night(kind, team_exercise, world, folder / "race", until,
                                 transcript=False)  # nobody reads it: merged
            remove_world(world)
            return shifted
        return play

    def close(self, *, keep_world: bool, played: bool) -> None:
        for aside in self.started:  # the replay failed before it asked for these answers
            aside.discard()
        if played:
            remove_world(self.live)
            if not keep_world:
                remove_world(self.race_world)
