"""`raceday brief EXERCISE --facilitator`: the facilitator's guide, kept apart from the
players' briefing because it gives the answers away.

The timeline (every inject and every task, with the time it arrives and what it is for),
the race as the automation plays it, the answer key (which findings are right, what stops
each race step, the hints), how the score is made, and the facilitator's keys. Built from
the exercise alone; Markdown, so it prints and reads on paper.
"""

from __future__ import annotations

from dataclasses import dataclass

from raceday.exercise.model import Exercise, Inject, InjectKind, Task
from raceday.exercise.times import format_duration, format_time

GAME_DAY_LENGTHS = (45, 60, 75, 90)

_PURPOSE = {
    InjectKind.ALARM: "a symptom: does the team look, and at what? (detection)",
    InjectKind.STATUS: "what was said in public then: set the team's own updates beside it",
    InjectKind.MESSAGE: "context and pressure from outside the team",
    InjectKind.REVEAL: "that night's record, for comparison in the debrief (not a clue)",
}


@dataclass(frozen=True)
class _Row:
    minute: int
    order: int
    kind: str
    who: str
    what: str
    purpose: str


def _face(exercise: Exercise, minute: int) -> str:
    return format_time(minute, exercise.clock.start)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _inject_row(exercise: Exercise, inject: Inject, order: int) -> _Row:
    purpose = _PURPOSE.get(inject.kind, "")
    if inject.kind is InjectKind.REVEAL and inject.phase:
        purpose += f"; marks that night's {inject.phase}"
    if inject.source:
        purpose += f" [source: {inject.source}]"
    if inject.expect:  # marked met, partly or not met: m then x on the console
        purpose += ". Expected of the team: " + "; ".join(
            f"({n}) {x}" for n, x in enumerate(inject.expect, start=1)) + (
            f" (the marks rate {inject.objective})" if inject.objective else "")
    what = inject.title + (f": {inject.text}" if inject.text else "")
    return _Row(inject.at if inject.at is not None else inject.after, order, inject.kind.value,
                ", ".join(inject.to) or "everyone", _cell(what), purpose)


def _fault_rows(exercise: Exercise) -> list[str]:
    """The injects that follow the world: each arrives once its invariant's fault first
    begins (and never if it never does), whenever that is."""
    rows = [(_inject_row(exercise, i, n), i) for n, i in enumerate(exercise.injects)
            if i.at is None]
    rows.sort(key=lambda pair: (pair[1].on_fault, pair[1].after, pair[0].order))
    if not rows:
        return []
    out = ["", "### Injects that follow the world", "",
           "These have no time: each arrives once, when the fault it follows begins (plus "
           "its delay, if that spell of the fault lasts so long, or once the fault has held "
           "that long in all within a window), and never if the team keeps that fault away. "
           "As the automation plays the night, they come with the fault.", "",
           "| when | kind | to | what | what it is for |", "|---|---|---|---|---|"]
    for row, inject in rows:
        when = _fault_when(inject)
        out.append(f"| {when} | {row.kind} | {row.who} | {row.what} | {_cell(row.purpose)} |")
    return out


def _fault_when(inject: Inject) -> str:
    """'fault `x` begins +10 min', or with a window 'fault `x` held 3h of the last 4h'."""
    if inject.within:
        return (f"fault `{inject.on_fault}` held {format_duration(inject.after)} of the last "
                f"{format_duration(inject.within)}")
    return f"fault `{inject.on_fault}` begins" + (f" +{inject.after} min" if inject.after else "")


def _task_rows(exercise: Exercise, task: Task, order: int, steps: dict[str, list[str]]) -> _Row:
    times = task.times()
    when = "once" if len(times) == 1 else \
        f"every {task.every} min to {_face(exercise, times[-1])}"
    purpose = "automation's routine work" if task.statements and not task.done_when else ""
    if task.done_when:
        purpose = "a player's task: done when the world shows it"
    if task.id in steps:
        purpose = (f"RACE STEP {', '.join(steps[task.id])} happens here if nothing stops it; "
                   + purpose).rstrip("; ")
    return _Row(task.at, order, f"task ({when})", task.role, _cell(task.title), purpose)


