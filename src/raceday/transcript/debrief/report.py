"""The debrief's prose: the summary with its outcome in a few sentences, the score as printed
(with the times and judgements scoring made beside its reasons), and the after-action report
skeleton (strengths, improvements, corrective actions). The score's verdicts are read, never
decided again."""

from __future__ import annotations

from raceday.transcript import events as ev
from raceday.transcript.debrief.guards import normal_harms
from raceday.transcript.debrief.model import (
    AfterAction,
    ChecklistItem,
    CorrectiveAction,
    Declaration,
    Figure,
    Guards,
    ScoreReport,
    ScoreSection,
    Summary,
)
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.debrief.words import duration
from raceday.transcript.wording import fault_sentence, night_sentence, plural


def score_report(r: Reading) -> ScoreReport | None:
    s = r.score
    if s is None:
        return None
    return ScoreReport(
        total=s.total, max=s.max, fault_occurred=s.fault.occurred,
        fault_started_at=s.fault.started_at,
        sections=tuple(ScoreSection(name, x.points, x.max, x.reasons) for name, x in s.parts),
        hints=s.hints.revealed, hint_cost=s.hints.cost, reasons=s.reasons,
        prevented_outright=s.fault.prevented_outright, ended=r.ended,
        fault=fault_sentence(s.fault), figures=_figures(r), judged=_judged(r))


def _figures(r: Reading) -> tuple[Figure, ...]:
    """The times scoring measured, each beside that night's when the exercise has one."""
    s = r.score
    if s is None or not s.fault.occurred:
        return ()
    night = bool(r.night)

    def beside(minutes: int | None) -> str:
        return duration(minutes) if night and minutes is not None else ""

    rows: list[Figure] = []
    d = s.detection
    if d is not None:
        alert = (f"{duration(d.alert_minutes)} (monitor '{d.alert_by}' at {d.alerted_at})"
                 if d.alert_minutes is not None else "no monitor of the team's alerted on it")
        diagnosis = (f"{duration(d.diagnosis_minutes)} ("
                     f"{_finding_text(r, d.diagnosis or '')} at {d.diagnosed_at})"
                     if d.diagnosis_minutes is not None
                     else "no right finding declared while its evidence was there")
        surfaced = (f"{duration(d.latency_minutes)} ({d.by})" if d.latency_minutes is not None
                    else "never")
        # a score that surfaced the fault and records neither time predates the split
        if d.alert_minutes is not None or d.diagnosis_minutes is not None \
                or d.latency_minutes is None:
            rows += [Figure("Time to alert", alert, beside(d.event_minutes)),
                     Figure("Time to diagnosis", diagnosis, beside(d.event_minutes))]
        rows.append(Figure("Surfaced (the earlier; what detection is scored on)", surfaced,
                           beside(d.event_minutes)))
    rec = s.recovery
    if rec is not None:
        if rec.outage_minutes is not None:
            relapsed = (f", {plural(len(rec.relapses), 'relapse')} included (at "
                        f"{', '.join(rec.relapses)})" if rec.relapses else ", no relapse")
            rows.append(Figure("Minutes of outage over the night",
                               f"{duration(rec.outage_minutes)}{relapsed}",
                               beside(rec.event_minutes)))
        held = (f"{duration(rec.minutes_to_restore)} (at {rec.restored_at})"
                if rec.minutes_to_restore is not None else
                "not restored by the end of the night" if not rec.restored else "—")
        rows.append(Figure("Restored for good after", held, beside(rec.event_minutes)))
    return tuple(rows)


def _finding_text(r: Reading, finding: str) -> str:
    """The finding's words: the exercise's, or a player's own (the judge names those
    "<finding>: <words>", judge/facts.py `own_words_key`)."""
    info = r.start.findings.get(finding)
    if info is not None:
        return f"'{info.text}'"
    own = next((e.text for e in r.events if isinstance(e, ev.Declaration)
                and e.verdict == "to_rule" and finding == f"{e.finding}: {e.text}"), finding)
    return f"'{own}'"


