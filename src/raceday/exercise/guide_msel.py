"""The guide's master scenario events list (MSEL) and what to say at each pause.

Every inject of exercise.yaml is one card, in the order the night brings them: the timed ones
at their minute, then those that follow the world (an invariant's fault beginning). A card
says who receives the inject, what it is for, what the team is expected to do or say (the
`expect:` lines the facilitator marks) and questions to put to the room. The pauses are the
exercise's phases of the real night, each at the reveal that marks it.
"""

from __future__ import annotations

from raceday.exercise.guide_doc import Block, Card, Field, Items, Para, Section, Sub, Table, flat
from raceday.exercise.model import Exercise, Inject, InjectKind, Phase, PhaseTeam
from raceday.exercise.times import format_duration, format_time

PURPOSE = {
    InjectKind.ALARM: "A symptom: does the team look, and at what? (detection)",
    InjectKind.STATUS: "What was said in public then: set the team's own update beside it.",
    InjectKind.MESSAGE: "Context and pressure from outside the team.",
    InjectKind.REVEAL: "That night's record, for comparison (not a clue).",
}

QUESTIONS = {
    InjectKind.ALARM: ("What does this alarm tell you, and what would you look at first?",
                       "Is it the cause, or one more symptom of something else?"),
    InjectKind.STATUS: ("What would your own status update say now, and when is the next one?",),
    InjectKind.MESSAGE: ("What does this change for the team, and who answers it?",),
    InjectKind.REVEAL: ("Where was your team at this moment, beside that night?",),
}

PHASE_QUESTIONS = {
    PhaseTeam.FAULT: ("What did the customers see first, and who on the team noticed?",
                      "What is the first thing you would check?"),
    PhaseTeam.DETECTED: ("What do you know, and how do you know it? Say it as a finding (F8).",
                         "What would you need to see to be sure?"),
    PhaseTeam.STOPPED: ("Is anything still changing the world while you repair it?",
                        "Who can stop it, and how?"),
    PhaseTeam.REPAIRED: ("What will you change by hand, and what could that change break?",),
    PhaseTeam.RESTORED: ("How do you know the customers are back?",
                         "What would bring the fault back?"),
}


def ordered_injects(exercise: Exercise) -> list[Inject]:
    """The injects as the night brings them: timed by minute, then world-triggered by fault
    and delay (the file's order breaks ties)."""
    timed = [i for i in exercise.injects if i.at is not None]
    world = [i for i in exercise.injects if i.at is None]
    order = {i.id: n for n, i in enumerate(exercise.injects)}
    timed.sort(key=lambda i: (i.at or 0, order[i.id]))
    world.sort(key=lambda i: (i.on_fault, i.after, order[i.id]))
    return timed + world


def when(exercise: Exercise, inject: Inject) -> str:
    """'23:40', or 'when `empty-answer` begins, +2 min' for an inject that follows the world."""
    if inject.at is not None:
        return format_time(inject.at, exercise.clock.start)
    if inject.within:
        return (f"when `{inject.on_fault}` has held {format_duration(inject.after)} of the "
                f"last {format_duration(inject.within)}")
    return f"when `{inject.on_fault}` begins" + (f", +{inject.after} min" if inject.after else "")


def fault_text(exercise: Exercise, invariant_id: str) -> str:
    found = next((i for i in exercise.invariants if i.id == invariant_id), None)
    return flat(found.fault) if found else invariant_id


def who(inject: Inject) -> str:
    return ", ".join(inject.to) or "everyone"


def _purpose(exercise: Exercise, inject: Inject) -> str:
    purpose = PURPOSE.get(inject.kind, "")
    if inject.kind is InjectKind.REVEAL and inject.phase:
        phase = next((p for p in exercise.debrief.phases if p.id == inject.phase), None)
        purpose += f" It marks that night's {phase.label if phase else inject.phase}"
        purpose += f" (the record says {inject.event_at})." if inject.event_at else "."
    if inject.objective:
        purpose += f" Its marks rate the {inject.objective} objective in the AAR."
    return purpose


def inject_card(exercise: Exercise, inject: Inject, number: int) -> Card:
    fields = [Field("When", (when(exercise, inject),)),
              Field("Sent to", (who(inject),)),
              Field("Kind", (inject.kind.value,))]
    if inject.at is None:
        fields.append(Field("Follows", (
            f"{fault_text(exercise, inject.on_fault)} (never sent if the team keeps it away)",)))
    fields.append(Field("Says", (flat(inject.title + (f": {inject.text}" if inject.text
                                                      else "")),)))
    fields.append(Field("Purpose", (_purpose(exercise, inject),)))
    if inject.expect:
        fields.append(Field("Expected actions", tuple(
            f"{x} (mark `{inject.id}:{n}`)" for n, x in enumerate(inject.expect, start=1)),
            ordered=True))
    else:
        fields.append(Field("Expected actions", ("none written: watch what the team does",)))
    fields.append(Field("Discussion questions", QUESTIONS.get(inject.kind, ())))
    if inject.source:
        source = exercise.debrief.source(inject.source)
        fields.append(Field("Source", (f"{inject.source}" + (f": {source.title}" if source
                                                             else ""),)))
    return Card(f"{number}. {when(exercise, inject)}: {flat(inject.title)}",
                f"inject-{inject.id}", tuple(fields))


