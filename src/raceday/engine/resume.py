"""Resume a session a crash or a kill cut short: `raceday resume DIR`.

The transcript is the session's memory. The session is rebuilt by playing it again: a fresh
world from the exercise, the clock run to each recorded action's minute, and every action a
person took (a submission, a monitor, a declaration, an edit, a hint, a wait, a note, the
facilitator's hand) done again through the same session methods. What the engine says in
reply (the automation, faults, alerts, tasks, the score's facts) is not read back but
produced again, and each event is checked against the recorded one at the same `seq`: the
clock, the automation's memory, monitors, hints and every fact the score rests on come back
as they were, and a transcript that does not play the same (the exercise changed since)
says where, in one line. A crash in the middle of a minute is completed: the events of that
minute the crash never wrote follow the last recorded one, numbered on, after which a
`session_resumed` event marks the seam.

The world.db the crash left is compared with the rebuilt one: the same, it is dropped; not
the same (a write the crash kept but never acknowledged, or SQL that is not deterministic),
it is kept as world-at-crash.db and the resume event says which tables differ.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raceday.engine.actions import (
    Declare,
    EditStatement,
    RemoveMonitor,
    RevealHint,
    SaveMonitor,
    Wait,
)
from raceday.engine.clock import Pace
from raceday.engine.session import HANDED, Session, SessionError
from raceday.engine.unknown_night import draw_night
from raceday.errors import RacedayError
from raceday.exercise.model import OWN_WORDS, Exercise
from raceday.logfile import log_to
from raceday.store import create_world_file
from raceday.store.world_digest import world_digest
from raceday.transcript import events as ev
from raceday.transcript.events import Event, to_record
from raceday.transcript.log import EVENTS_FILE, EventLog, read_events, repair_tail

WORLD = "world.db"
CRASHED_WORLD = "world-at-crash.db"

# Fields that say what an event is; a resumed event must agree on them. The rest (rows, timings,
# wording) may differ without the session's state differing, and is counted, not refused.
_IDENTITY = ("kind", "seq", "minute", "role", "sql", "task", "statement", "name", "id",
             "invariant", "finding", "step", "automated", "ok", "verdict", "outcome", "action")
_VOLATILE = ("wall_time", "elapsed_ms", "folder")


class ResumeError(RacedayError):
    """A session that cannot be resumed, and why (one line)."""


@dataclass(frozen=True)
class Unfinished:
    """A session folder whose transcript has no score: it was cut short."""

    folder: Path
    exercise: str
    title: str
    clock: str
    events: int


@dataclass(frozen=True)
class Resumed:
    """A session rebuilt and ready to go on; `finished` when it was ending and is now over."""

    session: Session
    note: str
    finished: bool


def unfinished_sessions(root: Path) -> list[Unfinished]:
    """Session folders under `root` that a crash or a kill left without a score, newest first.

    Reads only each transcript's first and last line, so a long list stays quick."""
    found: list[Unfinished] = []
    try:
        folders = sorted((p for p in root.iterdir() if (p / EVENTS_FILE).is_file()), reverse=True)
    except OSError:
        return []
    for folder in folders:
        first, last, count = _ends(folder / EVENTS_FILE)
        if not isinstance(first, dict) or first.get("kind") != "session_start":
            continue
        if isinstance(last, dict) and last.get("kind") == "score":
            continue
        if _in_use(folder):
            continue
        clock = str(last.get("sim_time", "")) if isinstance(last, dict) else ""
        found.append(Unfinished(folder, str(first.get("exercise", "")),
                                str(first.get("title", "")), clock, count))
    return found


def _ends(path: Path) -> tuple[Any, Any, int]:
    """The first and last whole JSON lines of a log (None when unreadable) and its line count."""
    try:
        with path.open("rb") as f:
            head = f.readline()
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            tail = f.read().splitlines()
            f.seek(0)
            count = sum(1 for _ in f)
    except OSError:
        return None, None, 0
    last = None
    for line in reversed(tail):
        try:
            last = json.loads(line)
            break
        except ValueError:
            continue
    try:
        first = json.loads(head)
    except ValueError:
        first = None
    return first, last, count


