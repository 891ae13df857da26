"""The hot seat's way to its session (a team seat's is `team/seat_runner.py`, the console's
`team/console_runner.py`): calls queued to thread workers, run one at a time.

The session is not thread-safe, so every call takes one lock, in the order it was asked for
(each worker runs the oldest queued job, not necessarily its own). Workers never touch a
widget: they post messages to `target`, the screen that shows the session. The session's
listener runs in the worker thread too, and only posts messages.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

from raceday.engine.actions import Action, RunSql
from raceday.engine.clock import Pace
from raceday.engine.progress import NightProgress
from raceday.engine.session import SessionError
from raceday.engine.snapshot import WorldPlan, take_snapshot
from raceday.errors import MachineError, RacedayError, first_line
from raceday.logfile import current_log
from raceday.transcript import events as ev
from raceday.tui.messages import (
    ActionDone,
    EndProgress,
    EngineEvent,
    GuardsChecked,
    JobFailed,
    Refreshed,
    ReplayReady,
    SessionEnded,
    SessionOpened,
    SessionStopped,
    StatementsRan,
)

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump

    from raceday.engine.session import Session
    from raceday.engine.unknown_night import DrawnNight
    from raceday.exercise.model import Exercise
    from raceday.transcript.debrief.model import Debrief

_log = logging.getLogger(__name__)

GROUP = "session"
STATEMENT_TIME_LIMIT_S = 5.0
"""How long a player's statement may run before the store interrupts it (Escape is sooner)."""

Job = Callable[[], list[Message]]


@dataclass
class _Queued:
    action: str
    job: Job
    refresh: bool
    tables: bool = False


