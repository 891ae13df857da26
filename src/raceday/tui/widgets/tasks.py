"""The active role's tasks: the one to do now, what else is waiting, what comes later, with
times; for a role the automation would play, the SQL it would run.

Which tasks are done or handled is not decided here: `engine.task_progress` reads it off the
session's events; the panel shows what is outstanding, it scores nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from rich.text import Text
from textual.widgets import Static

from raceday.engine.snapshot import PendingView
from raceday.engine.task_progress import outstanding, task_reads, task_writes
from raceday.exercise.model import Exercise, Task
from raceday.inert import inert

SQL_SHOWN = 240
"""Characters of the automation's SQL the panel shows (F4 shows all of it)."""


def render_tasks(exercise: Exercise, role: str, minute: int, pending: tuple[PendingView, ...],
                 done: set[str], *, hints: bool, handled: Collection[str] = (),
                 repeats: Mapping[str, int] | None = None,
                 statement_sql: Mapping[str, str] | None = None) -> Text:
    out = Text()
    tasks = {t.id: t for t in exercise.tasks}
    mine = outstanding(role, pending, handled)
    if mine:
        first, rest = mine[0], mine[1:]
        task = tasks.get(first.task)
        out.append(f" NOW · due {first.due} ", style="bold black on cyan")
        out.append(f" {inert(first.title)}", style="bold")
        missed = (repeats or {}).get(first.task, 1)
        if missed > 1:
            out.append(f"  (fell due {missed} times)", style="dim")
        out.append("\n")
        if first.context:
            out.append(f"   {inert(' '.join(first.context.split()))}\n")
        if task is not None:
            _how(out, task, statement_sql)
        if hints and first.hint:
            out.append("   F9 reveals a hint (its cost is shown first)\n", style="dim italic")
        for waiting in rest:
            out.append(f" then · {waiting.due} ", style="cyan")
            out.append(f" {inert(waiting.title)}\n")
    later: list[tuple[int, str]] = []
    open_ids = {p.task for p in mine}
    normal = set(exercise.replay.normal) if exercise.replay else set()  # never tonight
    for task in exercise.tasks:
        if task.role != role or task.id in open_ids or task.id in normal:
            continue
        upcoming = [m for m in task.times() if m > minute]
        if task.id in done or (task.id in handled and (task.proves or not upcoming)):
            out.append(" ✓ ", style="green")  # a guard shown in place: done before it is due
            out.append(f"{inert(task.title)}\n", style="dim")
        elif upcoming:
            later.append((upcoming[0], task.title))
    if later:
        out.append(" later\n", style="dim")
    for at, title in sorted(later):
        out.append(f" {_face(exercise, at)} ", style="bold")
        out.append(f" {inert(title)}\n")
    if not out.plain:
        name = exercise.role(role).name if role in exercise.role_ids else role
        out.append(f"No scheduled tasks for {name}.\n", style="bold")
        out.append("Watch the world and the feed, find what is wrong, save monitors, "
                   "declare what you find, and repair it.", style="dim")
    return out


def _how(out: Text, task: Task, statement_sql: Mapping[str, str] | None) -> None:
    """What completes the task: the exercise's hint, and the automation's own SQL."""
    if task.hint:
        out.append("   think: ", style="bold")
        out.append(f"{inert(' '.join(task.hint.split()))}\n", style="italic")
    if task.statements and statement_sql is not None:
        out.append("   the automation would run", style="dim")
        out.append(" (:names are what it remembered):\n", style="dim")
        for statement_id in task.statements:
            sql = " ".join(statement_sql.get(statement_id, "").split())
            if len(sql) > SQL_SHOWN:
                sql = sql[: SQL_SHOWN - 1] + "…"
            out.append(f"   {inert(sql)}\n", style="green")
    if task.done_when and task.proves:
        done = ("done as soon as your guard stops the automation's mistake: tonight's race "
                "is replayed on a copy of your database after each schema change or edit")
    elif task.done_when:
        done = "done when the world shows it"
    elif statement_sql is not None and task_writes(task, statement_sql):
        done = "done once you have written " + ", ".join(
            sorted(task_writes(task, statement_sql)))
    elif statement_sql is not None and task_reads(task, statement_sql):
        done = "done once you have looked at " + ", ".join(
            sorted(task_reads(task, statement_sql)))
    else:
        done = "done once you have run a query"
    more = "; F4 shows the automation's statements in full" if task.statements else ""
    out.append(f"   {done}{more}\n", style="dim")


def _face(exercise: Exercise, minute: int) -> str:
    from raceday.engine.clock import clock_time

    return clock_time(exercise.clock.start, minute)


class TaskList(Static):
    """Shows the tasks of the role at the keyboard."""
