"""The guide's answer key and hot-wash script.

The answer key is what the judge knows: which findings are right and what makes one count,
the race steps and what stops each, the harms the guards are judged by, the recovery, and the
hints with their price. The hot wash puts the questions in order and ends with the
`raceday aar` calls that record the room's answers.
"""

from __future__ import annotations

from raceday.exercise.guide_doc import Block, Commands, Items, Para, Section, Sub, Table, flat
from raceday.exercise.guide_msel import fault_text, ordered_injects, when
from raceday.exercise.model import Exercise, HarmWorth
from raceday.exercise.times import format_time


def _counts_when(exercise: Exercise, evidence: str | None) -> str:
    if not evidence:
        return "whenever it is declared"
    if any(i.id == evidence for i in exercise.invariants):
        return f"only while `{evidence}` holds ({fault_text(exercise, evidence)})"
    return f"only once the race step `{evidence}` has happened"


def _findings(exercise: Exercise) -> list[Block]:
    rows = tuple((f"`{f.id}`: {flat(f.text)}",
                  "right" if f.correct else "WRONG (costs points)",
                  flat(f.explanation) or "-",
                  _counts_when(exercise, f.evidence) if f.correct else "-")
                 for f in exercise.findings)
    return [Sub("Findings (declared with F8)"),
            Table(("finding", "verdict", "why", "counts"), rows),
            Para("A finding in a player's own words counts only as you rule it (**r** on the "
                 "console: right, partly right or wrong, with a note players do not see).")]


def _race(exercise: Exercise) -> list[Block]:
    guards = exercise.scoring.guards
    if guards is None or not guards.steps:
        return []
    lines = []
    for step in guards.steps:
        task = next((t for t in exercise.tasks if t.id == step.task), None)
        at = format_time(task.at, exercise.clock.start) if task else "?"
        line = (f"**{step.id}**: {flat(step.title) or step.id}. Done by "
                + (f"{task.role}'s task \"{flat(task.title)}\" (from {at})" if task
                   else f"task `{step.task}`"))
        if step.after:
            line += f", after `{step.after}`"
        stops = [p for p in exercise.debrief.checklist if step.id in p.steps and p.action]
        if stops:
            line += ". Stopped by: " + " Or: ".join(
                f"*{flat(p.title)}*: {flat(p.action)}" for p in stops)
        lines.append(line)
    return [Sub("The race, step by step"), Items(tuple(lines), ordered=True)]


def _where(exercise: Exercise, harm: HarmWorth) -> str:
    if not harm.night:
        return "the race nights (tonight's and a variant)"
    night = exercise.replay.practice_night(harm.night) if exercise.replay else None
    return f"practice night `{harm.night}`" + (f": {flat(night.title)}" if night else "")


def _guards(exercise: Exercise) -> list[Block]:
    guards = exercise.scoring.guards
    if guards is None:
        return []
    blocks: list[Block] = [Sub(f"The guards that count ({guards.points} points)")]
    if guards.harms:
        blocks += [
            Para("At the end the race is replayed against the team's database; a guard earns "
                 "points only for harm it keeps from the customers:"),
            Table(("harm kept away", "judged on", "points", "how"), tuple(
                (f"`{h.invariant}`: {fault_text(exercise, h.invariant)}", _where(exercise, h),
                 str(h.points),
                 "by the share of its minutes avoided" if h.grade == "minutes"
                 else "all or nothing")
                for h in guards.harms))]
    else:
        blocks.append(Items(tuple(f"`{s.id}` prevented: {s.points} points"
                                  for s in guards.steps)))
    if guards.good_path:
        blocks += [Para(f"A guard must still let the normal night's good writes through; each "
                        f"one it refuses costs {guards.collateral} points:"),
                   Items(tuple(flat(g.title) for g in guards.good_path))]
    return blocks


def _recovery(exercise: Exercise) -> list[Block]:
    rubric = exercise.scoring.recovery
    blocks: list[Block] = []
    if rubric is not None and rubric.items:
        blocks += [Sub(f"Recovery ({rubric.points} points)"),
                   Items(tuple(f"{flat(i.title)} ({i.points})" for i in rubric.items))]
    if exercise.milestones:
        blocks += [Para("Milestones raceday watches for:"),
                   Items(tuple(f"`{m.id}`: {flat(m.label)}" for m in exercise.milestones))]
    if exercise.invariants:
        blocks += [Sub("Faults raceday watches for (the world is broken while one holds)"),
                   Items(tuple(f"`{i.id}`: {flat(i.fault)}" for i in exercise.invariants))]
    return blocks


