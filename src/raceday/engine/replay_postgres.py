"""The replay when the session's world is a schema on a PostgreSQL server: the same nights,
each on a schema forked on the same server (`ServerWorld.fork`: the team's schema, the seed
rows) and dropped once played; only the race's world is kept for the replay walk, until the
next replay (or the final one, which keeps none). Nothing here runs on SQLite."""

from __future__ import annotations

import atexit
import logging
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

from raceday.engine import replay_cache
from raceday.engine.ahead_thread import AHEAD
from raceday.engine.night import Night, NightKind, Probe, play_on, replay_until
from raceday.engine.race_changes import on_first_change
from raceday.engine.replay_cache import (
    cache_file,
    normal_night_key,
    read_good,
    write_good,
)
from raceday.engine.replay_exercises import (
    practice_baseline,
    practice_baseline_seed,
    variant_of,
    without_delayed,
)
from raceday.engine.replay_outcomes import (
    GoodRun,
    Harms,
    HarmTimes,
    Nights,
    blocked_writes,
    good_runs,
    harm_times,
    harms_of,
    normal_night_harms,
    run_outcomes,
)
from raceday.exercise.model import Exercise
from raceday.store.protocol import ServerWorld, Store, WorldSource

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor


_PG_NIGHTS = 3
"""Nights of one replay played at once on PostgreSQL (the race and the two normal nights)."""
KEPT_NOTE = "race.postgres"
_kept_pg: dict[Path, ServerWorld] = {}
"""The race world of the newest replay of each PostgreSQL session (by its replay folder),
closed, kept for the walk (`kept_race_world`)."""


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


def _drop_quietly(world: ServerWorld) -> None:
    """Drop a replay world; a failure (the server gone) is logged, and the next world is
    still dropped, and what made the replay fail is what it reports."""
    try:
        world.drop()
    except Exception:
        _log.warning("the replay world rd_%s_* could not be dropped", world.session,
                     exc_info=True)


def _keep(folder: Path, world: ServerWorld) -> None:
    if not _kept_pg:
        atexit.unregister(_drop_every_kept_world)
        atexit.register(_drop_every_kept_world)
    _kept_pg[folder.resolve()] = world
    # for people: which schema on the server this replay's world is, until the next replay
    (folder / KEPT_NOTE).write_text(f"{world.session}\n", encoding="utf-8")


def _fork(live: ServerWorld, source: WorldSource | None, made: list[ServerWorld],
          seed_sql: str, renumber: str = "") -> tuple[ServerWorld, list[str]]:
    world, warnings = live.fork(seed_sql, renumber, source)
    made.append(world)
    return world, warnings


def _forked_night(kind: NightKind, exercise: Exercise, live: ServerWorld,
                  source: WorldSource, made: list[ServerWorld], seed_sql: str, folder: Path,
                  until: int, renumber: str = "", *, judge_world: bool = True,
                  probes: tuple[Probe, ...] = (), track_harms: bool = False) -> Night:
    """A night on a world forked from the session's (in a worker of the replay's pool: the
    fork is a few hundred statements on a connection of its own, beside the other nights)."""
    world, _ = _fork(live, source, made, seed_sql, renumber)
    night = _played_pg(kind, exercise, world, folder, until, judge_world=judge_world,
                       probes=probes, track_harms=track_harms)
    _done_with(made, world)
    return night


def _race_on(forking: Future[tuple[ServerWorld, list[str]]], kind: NightKind,
             exercise: Exercise, folder: Path, until: int) -> Night:
    """The race on the world `forking` makes (submitted to the same pool before this)."""
    return _played_pg(kind, exercise, forking.result()[0], folder, until)


def _done_with(made: list[ServerWorld], *worlds: ServerWorld) -> None:
    """Drop worlds whose night is played, in the worker that played it: the schemas go while
    other nights still play, not one after another once the replay is over. (A world whose
    night failed stays in `made`: the replay drops it at the end.)"""
    for world in worlds:
        _drop_quietly(world)
        made.remove(world)


def _played_pg(kind: NightKind, exercise: Exercise, world: ServerWorld, folder: Path,
               until: int, *, judge_world: bool = True, probes: tuple[Probe, ...] = (),
               track_harms: bool = False) -> Night:
    folder.mkdir(parents=True)
    return play_on(kind, exercise, world, folder, until, judge_world=judge_world,
                    probes=probes, track_harms=track_harms)