def facilitator_markdown(exercise: Exercise) -> str:
    ex = exercise
    clock = ex.clock
    night = clock.length_minutes
    out = [f"# Facilitator's guide: {ex.title}", "",
           "**For the facilitator only: this guide gives the answers away. Players read "
           "`raceday brief` (the briefing).**", "",
           f"*{_cell(ex.summary)}*", "",
           f"The clock runs {clock.start:%H:%M}-{clock.end:%H:%M} {clock.zone} "
           f"({night} simulated minutes); players need about {ex.length} minutes at the "
           "turns pace. Level: " + ex.level + ".", ""]
    out += ["## Running it", "",
            "| game day | speed | play it with |", "|---|---|---|"]
    for minutes in GAME_DAY_LENGTHS:
        speed = round(night / minutes, 2)
        out.append(f"| {minutes} min | {speed:g}x | `raceday play {ex.id} --mode team "
                   f"--pace live --length {minutes}` |")
    out += ["",
            "On the play screen: **ctrl+f** the facilitator's menu (an inject to one role or "
            "everyone, now or at a time; pause; speed; skip), **ctrl+t** pause / resume, "
            "**ctrl+g** speed (each choice says how long the night lasts), **ctrl+n** skip to "
            "the next inject (it stops when a played role's task falls due), **ctrl+o** an "
            "observer's note (who, what) for the debrief, **F2** passes the keyboard to the "
            "next seat. Every one of them is recorded in the transcript.", "",
            f"Across terminals: `raceday host {ex.id} --seats ROLE,ROLE,...` plays the night "
            f"in about {ex.length} minutes ({round(night / max(1, ex.length), 2):g}x; "
            "`--length` or `--speed` for another pace) and opens in a lobby: each player presses "
            "**F10** (or **ctrl+b** in a browser) when ready, the console shows who is ready, "
            "who is not and who is missing, and **s** starts the clock (asking first if "
            "someone is not ready). Its keys: **space** "
            "pause / resume, **g** speed, **n** skip to the next inject or a seat's due task "
            "(the seats panel lists each seat's due and overdue work; a one-off task a seat "
            "left due is never skipped past unasked: **n** offers to have the automation do "
            "it, so one quiet player cannot stall the night), **i** an inject now or "
            "when a harm holds, **h** a hint to everyone or one role, **a** hand a seat's "
            "routine tasks to the automation and back, or one task it left due, **o** a note "
            "(start it with + for a "
            "strength, - for an area for improvement), **w** the players' SQL on the projector "
            "for the hot wash, **v** hide the answers to share the screen. After the night, "
            "`raceday aar SESSION` fills in the after-action report with the room.", "",
            "Roles: " + "; ".join(f"**{r.id}** ({r.name})" for r in ex.roles)
            + f". Solo, a player holds {', '.join(ex.default_roles) or 'none'}; every role "
            "nobody holds is played by the automation with exactly the exercise's SQL.", ""]
    steps: dict[str, list[str]] = {}
    guards = ex.scoring.guards
    for step in guards.steps if guards else ():
        steps.setdefault(step.task, []).append(step.id)
    if steps:
        out += ["A race step held by a person (the timeline marks each RACE STEP's task) "
                "happens only if they do it at its minute: a stale write made a minute late "
                "can be put right by the automation's next run, and the fault then comes later "
                "or not at all. Pause a minute before the step (**space**), tell the player, "
                "and resume; or hold the fault step (**f**) until they have acted.", ""]
    rows = [_inject_row(ex, i, n) for n, i in enumerate(ex.injects) if i.at is not None]
    rows += [_task_rows(ex, t, 1000 + n, steps) for n, t in enumerate(ex.tasks)]
    out += ["## Timeline (injects and tasks)", "",
            "| time | kind | to | what | what it is for |", "|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r.minute, r.order)):
        out.append(f"| {_face(ex, row.minute)} | {row.kind} | {row.who} | {row.what} | "
                   f"{_cell(row.purpose)} |")
    out += _fault_rows(ex)
    out += ["", "## Answer key", "", "### Findings (F8)", ""]
    for finding in ex.findings:
        mark = "right" if finding.correct else "WRONG (costs points)"
        line = f"- **{mark}**: {_cell(finding.text)}"
        if finding.explanation:
            line += f" ({_cell(finding.explanation)})"
        out.append(line)
    if guards and guards.steps:
        out += ["", "### The race steps, and what stops them", ""]
        for step in guards.steps:
            line = f"- **{step.id}** ({step.points} points): {_cell(step.title)}; the task " \
                   f"`{step.task}` does it"
            stops = [p for p in ex.debrief.checklist if step.id in p.steps and p.action]
            if stops:
                line += ". Stopped by: " + " Or: ".join(
                    f"*{p.title}*: {_cell(p.action)}" for p in stops)
            out.append(line)
    if ex.invariants:
        out += ["", "### Faults raceday watches for (the world is broken while they hold)", ""]
        out += [f"- **{i.id}**: {_cell(i.fault)}" for i in ex.invariants]
    if ex.milestones:
        out += ["", "### Milestones of the recovery", ""]
        out += [f"- **{m.id}**: {_cell(m.label)}" for m in ex.milestones]
    hinted = [t for t in ex.tasks if t.hint]
    if ex.hints or hinted:
        out += ["", "### Hints", ""]
        out += [f"- ({h.cost} point{'s' if h.cost != 1 else ''}"
                + (f", task `{h.task}`" if h.task else "") + f") {_cell(h.text)}"
                for h in ex.hints]
        out += [f"- (free, shown with task `{t.id}`) {_cell(t.hint)}" for t in hinted]
    if ex.debrief.checklist:
        out += ["", f"### {ex.debrief.checklist_title or 'Checklist'}", ""]
        out += [f"- **{p.title}**: {_cell(p.action or p.text)}" for p in ex.debrief.checklist]
    out += ["", "## How the score is made", ""]
    s = ex.scoring
    if s.detection:
        out.append(f"- Detection {s.detection.points}: full marks within "
                   f"{s.detection.full_within} min of the fault, nothing after "
                   f"{s.detection.zero_after} min"
                   + (f"; a wrong finding costs {s.detection.wrong_finding_cost}"
                      if s.detection.wrong_finding_cost else ""))
    if s.guards:
        out.append(f"- Guards {s.guards.points}: the race replayed against the team's "
                   "database at the end; each step it prevents earns its points; a guard that "
                   "refuses a good write of the normal night costs points")
    if s.recovery:
        out.append(f"- Recovery {s.recovery.points}: "
                   + "; ".join(f"{i.title} ({i.points})" for i in s.recovery.items))
    if s.tasks:
        out.append(f"- Tasks {s.tasks}: the players' tasks done")
    out.append("")
    return "\n".join(out)