class SessionRunner:
    """Owns the session; runs every call to it (and to its store) in a thread worker."""

    def __init__(self, app: App[Any], target: MessagePump, *, onboarding: bool = False) -> None:
        self._app = app
        self.target = target
        self.onboarding = onboarding  # the world panel shows the exercise's onboarding items
        self.session: Session | None = None
        self.plan = WorldPlan()
        self.running: str | None = None
        self._lock = threading.Lock()
        self._jobs: deque[_Queued] = deque()
        self._tick_queued = False
        self.stopped = False  # the machine stopped the session: later calls are dropped
        self._ending = False  # the night plays out for the end screen: no event is posted
        self._progress: NightProgress | None = None  # while ending: how far it has got

    @property
    def busy(self) -> bool:
        return self.running is not None or bool(self._jobs)

    @property
    def statement_running(self) -> bool:
        return self.running == "run"

    # -- queueing ----------------------------------------------------------------------

    def submit(self, action: str, job: Job, *, refresh: bool = True, tables: bool = False) -> None:
        self._jobs.append(_Queued(action, job, refresh, tables))
        self._app.run_worker(self._run_next, name=action, group=GROUP, thread=True,
                             exit_on_error=False, description=f"raceday: {action}")

    def _run_next(self) -> None:
        with self._lock:
            queued = self._jobs.popleft()
            if queued.action == "tick":
                self._tick_queued = False
            if self.stopped:
                return
            self.running = queued.action
            try:
                messages = queued.job()
            except MachineError as exc:  # a full disk, a deleted world: close, say how to resume
                messages = [self._stop(exc)]
            except (RacedayError, SessionError) as exc:  # refused, with a reason: say so
                _log.info("%s refused: %s", queued.action, exc)
                messages = [JobFailed(queued.action, first_line(exc))]
            except Exception as exc:  # a bug: leave a trace, show it, keep playing
                messages = [_unexpected(queued.action, exc)]
            for message in messages:
                self.target.post_message(message)
            tables = queued.tables or any(
                isinstance(m, StatementsRan) and any(r.schema_changed for r in m.results)
                for m in messages
            )
            session = self.session
            if _may_guard(messages) and session is not None and not session.ended:
                self._check_guards()
            if queued.refresh and session is not None and not session.ended and not self.stopped:
                try:
                    snapshot = take_snapshot(session, self.plan, tables=tables)
                except Exception as exc:
                    self.target.post_message(_unexpected("refresh", exc))
                else:
                    self.target.post_message(Refreshed(snapshot))
            self.running = None

    def _stop(self, exc: MachineError) -> Message:
        from raceday.engine.headless import stopped_words

        _log.error("the session stopped: %s", exc, exc_info=exc)
        self.stopped = True
        session = self.session
        if session is None:
            return SessionStopped(first_line(exc))
        try:
            session.close()
        except Exception:  # closing a world whose file is gone: nothing more to save
            _log.exception("closing the stopped session")
        return SessionStopped(stopped_words(session, exc))

    def _post_event(self, event: ev.Event) -> None:
        if self._ending:  # the end screen replaces the feed: it gets them all at once
            self._tell_progress(event)
            return
        self.target.post_message(EngineEvent(event))

    def _tell_progress(self, event: ev.Event) -> None:
        """While the session ends, say how far it has got instead of feeding every event
        (engine.progress): "Scoring…" alone read as a hang on recovery-under-load."""
        line = self._progress.line(event) if self._progress is not None else None
        if line is not None:
            self.target.post_message(EndProgress(line))

    def _need(self) -> Session:
        if self.session is None:
            raise RuntimeError("the session is not open yet")
        return self.session

    # -- the calls ---------------------------------------------------------------------

    def open(self, exercise: Exercise, players: Sequence[str], transcripts: Path,
             pace: Pace, night: DrawnNight | None = None,
             time_limit_s: float = STATEMENT_TIME_LIMIT_S) -> None:
        def job() -> list[Message]:
            from raceday.engine.headless import open_session

            # the replay's nights are started ahead once the play screen is drawn (its
            # digests and the fork took ~50 ms before the first statement could be typed)
            session = open_session(exercise, players, transcripts, pace, time_limit_s,
                                   ahead=False, night=night)
            self.session = session
            self.plan = WorldPlan.for_exercise(session.exercise, session.store.tables(),
                                               onboarding=self.onboarding)
            session.subscribe(self._post_event)
            snapshot = take_snapshot(session, self.plan, tables=True)
            return [SessionOpened(tuple(session.events), snapshot)]

        self.submit("open", job, refresh=False)

    def prepare_replay(self, import_screens: Callable[[], None] = lambda: None) -> None:
        """Once the opened screen is drawn (the play screen asks then: work queued sooner
        held the interpreter while its first frames were drawn), while the players read it:
        what any replay of this session needs (engine.replay.prepare_ahead and prepare), and
        the modules the dialogs, ctrl+r and the end import (the debrief's; the screens'
        own, which the play screen's `import_screens` imports: the runner imports no
        screen), each left out of the play screen's first frame. A replay asked for first
        prepares what it needs itself; a dialog opened first imports its module itself."""
        def job() -> list[Message]:
            from raceday.engine.replay import prepare, prepare_ahead

            if self.session is not None:  # the original nights: a forked child (PostgreSQL:
                prepare_ahead(self.session)  # a thread), started before the imports below
            from raceday.engine.replaywalk import load_walk  # noqa: F401 - imported ahead
            from raceday.transcript.debrief import write_debrief  # noqa: F401 - the end's

            import_screens()
            if self.session is not None:
                prepare(self.session)  # what the child does not play (a large world: nothing)
            return []

        self.submit("prepare", job, refresh=False)

    def resume(self, folder: Path, exercise: Exercise, time_limit_s: float = STATEMENT_TIME_LIMIT_S,
               ) -> None:
        """Rebuild a session a crash cut short (`raceday resume`) and go on with it."""
        def job() -> list[Message]:
            from raceday.engine.resume import resume_session

            resumed = resume_session(folder, exercise, time_limit_s=time_limit_s)
            session = resumed.session
            self.session = session
            self.plan = WorldPlan.for_exercise(session.exercise, session.store.tables(),
                                               onboarding=self.onboarding)
            session.subscribe(self._post_event)
            snapshot = take_snapshot(session, self.plan, tables=True)
            messages: list[Message] = [SessionOpened(tuple(session.events), snapshot)]
            if resumed.finished:  # it was ending when it stopped: now it has ended
                debrief = write_session_debrief(session.folder)
                events = tuple(session.events)
                score = next(e for e in reversed(events) if isinstance(e, ev.ScoreEvent))
                messages.append(SessionEnded(score, session.folder, events, debrief))
            return messages

        self.submit("resume", job, refresh=False)

    def execute(self, role: str, sql: str) -> None:
        def job() -> list[Message]:
            results = self._need().perform(RunSql(role=role, sql=sql))
            return [StatementsRan(role, sql, results)]

        self.submit("run", job)

    def perform(self, action: str, act: Action) -> None:
        """A player's action, done by `Session.perform` (a statement: as `execute`)."""
        if isinstance(act, RunSql):
            self.execute(act.role, act.sql)
            return

        def job() -> list[Message]:
            return [ActionDone(action, self._need().perform(act))]

        self.submit(action, job)

    def act(self, action: str, call: Callable[[Session], ev.Event | None],
            *, tables: bool = False) -> None:
        """Any other session call; `call` returns the event it recorded (or None)."""
        def job() -> list[Message]:
            return [ActionDone(action, call(self._need()))]

        self.submit(action, job, tables=tables)

    def replay(self) -> None:
        """Replay the race against the team's database (about a second), then read the
        replayed night for the walk; the screen shows a loading indicator meanwhile."""
        def job() -> list[Message]:
            from raceday.engine.replaywalk import load_walk, unavailable

            session = self._need()
            event = session.replay()
            original = {s.id: s.sql for s in session.exercise.statements}
            edits = tuple(sid for sid, sql in session.statement_sql.items()
                          if sql.strip() != original.get(sid, "").strip())
            try:
                walk = load_walk(session.exercise, event, session.folder, edits)
            except Exception as exc:  # the replay is recorded; only the walk is missing
                walk = unavailable(f"the replayed night could not be read: {first_line(exc)}")
            return [ReplayReady(event, walk)]

        self.submit("replay", job, refresh=False)  # a replay plays copies: nothing shown moved

    def _check_guards(self) -> None:
        """After a schema change or an edit: which race steps the guards stop now (queued
        behind what the player asked next; a few tens of milliseconds on a small world)."""
        def job() -> list[Message]:
            from raceday.engine.guard_check import has_guard_tasks, prevented_now

            session = self._need()
            if not has_guard_tasks(session):
                return []
            return [GuardsChecked(prevented_now(session))]

        self.submit("guards", job, refresh=False)

    def tick(self, minute: int) -> None:
        """Let the clock run to `minute` (live pace); a tick already queued covers it."""
        if self._tick_queued:
            return
        self._tick_queued = True

        def job() -> list[Message]:
            session = self._need()
            if session.ended:
                return []
            session.advance_to(max(minute, session.minute))
            return []

        self.submit("tick", job)

    def interrupt(self) -> None:
        """Cancel the running statement: not queued, it must not wait for the lock."""
        session = self.session
        if session is None:
            return
        self._app.run_worker(session.store.interrupt, name="interrupt", group="cancel",
                             thread=True, exit_on_error=False, description="raceday: cancel")

    def end(self, reason: str = "ended") -> None:
        def job() -> list[Message]:
            session = self._need()
            # The rest of the night (about a thousand events on the flagship) is not fed to
            # the play screen, which the end screen is about to replace: SessionEnded carries
            # every event, and the screen is drawn once.
            self._ending, self._progress = True, NightProgress(session.exercise)
            try:
                session.end(reason)
            except BaseException:
                self._ending = False  # not ended: the play screen goes on showing the night
                raise
            events = tuple(session.events)
            debrief = write_session_debrief(session.folder, events)  # not read back
            score = next(e for e in reversed(events) if isinstance(e, ev.ScoreEvent))
            return [SessionEnded(score, session.folder, events, debrief)]

        self.submit("end", job, refresh=False)


