"""The active role's tasks: what is due now and what comes later, with times."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from raceday.engine.snapshot import PendingView
from raceday.exercise.model import Exercise


def render_tasks(exercise: Exercise, role: str, minute: int, pending: tuple[PendingView, ...],
                 done: set[str], *, hints: bool) -> Text:
    out = Text()
    mine = [p for p in pending if p.role == role]
    for due in mine:
        out.append(f" DUE {due.due} ", style="bold black on cyan")
        out.append(f" {due.title}\n", style="bold")
        if due.context:
            out.append(f"   {' '.join(due.context.split())}\n")
        if hints and due.hint:
            out.append("   F9 reveals a hint (it costs points)\n", style="dim italic")
    later: list[tuple[int, str]] = []
    due_ids = {p.task for p in mine}
    for task in exercise.tasks:
        if task.role != role or task.id in due_ids:
            continue
        upcoming = [m for m in task.times() if m > minute]
        if upcoming:
            later.append((upcoming[0], task.title))
        elif task.id in done:
            out.append(" ✓ ", style="green")
            out.append(f"{task.title}\n", style="dim")
    for at, title in sorted(later):
        out.append(f" {_face(exercise, at)} ", style="bold")
        out.append(f" {title}\n")
    if not out.plain:
        name = exercise.role(role).name if role in exercise.role_ids else role
        out.append(f"No scheduled tasks for {name}.\n", style="bold")
        out.append("Watch the world and the feed, find what is wrong, save monitors, "
                   "declare what you find, and repair it.", style="dim")
    return out


def _face(exercise: Exercise, minute: int) -> str:
    from raceday.engine.clock import clock_time

    return clock_time(exercise.clock.start, minute)


class TaskList(Static):
    """Shows the tasks of the role at the keyboard."""
