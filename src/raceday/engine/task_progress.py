"""Which of a player's tasks are still outstanding, read off the session's events.

The session decides a task with `done_when` is done (`TaskDone`). A task without one (the
automation's own work, held by a person) is handled once its role has written what the
task's automation SQL writes since the task fell due (or, when that SQL only reads, has
read what it reads: `SELECT 1` looks at nothing); a guard task is handled once its race
steps are shown stopped (a replay or a guard check). This tells a player what is left; the
score decides nothing from it.

The same events reach a solo screen and a team seat, so both say the same.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from raceday.engine.snapshot import PendingView
from raceday.exercise.model import Exercise, Task
from raceday.transcript import events as ev

WRITES = re.compile(r"\b(?:UPDATE(?:\s+OR\s+\w+)?|INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO"
                    r"|DELETE\s+FROM)\s+[\"`\[]?(\w+)", re.IGNORECASE)

READS = re.compile(r"\b(?:FROM|JOIN)\s+[\"`\[]?(\w+)", re.IGNORECASE)


def task_writes(task: Task, statement_sql: Mapping[str, str]) -> set[str]:
    """The tables the task's automation SQL writes (none: a task that only reads)."""
    return {m.lower() for sid in task.statements
            for m in WRITES.findall(statement_sql.get(sid, ""))}


def task_reads(task: Task, statement_sql: Mapping[str, str]) -> set[str]:
    """The tables the task's automation SQL reads: a task that only looks is done by a look
    at what it looks at (`SELECT 1` looks at nothing)."""
    return {m.lower() for sid in task.statements
            for m in READS.findall(statement_sql.get(sid, ""))}


def automation_work(exercise: Exercise, *, one_off: bool = False) -> set[str]:
    """Tasks that are the automation's own work (its SQL, no guard to prove): held by a
    person, nobody else does them, and the night waits on them. `one_off`: only those that
    fall due once (the story; a routine task can be handed to the automation instead)."""
    return {t.id for t in exercise.tasks if t.statements and not t.proves
            and not (one_off and t.every is not None)}


def outstanding(role: str, pending: Iterable[PendingView],
                handled: Collection[str]) -> list[PendingView]:
    """The role's pending tasks not yet handled, the one due longest first."""
    return [p for p in pending if p.role == role and p.task not in handled]


class TaskProgress:
    """What the players have done towards their tasks, folded from the session's events."""

    def __init__(self, exercise: Exercise) -> None:
        self.exercise = exercise
        self.done: set[str] = set()
        """Tasks the session said are done (`TaskDone`)."""
        self.repeats: dict[str, int] = {}
        """How often each task fell due without being handled since."""
        self.stopped_steps: set[str] = set()
        """Race steps the newest replay or guard check showed prevented."""
        self._due_seq: dict[str, int] = {}  # task -> seq of its latest task_due
        self._wrote_seq: dict[tuple[str, str], int] = {}  # (role, table) -> latest write seq
        sql = {s.id: s.sql for s in exercise.statements}
        self._tables = {t.id: task_writes(t, sql)
                        or {f"read:{name}" for name in task_reads(t, sql)}
                        for t in exercise.tasks}

    def observe(self, event: ev.Event) -> None:
        """Take one event of the session, in order."""
        if isinstance(event, ev.TaskDone):
            self.done.add(event.task)
            self.repeats.pop(event.task, None)
        elif isinstance(event, ev.TaskDue):
            if event.task in self.handled():
                self.repeats[event.task] = 0  # handled since: count afresh
            self._due_seq[event.task] = event.seq
            self.repeats[event.task] = self.repeats.get(event.task, 0) + 1
        elif isinstance(event, ev.Statement) and not event.automated and event.ok:
            self._wrote_seq[(event.role, "")] = event.seq  # ran anything: reads count too
            for table in READS.findall(event.sql):
                self._wrote_seq[(event.role, f"read:{table.lower()}")] = event.seq
            if event.writes or event.schema_changed:
                # a write that changed 0 rows counts too: the automation's own runs often do
                for table in event.writes or ("*",):
                    self._wrote_seq[(event.role, table)] = event.seq

    def guards_shown(self, prevented: Iterable[str]) -> list[Task]:
        """The race steps now shown stopped; the guard tasks this closes, not done before."""
        before = self.handled()
        self.stopped_steps = set(prevented)
        now = self.handled() - before
        return [t for t in self.exercise.tasks
                if t.id in now and t.proves and t.id not in self.done]

    def handled(self) -> set[str]:
        """Tasks no longer outstanding (the panel ticks them; ctrl+n goes past them): a guard
        task whose race steps are shown stopped, and pending tasks without a `done_when`
        whose role has since written what the task writes."""
        handled = set()
        for task in self.exercise.tasks:
            if task.proves and set(task.proves) <= self.stopped_steps:
                handled.add(task.id)  # its guard stops its step (replay or guard check)
                continue
            due = self._due_seq.get(task.id)
            if due is None or task.done_when:
                continue
            tables = self._tables.get(task.id) or {""}
            writes = [seq for (role, table), seq in self._wrote_seq.items()
                      if role == task.role and table in tables]
            if any(seq > due for seq in writes):
                handled.add(task.id)
        return handled

    def outstanding(self, role: str, pending: Iterable[PendingView]) -> list[PendingView]:
        """The role's pending tasks not yet handled."""
        return outstanding(role, pending, self.handled())