def _may_guard(messages: Sequence[Message]) -> bool:
    """A statement changed the schema, or an automation statement was edited: a guard may
    have come or gone."""
    return any((isinstance(m, StatementsRan) and any(r.ok and r.schema_changed
                                                      for r in m.results))
               or (isinstance(m, ActionDone) and m.action == "edit" and m.event is not None)
               for m in messages)


def write_session_debrief(folder: Path, events: Sequence[ev.Event] | None = None,
                          ) -> Debrief | None:
    """Write debrief.md; the transcript is saved either way and `raceday debrief` redoes it.
    `events`: every event the session recorded (None: read back from the folder). Returns
    the debrief it wrote, without the room's edits (the end screen's d shows it), or None."""
    from raceday.transcript.debrief import save_debrief  # heavy, and needed only here

    try:
        return save_debrief(folder, events)
    except Exception:  # the session is scored and saved: the end screen must still open
        # (its d then builds the debrief from the transcript, not from this file)
        logging.getLogger(__name__).exception("debrief.md not written in %s", folder)
        return None


def _unexpected(action: str, exc: BaseException) -> JobFailed:
    """Log an unexpected error with its traceback; the message for the crash panel."""
    _log.error("%s failed unexpectedly", action, exc_info=exc)
    trace = "".join(traceback.format_exception(exc))
    return JobFailed(action, first_line(exc), trace=trace, log=current_log())