def _good_writes_pg(kind: NightKind, exercise: Exercise, live: ServerWorld, folder: Path,
                    until: int, renumber: str, made: list[ServerWorld],
                    *, ahead: bool = True) -> list[GoodRun]:
    """`_good_writes` on PostgreSQL: the normal night on a fresh world of the exercise's own
    (renumbered for the shifted race), kept under a key of its own (`postgresql`); played
    since the session opened (`prepare_ahead_postgres`) or now (`ahead` False: the night
    played ahead itself)."""
    normal = without_delayed(exercise)
    key = normal_night_key(kind, normal, until, renumber, "postgresql")
    if key in replay_cache.good_known:
        return replay_cache.good_known[key]
    cached = cache_file(key)
    good = read_good(cached) if cached is not None else None
    if good is None and ahead:
        played, answer = AHEAD.take(key)
        good = cast("list[GoodRun]", answer) if played else None
    if good is None:
        pristine = live.new_world(exercise.world_sql, exercise.roles)
        made.append(pristine)
        world = _fork(pristine, None, made, exercise.world_sql, renumber)[0] if renumber.strip() \
            else pristine
        original = _played_pg(kind, normal, world, folder / "normal-original", until,
                              judge_world=False)
        _done_with(made, *dict.fromkeys((world, pristine)))
        good = good_runs(original)
        if cached is not None:
            write_good(cached, good)
    replay_cache.good_known[key] = good
    return good


def _normal_nights_pg(kind: NightKind, exercise: Exercise, team_exercise: Exercise,
                      live: ServerWorld, source: WorldSource, folder: Path, until: int,
                      renumber: str, made: list[ServerWorld], pool: ThreadPoolExecutor,
                      probes: tuple[Probe, ...] = (),
                      ) -> Callable[[], Nights]:
    """`_normal_nights` on PostgreSQL, the two nights played in `pool`: call what it returns
    for the good writes refused and the probes' results, once both nights are over."""
    good = pool.submit(_good_writes_pg, kind, exercise, live, folder, until, renumber, made)
    team = pool.submit(_forked_night, kind, without_delayed(team_exercise), live, source, made,
                       exercise.world_sql, folder / "normal-team",
                       max([until, *(p[0] for p in probes)]), renumber,
                       judge_world=False, probes=probes, track_harms=True)
    which = "the variant's normal night" if renumber.strip() else "the normal night"

    def compared() -> Nights:
        night = team.result()
        return (blocked_writes(good.result(), run_outcomes(night), night.time_of),
                tuple(night.probe_results), normal_night_harms(night, until, which))

    return compared


def _baseline_pg(kind: NightKind, exercise: Exercise, live: ServerWorld, folder: Path,
                 until: int, renumber: str, made: list[ServerWorld],
                 ) -> dict[str, tuple[int, int | None]]:
    """`_baseline` on PostgreSQL: the race on a fresh world of the exercise's own (played
    since the session opened, `prepare_ahead_postgres`, or now)."""
    key = replay_cache.baseline_key(kind, exercise, until, renumber, "postgresql")
    known = replay_cache.baseline_cached(key)
    if known is not None:
        return known
    played, ahead = AHEAD.take(key)
    if played:
        replay_cache.remember_baseline(key, ahead)
        return cast("dict[str, tuple[int, int | None]]", ahead)
    return _play_baseline_pg(kind, exercise, live, folder, until, renumber, made)


def _play_baseline_pg(kind: NightKind, exercise: Exercise, live: ServerWorld, folder: Path,
                      until: int, renumber: str, made: list[ServerWorld],
                      ) -> dict[str, tuple[int, int | None]]:
    key = replay_cache.baseline_key(kind, exercise, until, renumber, "postgresql")
    pristine = live.new_world(exercise.world_sql, exercise.roles)
    made.append(pristine)
    world = _fork(pristine, None, made, exercise.world_sql, renumber)[0] if renumber.strip() \
        else pristine
    race = _played_pg(kind, exercise, world, folder, until)
    _done_with(made, *dict.fromkeys((world, pristine)))
    known = harms_of(exercise, race, until)
    replay_cache.keep_baseline(key, known)
    return known


def schema_digest(source: WorldSource) -> str:
    """What a world forked from `source` is built of, whichever session it is
    (`WorldSource.digest`: the schema's definitions without the session's prefix, its
    original tables, its owner roles): two sources with one digest fork into the same world."""
    return source.digest()


def _own_schema(exercise: Exercise, live: ServerWorld, made: list[ServerWorld]) -> str:
    """`schema_digest` of a world built from the exercise's own SQL, kept in the cache; ''
    when that world has a sequence: a fork sets each one past its table's rows, where the
    built world (a baseline's) leaves it where the SQL did, so the two may not play alike."""
    pristine = live.new_world(exercise.world_sql, exercise.roles)
    made.append(pristine)
    source = pristine.fork_source()
    _done_with(made, pristine)
    digest = "" if "SEQUENCE" in source.pre.upper() else schema_digest(source)
    replay_cache.keep_world(replay_cache.world_key(exercise, "postgresql"), digest)
    return digest