def _judged(r: Reading) -> tuple[str, ...]:
    """What else the score judged that its points rest on: false alarms, noise, relapses,
    the team having left early."""
    s = r.score
    if s is None:
        return ()
    out: list[str] = []
    d = s.detection
    for alarm in d.false_alarms if d else ():
        out.append(f"False alarm: {_finding_text(r, alarm.finding)} declared at {alarm.at}, "
                   "when it was not so.")
    for name in d.noise if d else ():
        out.append(f"Noise: monitor '{name}' returned rows while the world was healthy, so its "
                   "alerts do not count as detection.")
    if r.team_left is not None:
        after = sum(1 for e in r.events if e.after_team_left)
        out.append(f"The team left at {r.time(r.team_left)}; the automation alone played the "
                   f"rest of the night to {r.team_left.until or r.last_time} "
                   f"({plural(after, 'event')}) before anything was judged.")
    if s.fault.present_at_end:
        out.append("Still present at the end: " + "; ".join(s.fault.present_at_end) + ".")
    return tuple(out)


def summary(r: Reading, score: ScoreReport | None, declarations: tuple[Declaration, ...],
            guards: Guards) -> Summary:
    s = r.start
    walls = [e.wall_time for e in r.events if e.wall_time]
    ended = ("interrupted: no score" if score is None else
             "played to the end" if score.ended == "ended" else score.ended)
    return Summary(
        exercise=s.exercise, title=s.title or s.exercise, text=s.summary,
        outcome=_outcome(r, score, declarations, guards),
        players=s.players, automated=s.automated,
        roles=tuple((str(k), str(v)) for k, v in s.roles.items()),
        pace=s.pace, zone=s.zone, date=r.clock.date,
        clock_from=r.time(r.events[0]), clock_to=r.time(r.events[-1]),
        wall_started=walls[0] if walls else None, wall_ended=walls[-1] if walls else None,
        events=len(r.events), ended=ended,
        played_on=walls[0][:10] if walls and len(walls[0]) >= 10 else "",
        resumed=tuple(_resumed(r, e) for e in r.events if isinstance(e, ev.SessionResumed)))


def _resumed(r: Reading, e: ev.SessionResumed) -> str:
    """'at 07:04 (after event 7848), and resumed at 14:20 (…)': when it stopped (its last
    recorded event) and where the resume took it on (a wait it was in is played to its end)."""
    last = next((x for x in r.events if x.seq == e.recorded), None)
    stopped = r.time(last) if last is not None else r.time(e)
    where = "there" if stopped == r.time(e) else f"at {r.time(e)}"
    return (f"at {stopped} (after event {e.recorded}), and resumed {where}"
            + (f" ({e.note})" if e.note else ""))