def _in_use(folder: Path) -> bool:
    """Is a live raceday writing this session (it holds the log's lock)?"""
    try:
        fd = os.open(folder / EVENTS_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:  # held by a live session (a filesystem without locks: say no)
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # closing releases the lock taken here
    return False


@contextmanager
def resuming(folder: Path) -> Iterator[None]:
    """Hold the session's folder while it is resumed: two `raceday resume` of one session
    started together each set the crash's world aside and built one in its place, so both
    failed ("disk image is malformed") and world.db was deleted. The second is refused in
    one line; the lock goes with the process however it ends (flock)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield  # no such folder: check_resumable says so
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:  # a filesystem without locks: go on unlocked
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ResumeError(BEING_RESUMED.format(folder=folder)) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


BEING_RESUMED = ("{folder}: this session is already being resumed (another raceday resume "
                 "has it); wait for that one to finish")


def exercise_of(folder: Path) -> str:
    """The exercise id a session folder was played with (to load it before resuming)."""
    path = folder / EVENTS_FILE
    if not path.is_file():
        raise ResumeError(f"{folder}: not a session folder (no {EVENTS_FILE})")
    first, _last, _count = _ends(path)
    if not isinstance(first, dict) or first.get("kind") != "session_start":
        raise ResumeError(f"{path}:1: not a session's transcript (no session_start first)")
    return str(first.get("exercise", ""))


def check_resumable(folder: Path) -> str:
    """Can the session in `folder` be resumed? Its exercise id, or ResumeError saying why not
    (a TranscriptError names a damaged line)."""
    folder = Path(folder)
    path = folder / EVENTS_FILE
    if not path.is_file():
        raise ResumeError(f"{folder}: not a session folder (no {EVENTS_FILE})")
    if _in_use(folder):
        raise ResumeError(f"{folder}: this session is still running (another raceday has it "
                          "open); end that one first")
    readback = read_events(folder)
    start = readback.start
    if start is None:
        raise ResumeError(f"{path}:1: not a session's transcript (no session_start first)")
    score = next((e for e in readback.events if isinstance(e, ev.ScoreEvent)), None)
    if score is not None:
        raise ResumeError(f"{folder}: this session is finished (scored {score.score.total}/"
                          f"{score.score.max} at {score.sim_time}); there is nothing to resume")
    return start.exercise


class _ResumingLog(EventLog):
    """The session's log while it is played again: the first events are checked against the
    recorded ones (and the recorded ones given back); the ones after are held until the
    resume is known to work, then written."""

    def __init__(self, folder: Path, recorded: Sequence[Event],
                 caught_up: Callable[[], None]) -> None:
        super().__init__(folder, seq=len(recorded))
        self.caught_up = caught_up  # called once the last recorded event has come back
        self.recorded = recorded
        self.position = 0
        self.differences = 0
        self.held: list[Event] = []
        self.holding = True
        self.ending = False  # played again to its end: nothing is held past the recorded

    def append(self, event: Any) -> Any:
        if self.position < len(self.recorded):
            old = self.recorded[self.position]
            self.position += 1
            mine = to_record(event)
            theirs = to_record(old)
            mine["seq"] = self.position
            for key in _IDENTITY:
                if mine.get(key) != theirs.get(key):
                    raise ResumeError(
                        f"{self.path}:{self.position}: the session does not play the same again "
                        f"(recorded {_say(theirs)}, played again {_say(mine)}); the exercise "
                        "changed since, or its SQL is not deterministic")
            if {k: v for k, v in mine.items() if k not in _VOLATILE} != \
                    {k: v for k, v in theirs.items() if k not in _VOLATILE}:
                self.differences += 1
            if self.position == len(self.recorded):
                self.caught_up()
                if self.ending:  # what the night plays from here is written as it comes
                    self.holding = False
            return old
        if self.holding:
            numbered = _numbered(event, self.recorded, self.held)
            self.held.append(numbered)
            return numbered
        return super().append(event)

    def commit(self) -> None:
        """Write the held events (the rest of the minute the crash cut) and write on from here."""
        self.holding = False
        held, self.held = self.held, []
        for event in held:
            super().append(event)


def _numbered(event: Event, recorded: Sequence[Event], held: Sequence[Event]) -> Event:
    from dataclasses import replace
    from datetime import UTC, datetime

    wall = event.wall_time or datetime.now(UTC).isoformat(timespec="milliseconds")
    return replace(event, seq=len(recorded) + len(held) + 1, wall_time=wall)


def _say(record: dict[str, Any]) -> str:
    bits = [str(record.get("kind")), f"at minute {record.get('minute')}"]
    for key in ("role", "task", "name", "id", "sql"):
        if record.get(key):
            text = str(record[key]).replace("\n", " ")
            bits.append(f"{key} {text[:60]!r}")
            break
    return " ".join(bits)


def resume_session(folder: Path, exercise: Exercise, *, time_limit_s: float = 2.0) -> Resumed:
    """Rebuild the session in `folder` and give it back, ready to go on (module docstring);
    one resume at a time (`resuming`), and once it is back its transcript's lock keeps
    another away (the session is running)."""
    folder = Path(folder)
    with resuming(folder):
        return _resume_session(folder, exercise, time_limit_s)


def _resume_session(folder: Path, exercise: Exercise, time_limit_s: float) -> Resumed:
    path = folder / EVENTS_FILE
    played = check_resumable(folder)
    if played != exercise.id:
        raise ResumeError(f"{path}:1: this session played {played!r}, not {exercise.id!r}")
    readback = read_events(folder)
    start = readback.start
    assert start is not None  # checked above
    recorded = readback.events
    notes: list[str] = []
    torn = repair_tail(folder)
    if torn:
        notes.append(torn)
    log_to(folder)
    crashed = _set_aside(folder)
    try:
        store = create_world_file(folder / WORLD, exercise.world_sql, exercise.roles,
                                  time_limit_s=time_limit_s)
    except BaseException:
        _put_back(folder, crashed)
        raise
    log: _ResumingLog | None = None
    rebuilt: list[dict[str, str] | str] = []

    def caught_up() -> None:  # the world as the last recorded event left it
        try:
            rebuilt.append(world_digest(folder / WORLD))
        except OSError as exc:
            rebuilt.append(str(exc))

    try:
        log = _ResumingLog(folder, recorded, caught_up)
        night = draw_night(exercise, start.unknown) if start.unknown is not None else None
        session = Session(exercise, store, log, start.players, Pace(start.pace), night)
        ending = _play_again(session, log, recorded)
        if ending:  # it stopped while the night played itself out: that is played again
            log.ending = True
            session.end()  # (checked against what was recorded), then scored
    except BaseException as exc:
        store.close()
        if log is not None:
            log.close()
        (folder / WORLD).unlink(missing_ok=True)
        _put_back(folder, crashed)
        if isinstance(exc, (SessionError, ValueError, KeyError)):
            raise ResumeError(f"{path}: cannot be played again ({exc})") from exc
        raise
    log.commit()
    notes.append(_compare_worlds(folder, crashed, rebuilt[0] if rebuilt else "not reached"))
    if log.differences:
        notes.append(f"{log.differences} recorded event(s) came out differently in detail "
                     "(rows, timings or wording); the recorded ones stand")
    note = "; ".join(n for n in notes if n)
    if not ending:
        session.record(ev.SessionResumed(recorded=len(recorded), note=note))
    else:
        _log_resumed(folder, note)
    return Resumed(session, note, ending)


def _log_resumed(folder: Path, note: str) -> None:
    """A session resumed only to be ended again: its transcript ends with the score, and
    the seam is told in the session's log (raceday.log), not after it."""
    import logging

    logging.getLogger(__name__).info("session %s resumed and ended%s", folder,
                                     f": {note}" if note else "")


def _play_again(session: Session, log: _ResumingLog, recorded: Sequence[Event]) -> bool:
    """Do every recorded action again; True when the session was ending (end it again)."""
    session.start()
    while log.position < len(recorded):
        event = recorded[log.position]
        if isinstance(event, ev.TeamLeft) or (isinstance(event, ev.Replay) and event.final):
            return True
        if not _is_action(event):
            before = log.position
            session.advance_to(event.minute)
            if log.position == before:
                raise ResumeError(
                    f"{log.path}:{before + 1}: the session does not play the same again "
                    f"({event.kind} at {event.sim_time} does not come back); the exercise "
                    "changed since")
            continue
        if event.minute < session.minute:
            raise ResumeError(f"{log.path}:{log.position + 1}: the session does not play the "
                              f"same again (the clock is past {event.sim_time})")
        session.advance_to(event.minute)
        if log.recorded[log.position] is not event:
            continue  # the advance itself went wrong; the check above reports it
        _redo(session, event, recorded, log.position)
    return False


def _is_action(event: Event) -> bool:
    """Was this event a person's doing (done again), not the engine's (produced again)?"""
    if isinstance(event, ev.Statement):
        return not event.automated
    if isinstance(event, ev.Inject):
        # a facilitator's own: ad hoc, or prepared with what it expects (named by its id)
        return event.source == "facilitator" and (event.id == "adhoc" or bool(event.expect))
    return isinstance(event, (ev.MonitorSaved, ev.MonitorRemoved, ev.Declaration, ev.Edit,
                              ev.Hint, ev.Wait, ev.Note, ev.Refused, ev.Replay, ev.Cast,
                              ev.Facilitation, ev.SeatJoined, ev.SeatLeft, ev.SeatCommand,
                              ev.CommandRefused, ev.SessionResumed, ev.SeatReady))


def _redo(session: Session, event: Event, recorded: Sequence[Event], index: int) -> None:
    if isinstance(event, ev.Statement):
        group = [event]
        for later in recorded[index + 1:]:
            if not (isinstance(later, ev.Statement) and not later.automated
                    and later.role == event.role and later.minute == event.minute):
                break
            group.append(later)
        session.redo_submission(event.role, group)
    elif isinstance(event, ev.MonitorSaved):
        session.perform(SaveMonitor(role=event.role, name=event.name, sql=event.sql))
    elif isinstance(event, ev.MonitorRemoved):
        session.perform(RemoveMonitor(name=event.name))
    elif isinstance(event, ev.Declaration):
        session.perform(Declare(role=event.role, finding=event.finding,
                                text=event.text if event.finding == OWN_WORDS else ""))
    elif isinstance(event, ev.Edit):
        session.perform(EditStatement(role=event.role, statement=event.statement, sql=event.sql))
    elif isinstance(event, ev.Hint):
        session.perform(RevealHint(hint=event.id, to=event.to))
    elif isinstance(event, ev.Wait):
        session.perform(Wait(until=None if event.next_inject
                             else _minute_at(session, event.until, event.minute)))
    elif isinstance(event, ev.Note):
        session.note(event.text, event.role, event.author)
    elif isinstance(event, ev.Inject):
        session.send_inject(event.title, event.text, event.to, event.inject_kind or "message",
                            inject_id=event.id, expect=event.expect, objective=event.objective)
    elif isinstance(event, ev.Facilitation) and event.action == "schedule" and event.when:
        session.schedule_on_fault(event.detail, event.text, event.when, event.after, event.to,
                                  event.inject_kind)
    elif isinstance(event, ev.Facilitation) and event.action == "schedule":
        session.schedule_inject(event.detail, event.text,
                                _minute_at(session, event.at or "", event.minute + 1), event.to)
    elif isinstance(event, ev.Facilitation) and event.action in ("hold", "release"):
        session.hold_task(event.detail, event.action == "hold")
    elif isinstance(event, ev.Facilitation) and event.action == "automate":
        session.automate_task(event.detail, event.text)
    elif isinstance(event, ev.Facilitation) and event.action == "skip-step":
        session.skip_step(event.detail)
    elif isinstance(event, ev.Facilitation) and event.action == "handover" and event.to:
        session.hand_over(event.to[0], event.detail == HANDED)
    elif isinstance(event, (ev.Refused, ev.Replay)):
        session.pass_through(event)
    elif isinstance(event, (ev.Cast, ev.Facilitation, ev.SeatJoined, ev.SeatLeft,
                            ev.SeatCommand, ev.CommandRefused, ev.SessionResumed, ev.SeatReady)):
        session.record(event)


def _minute_at(session: Session, clock: str, earliest: int) -> int:
    """The first minute from `earliest` whose clock face is `clock` (the night's end if none)."""
    for minute in range(earliest, session.end_minute + 1):
        if session.time_of(minute) == clock:
            return minute
    return session.end_minute


def _siblings(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"),
            path.with_name(path.name + "-journal")]


def _set_aside(folder: Path) -> bool:
    """Move the world the crash left (and its WAL) to world-at-crash.db; False if none."""
    moved = False
    for src, dst in zip(_siblings(folder / WORLD), _siblings(folder / CRASHED_WORLD), strict=True):
        if src.exists():
            dst.unlink(missing_ok=True)
            src.rename(dst)
            moved = moved or src.name == WORLD
    return moved


def _put_back(folder: Path, crashed: bool) -> None:
    if not crashed:
        return
    for src, dst in zip(_siblings(folder / CRASHED_WORLD), _siblings(folder / WORLD), strict=True):
        if src.exists():
            dst.unlink(missing_ok=True)
            src.rename(dst)


def _compare_worlds(folder: Path, crashed: bool, now: dict[str, str] | str) -> str:
    """Compare the world rebuilt up to the last recorded event with the one the crash left;
    drop the latter when they are the same."""
    if not crashed:
        return "world.db was missing: the world was rebuilt from the transcript alone"
    try:
        before = world_digest(folder / CRASHED_WORLD)
    except OSError as exc:
        return f"the world the crash left cannot be read ({exc}); it is kept as {CRASHED_WORLD}"
    if isinstance(now, str):
        return f"the rebuilt world cannot be read back ({now}); the crash's is kept as {CRASHED_WORLD}"
    if before == now:
        for path in _siblings(folder / CRASHED_WORLD):
            path.unlink(missing_ok=True)
        return ""
    differ = sorted({k.split(" ", 1)[1] for k in set(before) | set(now)
                     if before.get(k) != now.get(k)})
    return (f"the world rebuilt from the transcript differs from the one the crash left in "
            f"{', '.join(differ[:5])}{'…' if len(differ) > 5 else ''} (a write the crash kept "
            f"but never showed, or SQL that is not deterministic); that one is kept as "
            f"{CRASHED_WORLD}")
