"""A night the replay plays: the session's timeline with every role automated, on a world
of its own. `Night` is what the replay reads of a played session; `NightKind` builds one
(the session's own class): the replay never imports the session, which calls it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise, ShiftSpec
from raceday.judge.facts import Facts
from raceday.judge.harms import HarmClock
from raceday.store.base import StoreError
from raceday.store.protocol import Store
from raceday.transcript import events as ev
from raceday.transcript.log import EventLog

Probe = tuple[int, str, str, str]
E = TypeVar("E", bound=ev.Event)


class Night(Protocol):
    """What the replay reads and sets of a session it plays (the session is one)."""

    exercise: Exercise
    store: Store
    log: EventLog
    events: list[ev.Event]
    facts: Facts
    harm_clock: HarmClock
    statement_sql: dict[str, str]
    variant: ShiftSpec | None
    judge_world: bool
    track_harms: bool
    probes: list[Probe]
    probe_results: list[ev.MonitorCheck]

    def __init__(self, exercise: Exercise, store: Store, log: EventLog,
                 players: Sequence[str], pace: Pace = Pace.TURNS) -> None: ...

    @property
    def folder(self) -> Path: ...

    @property
    def end_minute(self) -> int: ...

    def time_of(self, minute: int) -> str: ...

    def start(self) -> ev.Event: ...

    def advance_to(self, minute: int) -> None: ...

    def subscribe(self, listener: Callable[[ev.Event], None]) -> None: ...


NightKind = type[Night]
"""The class a replay plays its nights with: the session's own."""


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


def play_on(kind: NightKind, exercise: Exercise, store: Store, folder: Path, until: int,
             *, judge_world: bool = True, probes: tuple[Probe, ...] = (),
             transcript: bool = True, track_harms: bool = False) -> Night:
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
    if store.closed:  # under it (exit stops a night played ahead): the rest never ran
        log.close()
        raise StoreError("the world was closed before its night was played to the end")
    session.store.close()
    session.log.close()
    return session


def replay_until(session: Night) -> int:
    replay = session.exercise.replay
    return replay.until if replay is not None and replay.until is not None \
        else session.end_minute
