"""Messages the session runner posts from its worker threads to the screen that owns it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from raceday.engine.snapshot import Snapshot
from raceday.store.results import StatementResult
from raceday.transcript import events as ev

if TYPE_CHECKING:
    from raceday.engine.replaywalk import ReplayWalk
    from raceday.transcript.debrief.model import Debrief


@dataclass
class EngineEvent(Message):
    """One event of the session, as written to the transcript."""

    event: ev.Event


@dataclass
class SessionOpened(Message):
    """The session is open: the events so far and the first look at the world."""

    events: tuple[ev.Event, ...]
    snapshot: Snapshot


@dataclass
class SessionStopped(Message):
    """The machine stopped the session (a full disk, its world deleted): `why` in one line,
    with how to resume it; the world and transcript are closed, whole."""

    why: str


@dataclass
class Refreshed(Message):
    """The session moved: the clock, tasks, monitors and world as they are now."""

    snapshot: Snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Refreshed)


@dataclass
class StatementsRan(Message):
    """A player's submission ran; `results` has one entry per statement."""

    role: str
    sql: str
    results: list[StatementResult]


@dataclass
class ActionDone(Message):
    """A player or facilitator action finished; `event` is what the session recorded."""

    action: str
    event: ev.Event | None = None


@dataclass
class GuardsChecked(Message):
    """The race steps the team's guards would stop now (tonight's race played on a copy of
    their world after a schema change or an edit): the task panel closes their guard tasks."""

    prevented: frozenset[str]


@dataclass
class SessionEnded(Message):
    """The session is scored and closed: its score event, its folder, all its events, and
    the debrief its end built (None where none was: the end screen's d reads the folder)."""

    score: ev.ScoreEvent
    folder: Path
    events: tuple[ev.Event, ...]
    debrief: Debrief | None = None


@dataclass
class EndProgress(Message):
    """How far the end of a session has got (the night playing itself out, the replay), for
    the player who waits for the score: one line, a few times a second at most."""

    line: str


@dataclass
class JobFailed(Message):
    """A session call raised: `error` is one line a person can read.

    An unexpected error (a bug, not a refusal the session explains) also brings its
    `trace`back and the `log` it was written to, for the crash panel.
    """

    action: str
    error: str
    trace: str = ""
    log: Path | None = None


@dataclass
class ReplayReady(Message):
    """The replay ran (or could not): its event, and the walk through the replayed night."""

    event: ev.Replay
    walk: ReplayWalk