def _outcome(r: Reading, score: ScoreReport | None, declarations: tuple[Declaration, ...],
             guards: Guards) -> str:
    parts: list[str] = []
    if r.unknown is not None:  # an unknown night: which it was comes first
        parts.append(night_sentence(r.unknown))
    detection = r.start.event_figures.get("detection_minutes") if r.night else None
    if r.unknown is not None and r.unknown.night_kind == "quiet" and r.first_fault is None:
        parts.append("Nothing went wrong, so there was nothing to detect or recover.")
    elif r.first_fault is None:
        prevented = [s.id for s in guards.steps if s.outcome == "prevented"]
        stopped = [s.id for s in guards.steps if s.guarded]
        if score is not None and not score.prevented_outright and r.score is not None \
                and r.score.fault.outcome and not r.score.fault.not_needed:
            parts.append(score.fault)
        elif stopped:
            parts.append(f"No fault occurred: the team's guards were seen stopping the race "
                         f"({', '.join(stopped)}), so detection and recovery were not needed.")
        elif prevented:
            parts.append(f"No fault occurred. The score counts the race as prevented "
                         f"({', '.join(prevented)}), but no guard of the team's was seen "
                         "stopping it (see 'The race, step by step').")
        elif score is None:
            parts.append("No fault had occurred when the transcript stops.")
        else:
            parts.append("No fault occurred in this session.")
    else:
        parts.append(f"The fault ({r.first_fault.fault}) began at {r.time(r.first_fault)}.")
        if r.surfaced is not None:
            versus = (f"; {r.night.lower()} it took {duration(detection)}"
                      if detection is not None else "")
            parts.append(f"The team surfaced it at {r.surfaced.time}, "
                         f"{duration(r.surfaced.latency)} later ({r.surfaced.how}"
                         f"{versus}).")
        elif r.complete:
            parts.append("The team never surfaced it with a monitor or a right finding.")
        else:
            parts.append(f"The team had not surfaced it by {r.last_time}, where the transcript "
                         "ends.")
        wrong = [d for d in declarations if not d.correct  # own words: wrong if so ruled
                 and (d.verdict != "to_rule" or d.ruling == "wrong")]
        if wrong:
            parts.append(f"Wrong finding{'s' if len(wrong) > 1 else ''} declared: "
                         + ", ".join(f"'{d.text}' at {d.time}" for d in wrong) + ".")
        if r.stop is not None:
            parts.append(f"The automation was stopped at {r.time(r.stop.event)}.")
        elif r.phase_of("stopped") is not None:
            parts.append("The automation was never stopped." if r.complete else
                         "The automation had not been stopped.")
        parts.extend(_restore_sentences(r))
    if score is not None:
        parts.append(f"Score {score.total}/{score.max}.")
    return " ".join(parts)


def _restore_sentences(r: Reading) -> list[str]:
    if not r.restores:
        return ["The world was never restored." if r.complete else
                "The world had not been restored."]
    restore = r.start.event_figures.get("restore_minutes") if r.night else None
    first = r.restores[0]
    versus = f"; {r.night.lower()}: {duration(restore)}" if restore is not None else ""
    out = [f"The world was first restored at {r.time(first)}, "
           f"{duration(r.after_fault(first))} after the fault{versus}."]
    if r.relapses:
        out.append("The fault came back at " + ", ".join(r.relapse_times) + ".")
    last_fault = max((f.minute for f in r.faults), default=-1)
    last_restore = max(x.minute for x in r.restores)
    out.append("At the end the world was healthy." if last_restore >= last_fault
               else "At the end the fault was still present.")
    return out