def _same_as_own(exercise: Exercise, team_exercise: Exercise, live: ServerWorld,
                 source: WorldSource, made: list[ServerWorld]) -> bool:
    """The team's world forks into the exercise's own (`schema_digest`) and its statements
    are the exercise's: its practice nights are their baselines, and its race night the
    exercise's own (`own_race`). The own world's digest is
    known (the cache), or made since the session opened (`prepare_ahead_postgres`), or now."""
    if team_exercise.statements != exercise.statements:
        return False
    key = replay_cache.world_key(exercise, "postgresql")
    own = replay_cache.world_cached(key)
    if own is None:
        played, answer = AHEAD.take(key)
        try:
            own = str(answer) if played else _own_schema(exercise, live, made)
        except Exception:  # the nights are played: what fails there is what the replay says
            _log.info("the exercise's own world could not be read for its schema", exc_info=True)
            return False
    return bool(own) and own == schema_digest(source)


class ServerNights:
    """The nights of a replay of a world on a server (`replay_forked.ReplayNights`): each
    on a schema forked from the session's on the same server, played in this process's
    pool (`_PG_NIGHTS` at once: each mostly waits on the server), and dropped once played;
    the race's kept for the walk when asked, until the next replay."""

    db = "postgresql"

    def __init__(self, session: Night) -> None:
        from concurrent.futures import ThreadPoolExecutor  # the server's only: files fork

        self.session = session
        # its threads start with the first night submitted
        self.pool = ThreadPoolExecutor(max_workers=_PG_NIGHTS, thread_name_prefix="replay-night")
        self.live = cast(ServerWorld, session.store)
        self.made: list[ServerWorld] = []
        self.forking: Future[tuple[ServerWorld, list[str]]] | None = None
        self.race_world: ServerWorld | None = None
        self.folder = Path()

    def clear_earlier(self, root: Path) -> None:
        drop_kept_worlds(root)

    def open(self, folder: Path) -> None:
        self.folder = folder
        # the team's schema is read once (pg_dump) for every world of this replay
        self.source = self.live.fork_source()

    def same_as_own(self, exercise: Exercise, team_exercise: Exercise) -> bool:
        return _same_as_own(exercise, team_exercise, self.live, self.source, self.made)

    def race(self, kind: NightKind, team_exercise: Exercise, folder: Path,
             until: int) -> Callable[[], Night]:
        # the race's world is forked beside the normal nights' (each a few hundred
        # statements on a connection of its own), not before them
        self.forking = self.pool.submit(_fork, self.live, self.source, self.made,
                                        self.session.exercise.world_sql)
        return self.pool.submit(_race_on, self.forking, kind, team_exercise, folder,
                                until).result

    def warnings(self) -> list[str]:
        if self.forking is None:  # the race night is known and nobody walks it
            return []
        self.race_world, warnings = self.forking.result()
        return warnings

    def normal(self, kind: NightKind, exercise: Exercise, team_exercise: Exercise,
               folder: Path, until: int, renumber: str, probes: tuple[Probe, ...],
               ) -> Callable[[], Nights]:
        return _normal_nights_pg(kind, exercise, team_exercise, self.live, self.source, folder,
                                 until, renumber, self.made, self.pool, probes)

    def baseline(self, kind: NightKind, exercise: Exercise, folder: Path, until: int,
                 renumber: str) -> Callable[[], Harms]:
        if renumber.strip():  # the variant's: played here, beside the pool's nights
            known = _baseline_pg(kind, exercise, self.live, folder, until, renumber, self.made)
            return lambda: known
        return self.pool.submit(_baseline_pg, kind, exercise, self.live, folder, until,
                                renumber, self.made).result

    def practice_baseline(self, kind: NightKind, exercise: Exercise, folder: Path,
                          until: int, renumber: str) -> Callable[[], Harms]:
        return self.pool.submit(_baseline_pg, kind, exercise, self.live, folder / "baseline",
                                until, renumber, self.made).result

    def practice_night(self, kind: NightKind, own: Exercise, team: Exercise, folder: Path,
                       until: int, renumber: str) -> Callable[[], HarmTimes]:
        playing = self.pool.submit(_forked_night, kind, team, self.live, self.source,
                                   self.made, self.session.exercise.world_sql,
                                   folder / "race", until, renumber)
        return lambda: harm_times(own, playing.result(), until)

    def shifted(self, kind: NightKind, team_exercise: Exercise, folder: Path, until: int,
                renumber: str) -> Callable[[], Night]:
        return self.pool.submit(_forked_night, kind, team_exercise, self.live, self.source,
                                self.made, self.session.exercise.world_sql, folder / "race",
                                until, renumber).result

    def close(self, *, keep_world: bool, played: bool) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)  # no night still playing on a world
        if not keep_world:  # the final replay: what it did not take, nobody will
            AHEAD.forget(_ahead_keys.pop(self.session.folder.resolve(), []))
        for world in self.made:
            if world is self.race_world and keep_world and played:
                _keep(self.folder, world)
                continue
            _drop_quietly(world)


