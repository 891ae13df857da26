"""Which open tasks the seats have handled, as each seat's own task panel judges it, so the
facilitator's console does not call a task overdue that the player's screen has ticked.

The same rule as the play screen's (`PlayScreen.handled_tasks`), from the same events: a
task without `done_when` is handled once its role has, since it fell due, written a table
the task's automation SQL writes, or run anything when that SQL only reads. It decides
nothing in the score."""

from __future__ import annotations

from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.tui.widgets.tasks import task_writes


class HandledTasks:
    def __init__(self, exercise: Exercise) -> None:
        sql = {s.id: s.sql for s in exercise.statements}
        self.tasks = {t.id: t for t in exercise.tasks if not t.done_when}
        self.tables = {t.id: task_writes(t, sql) or {""} for t in self.tasks.values()}
        self.due_seq: dict[str, int] = {}
        self.wrote_seq: dict[tuple[str, str], int] = {}

    def note(self, event: ev.Event) -> None:
        if isinstance(event, ev.TaskDue):
            self.due_seq[event.task] = event.seq
        elif isinstance(event, ev.Statement) and not event.automated and event.ok:
            self.wrote_seq[(event.role, "")] = event.seq  # ran anything: reads count too
            if event.writes or event.schema_changed:
                for table in event.writes or ("*",):
                    self.wrote_seq[(event.role, table)] = event.seq

    def handled(self) -> set[str]:
        out = set()
        for task_id, due in self.due_seq.items():
            task = self.tasks.get(task_id)
            if task is None:
                continue
            if any(seq > due for (role, table), seq in self.wrote_seq.items()
                   if role == task.role and table in self.tables[task_id]):
                out.add(task_id)
        return out