def after_action(r: Reading, score: ScoreReport | None, declarations: tuple[Declaration, ...],
                 guards: Guards, checklist: tuple[ChecklistItem, ...]) -> AfterAction:
    strengths: list[str] = []
    improvements: list[str] = []
    actions: list[CorrectiveAction] = []
    # a guard seen stopping a step is a strength only where the score agrees it was stopped
    held = [s for s in guards.steps if s.guarded and s.verdict != "happened"]
    stopped = [s.id for s in held if s.live != "happened"]
    # guarded in the replay after it happened tonight: one verdict, said once, as it was
    late = [s.id for s in held if s.live == "happened"]
    # stopped tonight, yet the score's replay shows it still happens: not a strength
    gave_way = [s for s in guards.steps if s.guarded and s.verdict == "happened"]
    # a step the race never reached because a guard stopped an earlier one is that guard's
    unguarded = [s for s in guards.steps if s.outcome == "prevented" and not s.guarded
                 and s.live != "happened" and not r.stopped_before(s.id)
                 and not _follows(r, s.id, {h.id for h in held})]
    happened = [s for s in guards.steps if s.live == "happened"]
    if stopped:
        strengths.append(f"The team's guards were seen stopping the race step"
                         f"{'s' if len(stopped) > 1 else ''} {', '.join(stopped)}.")
    if late:
        strengths.append(f"After {', '.join(late)} happened tonight, the guards the team added "
                         "were seen stopping it in the final replay.")
    for step in gave_way:
        improvements.append(f"A guard of the team's was seen stopping {step.id} in tonight's "
                            f"race, but it still happened {step.judged or 'as scored'}: the guard "
                            "does not hold on every night the score plays (see 'The race, step "
                            "by step').")
    for step in unguarded:
        improvements.append(f"{step.id} did not happen, but no guard of the team's was seen "
                            f"stopping it" + (f" ({step.evidence})." if step.evidence else "."))
    if happened:
        improvements.append("The race ran its course: " + ", ".join(
            f"{s.id} at {s.time}" for s in happened) + ".")
    if r.first_fault is not None:
        _response(r, strengths, improvements, actions)
    for d in declarations:
        _declared(d, strengths, improvements)
    for path in guards.good_path:
        if not path.ok:
            improvements.append(f"A guard also blocks the good path: {path.title} ({path.why}).")
            actions.append(CorrectiveAction(
                f"Rework the guard that blocks '{path.title}': it must refuse the stale write "
                "and still allow the good one.", "guards",
                issue=f"area for improvement {len(improvements)}"))
    scored = r.score.guards if r.score is not None else None
    if scored is not None and scored.blocked_good_writes:
        refused = ", ".join(dict.fromkeys(f"{b.task} at {b.at}"
                                          for b in scored.blocked_good_writes))
        improvements.append(f"The guards refused {plural(len(scored.blocked_good_writes), 'good write')} "
                            f"of the normal night ({refused})"
                            + (f", which cost {scored.collateral} points." if scored.collateral
                               else "."))
        actions.append(CorrectiveAction(
            "Rework the guard that refuses the normal night's good writes: it must refuse the "
            "stale write and still allow the good one.", "guards",
            issue=f"area for improvement {len(improvements)}"))
    harmed = normal_harms(r)
    if harmed:
        improvements.append("With no race to stop, the team's world harmed the customers: "
                            + "; ".join(harmed) + (f", which cost {scored_collateral(r)} points."
                                                   if scored_collateral(r) else "."))
        actions.append(CorrectiveAction(
            "Rework the guard that harms the normal night: it must refuse the stale write and "
            "leave the service working when there is no race.", "guards",
            issue=f"area for improvement {len(improvements)}"))
    if guards.replay.asked:  # the final replay is raceday's method, not the team's act
        strengths.append("Replayed the race against the team's schema at "
                         f"{', '.join(dict.fromkeys(guards.replay.asked))}.")
    practices = {p.id: p for p in r.start.checklist}
    for item in checklist:
        action = practices[item.id].action if item.id in practices else ""
        issue = ""
        if item.status in ("not done", "partly done") and item.did_not:
            # what the judge found missing, with its evidence: the team's own verdict
            improvements.append(f"{item.practice} ({item.status}): "
                                + "; ".join(x.rstrip(".") for x in item.did_not) + ".")
            issue = f"area for improvement {len(improvements)}"
        if item.status in ("not done", "partly done") and action:
            actions.append(CorrectiveAction(action, f"checklist: {item.practice}",
                                            issue=issue))
    if score is None:
        improvements.append("The session was interrupted before it ended; play it to the end "
                            "for a score.")
    return AfterAction(tuple(strengths), tuple(improvements), tuple(actions))


def scored_collateral(r: Reading) -> int:
    return r.score.guards.collateral if r.score is not None and r.score.guards else 0


def _follows(r: Reading, step: str, earlier: set[str]) -> bool:
    """Whether `step` comes after one of `earlier` in the race (its `after` chain)."""
    seen: set[str] = set()
    info = r.steps.get(step)
    while info is not None and info.after is not None and info.after not in seen:
        if info.after in earlier:
            return True
        seen.add(info.after)
        info = r.steps.get(info.after)
    return False