def prepare_ahead_postgres(session: Night) -> None:
    """Start what the final replay of `session` needs whatever the team does, and is not
    known yet, in the background thread (`ahead_thread`): the digest of the exercise's own
    world's schema (`_same_as_own`), the original world's baseline and
    normal night, each practice night's baseline (`practice_baseline`: on this session's
    variant, drawn for it and never in the cache folder, unless the exercise says they are
    the same on every one). The variant's own nights, needed only when tonight's race had
    a step prevented or a harm kept away, are started when the team first changes its
    schema or a statement (`race_changes`): a race the team did not change is the
    exercise's own, and prevents nothing."""
    exercise, shift = session.exercise, session.variant
    if exercise.replay is None:
        return
    live = cast(ServerWorld, session.store)
    kind, until = type(session), replay_until(session)
    delayed = bool(exercise.replay.delayed)
    nights: list[tuple[Exercise, str, bool]] = [(exercise, "", delayed)]
    nights += [(practice_baseline(exercise, night, shift),
                practice_baseline_seed(exercise, shift), False)
               for night in exercise.replay.practice]
    started = _ahead_keys.setdefault(session.folder.resolve(), [])
    own_schema = replay_cache.world_key(exercise, "postgresql")
    if replay_cache.world_cached(own_schema) is None:  # `_same_as_own`, at the end
        AHEAD.start(own_schema, lambda made: _own_schema(exercise, live, made))
        started.append(own_schema)
    _start_nights(kind, live, until, nights, started)
    if shift is not None:
        variant = [(variant_of(exercise, shift), shift.seed, delayed)]
        on_first_change(session, lambda: _start_nights(kind, live, until, variant, started))


def _start_nights(kind: NightKind, live: ServerWorld, until: int,
                  nights: list[tuple[Exercise, str, bool]], started: list[str]) -> None:
    """Each night's baseline (and its normal night, when asked) not known yet, queued on
    the background thread; their keys added to `started`."""
    for own, renumber, normal_too in nights:
        key = replay_cache.baseline_key(kind, own, until, renumber, "postgresql")
        if replay_cache.baseline_cached(key) is None:
            AHEAD.start(key, _baseline_ahead(kind, own, live, until, renumber))
            started.append(key)
        good = normal_night_key(kind, without_delayed(own), until, renumber, "postgresql")
        if normal_too and good not in replay_cache.good_known and (
                (cached := cache_file(good)) is None or read_good(cached) is None):
            AHEAD.start(good, _good_writes_ahead(kind, own, live, until, renumber))
            started.append(good)


_ahead_keys: dict[Path, list[str]] = {}
"""What `prepare_ahead_postgres` started for each session (by its folder): its final replay
forgets what it did not take (the variant's nights, when nothing was prevented)."""


def _baseline_ahead(kind: NightKind, exercise: Exercise, live: ServerWorld, until: int,
                    renumber: str) -> Callable[[list[ServerWorld]], Harms]:
    def job(made: list[ServerWorld]) -> Harms:
        with _scratch(made) as folder:
            return _play_baseline_pg(kind, exercise, live, folder / "baseline", until,
                                     renumber, made)
    return job


def _good_writes_ahead(kind: NightKind, exercise: Exercise, live: ServerWorld, until: int,
                       renumber: str) -> Callable[[list[ServerWorld]], list[GoodRun]]:
    def job(made: list[ServerWorld]) -> list[GoodRun]:
        with _scratch(made) as folder:
            return _good_writes_pg(kind, exercise, live, folder, until, renumber, made,
                                   ahead=False)
    return job


@contextmanager
def _scratch(made: list[ServerWorld]) -> Iterator[Path]:
    """A scratch folder for a night played ahead, removed after it, and every world the
    night made dropped, whatever happens."""
    try:
        with tempfile.TemporaryDirectory(prefix="raceday-ahead-") as scratch:
            yield Path(scratch)
    finally:
        for world in list(made):
            _drop_quietly(world)