def msel_section(exercise: Exercise) -> Section:
    injects = ordered_injects(exercise)
    blocks: list[Block] = [
        Para("Every inject of the exercise, in the order the night brings them. Timed ones "
             "arrive at their minute whatever the team does; the others follow the world: "
             "each arrives once, when the fault it follows begins (plus its delay), and never "
             "if the team keeps that fault away. Mark each expected action met, partly or not "
             "met live (console **m**, then **x** on the inject) or in the hot wash "
             "(`raceday aar transcripts/<session> --mark INJECT:N met`). Your own prepared "
             "injects (`--injects FILE`) join these in the console's master list (**m**)."),
        Table(("when", "inject", "kind", "to"), tuple(
            (f"{n}. {when(exercise, i)}", flat(i.title), i.kind.value, who(i))
            for n, i in enumerate(injects, start=1))),
    ]
    blocks += [inject_card(exercise, i, n) for n, i in enumerate(injects, start=1)]
    return Section("msel", "Master scenario events list (MSEL)", tuple(blocks))


def pauses_section(exercise: Exercise, following: Exercise | None = None) -> Section:
    """What to say at each phase of the real night, and before a step a person holds."""
    ex = exercise
    blocks: list[Block] = [Para(
        "Pause the clock (**space** on the console, **ctrl+t** on one screen) at each moment "
        "below, tell the room where that night was, and ask. Keep each pause short: the "
        "players' screens show the reveal on their own, the pause is for talking.")]
    for phase in _phases_in_order(ex):
        reveal = next((i for i in ex.injects if i.phase == phase.id), None)
        lines: list[str] = []
        if reveal is not None and reveal.at is not None:
            at = format_time(reveal.at, ex.clock.start)
            lines.append(f"Pause at {at}, when the reveal \"{flat(reveal.title)}\" arrives.")
            lines.append("Say: " + flat(reveal.text or reveal.title))
        elif phase.team is PhaseTeam.FAULT:
            lines.append("Pause when the fault begins: the first alarms that follow the world "
                         "arrive with it.")
        else:
            lines.append("No inject marks it: pause when the team reaches it (or not at all "
                         "if the night ends first).")
        lines += [f"Ask: {q}" for q in PHASE_QUESTIONS.get(phase.team, ())]
        blocks += [Sub(flat(phase.label)), Items(tuple(lines))]
    held = _held_steps(ex)
    if held:
        blocks += [Sub("Before a step a person holds"), Items(tuple(held))]
    end = format_time(ex.clock.length_minutes, ex.clock.start)
    blocks += [Sub(f"The end of the night ({end})"), Items(tuple(
        [f"At {end} the night is over and raceday judges it"
         + (": the race is replayed against the team's database, which takes a moment."
            if ex.replay is not None else "."),
         "Read the score together (the end screen, or the projector), then start the hot "
         "wash."]
        + ([f"The night goes on in **{flat(following.title)}**: `raceday guide "
            f"{following.id}` for its guide, if the room has time for the next act."]
           if following is not None else [])))]
    return Section("pauses", "What to say at each pause", tuple(blocks))


def _phases_in_order(exercise: Exercise) -> list[Phase]:
    """The phases as the clock meets them: the fault (no reveal marks it) first, then those a
    timed reveal marks by its minute, then those only the team's own acts mark."""
    minutes = {i.phase: i.at for i in exercise.injects if i.phase and i.at is not None}
    phases = exercise.debrief.phases
    fault = [p for p in phases if p.id not in minutes and p.team is PhaseTeam.FAULT]
    timed = sorted((p for p in phases if p.id in minutes), key=lambda p: minutes[p.id] or 0)
    rest = [p for p in phases if p.id not in minutes and p.team is not PhaseTeam.FAULT]
    return fault + timed + rest


def _held_steps(exercise: Exercise) -> list[str]:
    """A race step's task held by a person happens only if they act on time: one line per
    task, saying when."""
    guards = exercise.scoring.guards
    by_task: dict[str, list[str]] = {}
    for step in guards.steps if guards else ():
        by_task.setdefault(step.task, []).append(f"`{step.id}`")
    out: list[str] = []
    for task_id, named in by_task.items():
        task = next((t for t in exercise.tasks if t.id == task_id), None)
        if task is None:
            continue
        steps = " and ".join(named)
        verb = "happens" if len(named) == 1 else "happen"
        at = format_time(task.at, exercise.clock.start)
        if task.every is None:
            out.append(f"If a person holds **{task.role}**, pause a minute before {at} "
                       f"({flat(task.title)}): {steps} {verb} only if they do it at its "
                       "minute. Tell them, then resume; or hold the step (**f**) until they "
                       "have acted.")
        else:
            until = format_time(task.times()[-1], exercise.clock.start)
            out.append(f"If a person holds **{task.role}**: {steps} {verb} on one of the "
                       f"runs of \"{flat(task.title)}\" (every {task.every} min, {at} to "
                       f"{until}), so they must keep its cadence; remind them at a pause.")
    return out