def _declared(d: Declaration, strengths: list[str], improvements: list[str]) -> None:
    """A declaration is a strength only when it counted (or the facilitator ruled it right):
    a right finding declared before the fault, or on a look that could not show it, is not."""
    ruled = ""
    if d.ruling:
        word = {"partly": "partly right"}.get(d.ruling, d.ruling)
        ruled = f" (the facilitator ruled it {word}" + \
            (f": {d.ruling_note.rstrip('.')})" if d.ruling_note else ")")
    if d.verdict == "repeat" and not d.ruling:
        return  # the first declaration of it says it
    if d.right:
        strengths.append(f"Declared a right finding at {d.time}: {d.text}{ruled}.")
    elif d.verdict == "to_rule" and not d.ruling:
        improvements.append(f"Declared '{d.text}' at {d.time} in the player's own words, and "
                            "nobody ruled on it: it neither counted nor cost. Rule on it in "
                            "the hot wash: was it right?")
    elif d.ruling == "partly":
        improvements.append(f"Declared a finding at {d.time} that was only partly right: "
                            f"{d.text}{ruled}.")
    elif d.correct and not d.ruling and d.verdict in ("false_alarm", "unseen") or d.blind:
        why = {"false_alarm": "before it was so (a false alarm)",
               "unseen": "before anything the team had looked at showed it"}.get(
                   d.verdict, "on a query that showed the same on a normal night")
        improvements.append(f"Declared '{d.text}' at {d.time}, {why}: what pointed there, "
                            "and what would have shown it?")
    else:
        improvements.append(f"Declared a wrong finding at {d.time}: {d.text}{ruled}. What "
                            "evidence pointed there?")


def _response(r: Reading, strengths: list[str], improvements: list[str],
              actions: list[CorrectiveAction]) -> None:
    """Detection, stopping and restoring, when there was a fault."""
    assert r.first_fault is not None
    figures = r.start.event_figures if r.night else {}
    detection, restore = figures.get("detection_minutes"), figures.get("restore_minutes")
    if r.surfaced is None:
        improvements.append("The fault was never surfaced by a monitor or a right finding."
                            if r.complete else f"The fault had not been surfaced by {r.last_time}.")
        actions.append(CorrectiveAction(
            f"Add a monitor that alerts on the fault itself ({r.first_fault.fault}), so the "
            "alarm that points at the cause is not lost in the noise.", "detection",
            issue=f"area for improvement {len(improvements)}"))
    elif detection is None or r.surfaced.latency <= detection:
        versus = f"; {r.night.lower()}: {duration(detection)}" if detection is not None else ""
        strengths.append(f"Surfaced the fault {duration(r.surfaced.latency)} after it "
                         f"began ({r.surfaced.how}{versus}).")
    else:
        improvements.append(f"Surfacing the fault took {duration(r.surfaced.latency)}, "
                            f"longer than {r.night.lower()}'s {duration(detection)}.")
        actions.append(CorrectiveAction(
            "Add a monitor on the fault's own symptom so it is surfaced in minutes.",
            "detection", issue=f"area for improvement {len(improvements)}"))
    stop, repair = r.stop, r.repair
    if stop is not None and repair is not None:
        if stop.event.minute <= repair.event.minute:
            strengths.append(f"Stopped the automation ({r.time(stop.event)}) before repairing "
                             f"by hand ({r.time(repair.event)}).")
        else:
            improvements.append(f"Repaired by hand ({r.time(repair.event)}) before stopping "
                                f"the automation ({r.time(stop.event)}).")
    elif stop is None and r.phase_of("stopped") is not None:
        improvements.append("The automation was never stopped while the fault was present."
                            if r.complete else
                            f"The automation had not been stopped by {r.last_time}.")
    if r.restores and not r.relapses:
        versus = f" ({r.night.lower()}: {duration(restore)})" if restore is not None else ""
        strengths.append(f"Restored the world {duration(r.after_fault(r.restores[0]))} after "
                         f"the fault{versus}, and the repair held.")
    for relapse in r.relapses:
        running = stop is None or stop.event.minute > relapse.minute
        improvements.append(f"The repair was undone at {r.time(relapse)}: the fault came "
                            "back" + (" while the automation was still running."
                                      if running and r.phase_of("stopped") else "."))
    if not r.restores and r.complete:
        improvements.append("The world was not restored by the end.")
