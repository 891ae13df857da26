"""The guards: what the team put in place, each race step with what was seen stopping it (or
why nothing did), the good path, and the last replay.

The verdicts are the score's; this module adds only what the transcript shows about them, so a
step scored "prevented" with no guard of the team's in place says so instead of reading as the
team's doing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from raceday.transcript import events as ev
from raceday.transcript.debrief.model import Edit, GoodPath, Guards, Replay, ReplayStep, StepOutcome
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.log import of_kind
from raceday.transcript.wording import (
    describe_run,
    describe_statement,
    judged_by_words,
    plural,
    step_word,
)


def build_guards(r: Reading) -> Guards:
    last = next((e for e in reversed(r.events) if isinstance(e, ev.Replay)), None)
    return Guards(
        schema_changes=tuple(c for _, c in r.changes() if c.schema_changed and not c.automated),
        edits=tuple(Edit(r.time(e), e.role, e.statement, e.sql, e.before)
                    for e in of_kind(r.events, ev.Edit)),
        steps=step_outcomes(r, last),
        good_path=tuple(GoodPath(p.id, p.title, p.ok, p.why)
                        for p in (r.score.guards.good_path
                                  if r.score is not None and r.score.guards else ())),
        blocked=_blocked(r),
        replay=replace(replay_view(r, last), asked=tuple(
            r.time(e) for e in of_kind(r.events, ev.Replay)
            if not e.final and e.available and e.result is not None)),
    )


def _blocked(r: Reading) -> tuple[str, ...]:
    """The normal night's good writes the guards refused, and the harms the team's world
    showed on a normal night (no fault of its own), with what they cost in all."""
    scored = r.score.guards if r.score is not None else None
    if scored is None:
        return ()
    harmed = normal_harms(r)
    if not scored.blocked_good_writes and not harmed:
        return ()
    what = "refused good writes" if not harmed else (
        "harms on the normal night" if not scored.blocked_good_writes
        else "refused good writes and the harms on the normal night")
    return tuple(f"BLOCKED on the normal night: {b.task} at {b.at} ({b.outcome})"
                 for b in scored.blocked_good_writes) + tuple(
        f"HARMED with no race: the team's world showed {line}" for line in harmed) + (
        (f"The {what} cost the guards {scored.collateral} points.",)
        if scored.collateral else ())


def normal_harms(r: Reading) -> list[str]:
    """What the team's world showed on the final replay's normal nights (no delayed worker,
    no fault of the night's own), which the score's collateral counts: "'title' for 115
    minutes on the normal night from 23:20", one each."""
    scored = r.score.guards if r.score is not None else None
    final = next((e for e in reversed(r.events) if isinstance(e, ev.Replay) and e.final), None)
    if scored is None or not scored.collateral or final is None or final.result is None:
        return []
    titles = {h.id: h.title for h in scored.harms if not h.practice and h.title}
    return [f"'{titles.get(h.harm, h.harm)}' for {plural(h.minutes, 'minute')} on {h.night}"
            + (f" from {h.first_at}" if h.first_at else "")
            for h in final.result.normal_harms if h.minutes]


# -- the race, step by step ----------------------------------------------------------------


def step_outcomes(r: Reading, replay: ev.Replay | None) -> tuple[StepOutcome, ...]:
    happened: dict[str, ev.RaceStep] = {}
    for event in of_kind(r.events, ev.RaceStep):
        if event.happened:
            happened.setdefault(event.step, event)
    verdicts = {v.id: v for v in r.score.steps} if r.score is not None else {}
    judged = judged_by_words(r.score.guards.judged_by) if r.score and r.score.guards else ""
    left = r.team_left.minute if r.team_left is not None else None
    replayed = ({s.id: s for s in replay.result.steps}
                if replay is not None and replay.result is not None else {})
    live_word = "did not happen" if r.complete else f"not by {r.last_time}"
    outcomes: list[StepOutcome] = []
    for step in dict.fromkeys([*r.steps, *verdicts, *happened]):
        verdict = verdicts.get(step)
        hit = happened.get(step)
        info = r.steps.get(step)
        title = (hit.title if hit and hit.title else verdict.title if verdict and verdict.title
                 else info.title if info else "")
        guarded, evidence = _evidence(r, step, hit is not None, happened, replay,
                                      replayed.get(step))
        if not guarded and not (verdict and verdict.status == "prevented" and not verdict.detail):
            evidence = ""  # why nothing stopped it, only beside a "prevented" with no why
        live = ("happened" if hit else step_word(verdict.live) if verdict and verdict.live
                else live_word)
        outcomes.append(StepOutcome(
            step, title, live,
            step_word(verdict.status) if verdict else "", verdict.detail if verdict else "",
            r.time(hit) if hit else None, bool(hit and hit.by_player), guarded, evidence,
            judged, bool(hit and (hit.after_team_left or (left is not None
                                                          and hit.minute > left)))))
    return tuple(outcomes)


def _evidence(r: Reading, step: str, hit: bool, happened: dict[str, ev.RaceStep],
              replay: ev.Replay | None, replayed: ev.StepReplay | None) -> tuple[bool, str]:
    """(whether a guard of the team's was seen stopping the step itself, what was seen)."""
    if (replay is not None and replayed is not None and replayed.status == "prevented"
            and replayed.at is not None and r.guards_by(replay.minute)):
        return True, (f"the replay at {r.time(replay)} ran it against the team's world: at "
                      f"{replayed.at}, {replayed.outcome}")
    if hit:
        return False, ""
    info = r.steps.get(step)
    if info is None:
        return False, ""
    if info.after is not None and info.after not in happened:
        return False, f"it follows {info.after}, which did not happen"
    since = happened[info.after].minute if info.after is not None else -1
    runs = [run for run in r.runs(info.task) if run.end.minute >= since]
    for run in runs:
        if run.end.outcome in ("failed", "zero_rows") and r.guards_by(run.end.minute):
            return True, (f"a guard of the team's was in place when {info.task} ran at "
                          f"{r.time(run.end)}: {describe_run(run.statements)}")
    due = next((d for d in of_kind(r.events, ev.TaskDue)
                if d.task == info.task and d.minute >= since), None)
    if due is not None:
        wrote = next((s for s in of_kind(r.events, ev.Statement) if s.seq > due.seq
                      and s.role == due.role and not s.automated and s.writes), None)
        did = (f"; their write at {r.time(wrote)}: {describe_statement(wrote)}" if wrote
               else "; they wrote nothing as that role")
        return False, f"a player held {due.role} when {info.task} fell due at {r.time(due)}{did}"
    if runs and all(run.end.outcome == "skipped" for run in runs):
        return False, f"the automation was switched off whenever {info.task} fell due"
    if not runs:
        return False, f"its task {info.task} never ran"
    if not r.guard_minutes:
        return False, "no guard of the team's was in place"
    return False, f"no run of {info.task} was refused or changed nothing"


# -- the replay ------------------------------------------------------------------------------


def replay_view(r: Reading, event: ev.Replay | None) -> Replay:
    """The last replay: each step's verdict and what the replayed world did."""
    if event is None:
        return Replay(False, None, "No replay was run in this session.")
    result = event.result
    why = event.note or event.error or ""
    if not event.available or result is None:
        return Replay(False, r.time(event), f"No replay result{': ' + why if why else ''}.")
    steps = tuple(ReplayStep(s.id, s.title, s.status, _detail(s)) for s in result.steps)
    return Replay(True, r.time(event), event.note or "", steps, _details(event, result))


def _detail(s: ev.StepReplay) -> str:
    parts = [f"at {s.at}"] if s.at else []
    parts += [s.outcome] if s.outcome else []
    parts += [f"then {s.next}"] if s.next else []
    parts += ["faults after it: " + "; ".join(s.faults_after)] if s.faults_after else []
    return "; ".join(parts)


def _details(event: ev.Replay, result: ev.ReplayResult) -> tuple[str, ...]:
    lines = []
    if result.prevented:
        lines.append("Prevented in the replay: " + ", ".join(result.prevented) + ".")
    if result.happened:
        lines.append("Happened in the replay: " + ", ".join(result.happened) + ".")
    lines.append(f"In the replay the fault began at {result.fault_at}." if result.fault_at
                 else "In the replay no fault occurred.")
    lines += [f"A good write of the normal night was refused: {b.task} at {b.at} ({b.outcome})."
              for b in result.blocked_good_writes]
    if not result.blocked_good_writes:
        lines.append("No good write of the normal night was refused.")
    lines += [f"Warning: {w}" for w in result.warnings]
    if result.folder:
        path = Path(result.folder)
        shown = f"{path.parent.name}/{path.name}" if path.parent.name == "replay" else result.folder
        lines.append(f"The replay's own transcript: {shown} (in the session folder).")
    if event.guards is not None:
        g = event.guards
        lines.append(f"This replay alone earns guards {g.points}/{g.max}"
                     + (f" (after -{g.penalty} for the blocked good writes)." if g.penalty
                        else "."))
    return tuple(lines)


def guards_in_place(r: Reading, minute: int) -> str:
    """A sentence for a race step that happened: were any of the team's guards in place?"""
    n = r.guards_by(minute)
    if n == 0:
        return "no guard of the team's (schema change or edit) was in place by then"
    return f"{plural(n, 'guard')} of the team's {'was' if n == 1 else 'were'} in place and did not stop it"
