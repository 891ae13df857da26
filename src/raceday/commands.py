"""The CLI's commands that are more than a call: listing, checking, briefing. Only cli.py
imports it (pyproject's contracts); what other doors share lives below (engine.load).

rich's renderables (Markdown alone pulls in markdown-it and Pygments) are imported by the
commands that print them, not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raceday.engine.load import find_exercises, load_exercise, load_named_exercise
from raceday.errors import ExerciseError, InputError
from raceday.inert import inert
from raceday.transcript.wording import plural

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console



def list_exercises(out: Console) -> int:
    from rich.padding import Padding
    from rich.text import Text

    entries = find_exercises(check_sql=False)  # what it shows; play and check compile the SQL
    if not entries:
        out.print("No exercises found (bundled, or in ./exercises).")
        return 0
    for entry in entries:  # exercise files are data: shown inert, never read as markup
        if entry.error:
            out.print(Text.assemble((inert(entry.id, one_line=True), "bold"), "  ",
                                    (f"does not load: {inert(entry.error)}", "red")))
            continue
        out.print(Text.assemble((inert(entry.id, one_line=True), "bold"), "  ",
                                inert(entry.title, one_line=True), "  ",
                                (f"({entry.length} min, {inert(entry.level, one_line=True)})", "dim")))
        roles = inert(", ".join(entry.roles), one_line=True)
        out.print(Padding(Text.assemble(inert(entry.summary), "\n", (f"roles: {roles}", "dim")),
                          (0, 0, 1, 2)))
    out.print("Start one with [bold]raceday play ID[/bold]; read it first with "
              "[bold]raceday brief ID[/bold].")
    return 0


def check_paths(paths: list[Path], out: Console) -> int:
    """Load each exercise (its SQL compiled against its world), then play its reference
    scripts' steps far enough to find SQL naming what the world does not have, its
    practice baselines on variants when it says they are the same on every one, and what
    each hint teaches (its `play`), which must earn points."""
    from raceday.engine.baseline_check import baseline_problems
    from raceday.engine.hint_plays import hint_play_problems
    from raceday.engine.night_check import night_problems
    from raceday.engine.pg_world_check import postgres_world_problems
    from raceday.engine.refcheck import missing_names

    problems: list[str] = []
    for path in paths:
        try:
            exercise = load_exercise(path)
        except ExerciseError as exc:
            problems.extend(exc.problems)
            continue
        missing = (missing_names(exercise) + baseline_problems(exercise)
                   + postgres_world_problems(exercise))
        if not missing:
            missing = hint_play_problems(exercise) + night_problems(exercise)
        if missing:
            problems.extend(missing)
            continue
        counts = ", ".join(plural(len(items), word) for items, word in (
            (exercise.tasks, "task"), (exercise.injects, "inject"), (exercise.roles, "role")))
        out.print(inert(f"{path}: ok ({exercise.id}: {counts})"), markup=False,
                  soft_wrap=True)
    if problems:
        raise ExerciseError(problems)
    return 0


def print_facilitator_guide(name: str, out: Console) -> int:
    """The facilitator's guide as Markdown text (it prints, and pipes to a file as is)."""
    from raceday.exercise.facilitator import facilitator_markdown

    exercise = load_named_exercise(name)
    out.file.write(inert(facilitator_markdown(exercise)))
    return 0


GUIDE_FORMATS = ("md", "html")


def write_guide(name: str, fmt: str, output: Path | None, out: Console,
                program: str = "raceday") -> int:
    """`raceday guide EXERCISE`: the facilitator guide (Markdown or HTML) from the exercise
    alone, on stdout or into `output`; `program` is the command the join lines type."""
    from raceday.exercise.acts import next_act, previous_act
    from raceday.exercise.guide import build_guide
    from raceday.exercise.guide_html import guide_html
    from raceday.exercise.guide_markdown import guide_markdown

    if fmt not in GUIDE_FORMATS:
        raise InputError([f"unknown guide format {fmt!r}; formats are {', '.join(GUIDE_FORMATS)}"])
    exercise = load_named_exercise(name)
    others = [e.exercise for e in find_exercises(check_sql=False) if e.exercise is not None]
    guide = build_guide(exercise, program=program, previous=previous_act(exercise, others),
                        following=next_act(exercise, others))
    text = guide_html(guide) if fmt == "html" else guide_markdown(guide)
    if output is None:
        out.file.write(inert(text))
        out.file.flush()
        return 0
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError([f"{output}: cannot write the guide: {exc.strerror or exc}"]) from None
    out.print(inert(f"Guide written to {output}", one_line=True), markup=False, highlight=False,
              soft_wrap=True)
    return 0


def print_briefing(name: str, out: Console) -> int:
    from rich.markdown import Markdown
    from rich.table import Table

    exercise = load_named_exercise(name)
    out.print(Markdown(f"# {exercise.title}\n\n*{exercise.summary}*"))
    out.print(f"Length about {exercise.length} min · level {exercise.level} · the clock runs "
              f"{exercise.clock.start:%H:%M}-{exercise.clock.end:%H:%M} {exercise.clock.zone}")
    if exercise.briefing:
        out.print(Markdown(exercise.briefing))
    table = Table(title="Roles", title_justify="left")
    table.add_column("role", style="bold", no_wrap=True)
    table.add_column("who")
    table.add_column("may write")
    table.add_column("try first")
    for role in exercise.roles:
        writes = ", ".join(role.write) or "-"
        if role.break_glass:
            writes += f" (break-glass: {', '.join(role.break_glass)})"
        if role.schema:
            writes += "; may change the schema"
        table.add_row(role.id, role.name, writes, role.example or "")
    out.print(table)
    held = ", ".join(exercise.default_roles) or "none"
    out.print(f"Solo you play: {held}; every other role is played by the automation.")
    return 0