def _hints(exercise: Exercise) -> list[Block]:
    free = [t for t in exercise.tasks if t.hint]
    if not exercise.hints and not free:
        return []
    rows = [(f"`{h.id}`", f"`{h.task}`" if h.task else "any", str(h.cost), flat(h.text))
            for h in exercise.hints]
    rows += [("(with the task)", f"`{t.id}`", "free", flat(t.hint)) for t in free]
    tasks = [h.task for h in exercise.hints if h.task]
    ladder = [Para("A task's hints are a ladder in this order: a player takes the one above "
                   "before the next; you may give either.")] if len(tasks) > len(set(tasks)) else []
    return [Sub("Hints (**h** on the console previews one before it goes out)"), *ladder,
            Table(("hint", "task", "cost", "text"), tuple(rows))]


def answer_key_section(exercise: Exercise) -> Section:
    blocks: list[Block] = [Para("Keep this section from the players: it is what the judge "
                                "knows.", note=True)]
    blocks += _findings(exercise) + _race(exercise) + _guards(exercise)
    blocks += _recovery(exercise) + _hints(exercise)
    return Section("answer-key", "Answer key", tuple(blocks))


def hotwash_section(exercise: Exercise) -> Section:
    """The questions in order, then the calls that put the room's answers in the AAR."""
    p = "raceday"
    s = exercise.scoring
    questions = ["Each player: what happened, in your own words, from the first alarm to "
                 "the end?",
                 "When did you first know something was wrong, and what told you?"]
    if s.detection:
        questions.append("Detection: which finding did you declare, and when? What would have "
                         "told you sooner?")
    guards = s.guards
    if guards and guards.steps:
        first = guards.steps[0]
        questions.append(f"Guards: what would have stopped `{first.id}` "
                         f"({flat(first.title) or first.id})? Did your guard let the good "
                         "writes through?")
    if s.recovery:
        questions.append("Recovery: what did you change by hand, in what order, and what "
                         "would you do first next time?")
    expecting = [i for i in ordered_injects(exercise) if i.expect]
    for inject in expecting:
        listen = "; ".join(inject.expect)
        questions.append(f"The inject \"{flat(inject.title)}\" ({when(exercise, inject)}): "
                         f"what did you do about it? Listen for: {listen}.")
    questions += ["What went well? (each a strength: a note starting with +)",
                  "What would you change? (each an area for improvement: a note starting "
                  "with -)",
                  "What one action will the team take, who owns it, and by when?"]
    marks = [f"--mark {i.id}:{n} met" for i in expecting for n in range(1, len(i.expect) + 1)]
    commands = (
        f"{p} aar transcripts/<session>            # what can be filled in, numbered",
        f"{p} aar transcripts/<session> " + (marks[0] + " " if marks else "")
        + "--analysis 1 \"...\" --recommendation 1 \"...\"",
        f"{p} aar transcripts/<session> --action \"...\" --owner new NAME "
        "--due new YYYY-MM-DD --evaluators \"NAMES\"",
        f"{p} aar transcripts/<session> --note \"+ ...\" --at HH:MM --by NAME",
        f"{p} aar transcripts/<group>              # several teams: the room's AAR",
        f"{p} debrief transcripts/<session> --format html -o debrief.html",
    )
    blocks: list[Block] = [
        Para("Straight after the night, with the debrief on the projector. Ask in this order; "
             "write down the answers, or type them in as you go with the calls below."),
        Items(tuple(questions), ordered=True),
        Sub("Record it: the after-action report"),
        Para("Each `--mark INJECT:N` takes met, partly or not-met (the marks fill the AAR's "
             "inject rows and rate their objective, never the score)"
             + (": " + ", ".join(f"`{m.removeprefix('--mark ').removesuffix(' met')}`"
                                 for m in marks) if marks else "")
             + ". The edits go to aar.json beside the transcript, and the debrief is written "
             "again with them."),
        Commands(commands),
    ]
    return Section("hot-wash", "Hot wash and after-action report", tuple(blocks))
