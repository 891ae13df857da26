"""The score: every point with a reason a person can read. Pure: facts in, score out.

What it decides is typed (`transcript.verdicts`): the score event carries those verdicts,
and everything that shows a score reads them, never a reason string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from raceday.exercise.model import Exercise
from raceday.judge.facts import Facts, own_words_key
from raceday.judge.guards import (
    collateral_cost,
    grade_harms,
    harm_cost,
    harm_titles,
    practice_titles,
    stops_the_service,
)
from raceday.judge.rulings import apply_rulings
from raceday.transcript import verdicts as vd
from raceday.transcript.events import ReplayGuards, ReplayResult, StepReplay
from raceday.transcript.verdicts import HAPPENED, NOT_REACHED, PREVENTED, Score
from raceday.transcript.wording import plural

TimeOf = Callable[[int], str]

__all__ = ["Score", "replay_guards", "score_session", "step_worth"]


def _curve(minutes: int, full: int, zero: int, points: int) -> int:
    if minutes <= full:
        return points
    if minutes >= zero:
        return 0
    return round(points * (zero - minutes) / (zero - full))


def _stops_the_service(ex: Exercise, facts: Facts) -> bool:
    """The team's guards refuse good writes: with harms, only when they cost as much as the
    guards are worth (an outage of their own); with race steps, any refusal."""
    rubric = ex.scoring.guards
    refused = len(facts.replay.blocked_good_writes) if facts.replay else 0
    failed = [(path_id, ok) for path_id, _t, ok, _w in facts.good_path if not ok]
    if rubric is None or not rubric.harms:
        return bool(refused or failed)
    penalties = {g.id: g.penalty for g in rubric.good_path}
    harmed = facts.replay.normal_harms if facts.replay else ()
    return stops_the_service(rubric, refused, sum(penalties.get(i, 0) for i, _ in failed),
                             harmed)


def _prevented_outright(ex: Exercise, facts: Facts) -> bool | None:
    """No fault tonight: did the database stop it (the final replay saw no fault)? None when
    there was no replay to ask."""
    if facts.replay is None:
        return None
    return facts.replay.fault_at is None and not _stops_the_service(ex, facts)


def _fault_outcome(ex: Exercise, facts: Facts) -> str:
    """What became of the fault: it occurred, or why there was none (see `verdicts`)."""
    if facts.fault_started is not None:
        return vd.OCCURRED
    if facts.night_kind == "quiet":
        return vd.QUIET_NIGHT
    if _skipped_the_fault(ex, facts):
        return vd.NOT_PLAYED
    if facts.night_kind == "practice":
        return _practice_outcome(ex, facts)
    outright = _prevented_outright(ex, facts)
    if outright is False and facts.replay is not None and facts.replay.fault_at is None:
        return vd.BLOCKED_GOOD_WRITES
    if outright is False:
        return vd.HELD_OFF
    if outright:
        return vd.PREVENTED_OUTRIGHT
    return vd.NOT_NEEDED if facts.race_reached(ex) else vd.BEFORE_THE_RACE


def _skipped_the_fault(ex: Exercise, facts: Facts) -> bool:
    """The facilitator let the night go on without a step of the race (a task of a race
    step, or the delayed worker's), left due by its seat: its fault was not played."""
    if not facts.skipped_steps:
        return False
    guards = ex.scoring.guards
    fault_tasks = {s.task for s in guards.steps} if guards is not None else set()
    if ex.replay is not None:
        fault_tasks |= set(ex.replay.delayed)
    return any(task in fault_tasks for task in facts.skipped_steps)


def _practice_outcome(ex: Exercise, facts: Facts) -> str:
    """No fault on an unknown session's practice night: did the team's world stop it (its
    harms gone from that night in the final replay, every role automated), or their hands?"""
    if facts.replay is None:
        return vd.NOT_NEEDED
    if _stops_the_service(ex, facts):
        return vd.BLOCKED_GOOD_WRITES
    guards = ex.scoring.guards
    judged = {w.invariant for w in (guards.harms if guards else ()) if w.night == facts.night}
    harmed = any(h.minutes for h in facts.replay.harms if h.practice == facts.night
                 and (not judged or h.harm in judged))  # the harms that night is drawn for
    return vd.HELD_OFF if harmed else vd.PREVENTED_OUTRIGHT


def _versus(event_minutes: int | None, facts: Facts) -> str:
    """The record's figure beside the team's, on the record's night only: an unknown
    session's other nights have no "that night" to compare with."""
    if event_minutes is None or facts.night_kind not in ("", "race"):
        return ""
    return f" (that night: {event_minutes} min)"


def _no_fault_reason(section: str, points: int, ex: Exercise, facts: Facts,
                     time_of: TimeOf) -> tuple[int, str]:
    """Detection and recovery when no fault happened tonight."""
    outcome = _fault_outcome(ex, facts)
    if outcome == vd.BLOCKED_GOOD_WRITES:
        return 0, (f"{section} 0/{points}: no fault tonight, but only because good writes of "
                   "the normal night were refused too (see guards): an outage of its own")
    if outcome == vd.NOT_PLAYED:
        steps = ", ".join(facts.skipped_steps)
        return points, (f"{section} {points}/{points}: not played: the facilitator let the "
                        f"night go on without {steps} (left due by its seat), so the fault it "
                        "brings never came: there was nothing to " + (
                            "detect" if section == "detection" else "recover"))
    if outcome == vd.QUIET_NIGHT:
        return points, (f"{section} {points}/{points}: a quiet night, nothing went wrong: "
                        "there was nothing to " + ("detect" if section == "detection"
                                                   else "recover"))
    if outcome == vd.HELD_OFF and facts.night_kind == "practice":
        return 0, (f"{section} 0/{points}: no fault tonight, but nothing in the database "
                   "stopped it: the same night replayed with every role automated shows it; "
                   "what kept it away tonight was players' hands, not a guard")
    if outcome == vd.HELD_OFF:
        at = facts.replay.fault_at if facts.replay else None
        return 0, (f"{section} 0/{points}: no fault tonight, but nothing in the database "
                   f"stopped it: the replay with every role automated shows it at {at}; "
                   "what kept it away tonight was players' hands, not a guard")
    if outcome == vd.BEFORE_THE_RACE:
        return 0, (f"{section} 0/{points}: the session ended at {time_of(facts.ended_at)}, "
                   "before the race; nothing was detected or recovered")
    return points, f"{section} {points}/{points}: not needed, the fault never happened"


def _short_sql(sql: str, width: int = 60) -> str:
    """One line of a statement, for a reason."""
    line = " ".join(sql.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _finding_text(ex: Exercise, finding: str) -> str:
    """A finding's words as the exercise gives them, the player's own words (see
    `own_words_key`), or its id when it has none."""
    own = own_words_key("")
    if finding.startswith(own):
        return finding[len(own):]
    return next((f.text for f in ex.findings if f.id == finding), finding)


def _detection(ex: Exercise, facts: Facts, time_of: TimeOf) -> vd.Detection | None:
    rubric = ex.scoring.detection
    if rubric is None:
        return None
    ruled = apply_rulings(facts, time_of, lambda finding: _finding_text(ex, finding))
    reasons: list[str] = list(ruled.reasons)
    alert: tuple[int, str] | None = None
    diagnosis: tuple[int, str] | None = None
    first: tuple[int, str] | None = None  # (minute, how) the fault was first surfaced
    start = facts.fault_started
    versus = _versus(rubric.event_minutes, facts)
    for name, minute in sorted(facts.noisy_monitors.items(), key=lambda kv: kv[1]):
        if name in facts.noise_reasons:
            reasons.append(f"detection: monitor '{name}' alerted at {time_of(minute)}, but not "
                           f"because of the fault: {facts.noise_reasons[name]}: noise, not "
                           "detection")
            continue
        reasons.append(f"detection: monitor '{name}' returned rows at {time_of(minute)} while "
                       "the world was healthy: noise, not detection")
    if start is None:
        points, why = _no_fault_reason("detection", rubric.points, ex, facts, time_of)
        reasons.append(why)
    else:
        alert = next(((m, n) for m, n in facts.monitor_alerts
                      if n not in facts.noisy_monitors), None)
        diagnosis = ruled.confirmed[0] if ruled.confirmed else None
        if alert is not None:
            reasons.append(f"detection: time to alert {plural(alert[0] - start, 'minute')} "
                           f"(monitor '{alert[1]}' at {time_of(alert[0])}){versus}")
        else:
            reasons.append("detection: time to alert: no monitor of yours alerted on the fault")
        if diagnosis is not None:
            text = _finding_text(ex, diagnosis[1])
            reasons.append(f"detection: time to diagnosis {plural(diagnosis[0] - start, 'minute')}"
                           f" ('{text}' at {time_of(diagnosis[0])}){versus}")
        else:
            reasons.append("detection: time to diagnosis: no correct finding was declared "
                           "while its evidence was there")
        for minute, finding, why in facts.unseen[:1]:
            reasons.append(f"detection: '{finding}' declared at {time_of(minute)} did not count: "
                           f"nothing the team had looked at showed it yet ({why}); a declaration "
                           "counts once it is made again after a look that shows it")
        for minute, finding, sql in facts.blind[:1]:
            reasons.append(f"detection: '{finding}' declared at {time_of(minute)} counts for "
                           f"nothing: the query it rests on ({_short_sql(sql)}) showed the same "
                           "on the normal night, with no fault; a diagnosis needs a look that "
                           "can show the fault")
        firsts = [(m, f"monitor '{n}' alerted") for m, n in ([alert] if alert else [])]
        if diagnosis is not None:
            text = _finding_text(ex, diagnosis[1])
            firsts.append((diagnosis[0], f"declared '{text}'"))
        if facts.caused_by is not None:
            points = 0
            role, sql = facts.caused_by
            what = f" ({facts.fault_text})" if facts.fault_text else ""
            reasons.append(f"detection 0/{rubric.points}: the fault at {time_of(start)}{what} "
                           f"began with your own statement ({role}: {_short_sql(sql)}); "
                           "finding damage you caused is not detection")
        elif not firsts:
            points = 0
            what = f" ({facts.fault_text})" if facts.fault_text else ""
            reasons.append(f"detection 0/{rubric.points}: the fault that began at "
                           f"{time_of(start)}{what} was never surfaced by a monitor or finding")
        else:
            first = min(firsts)
            minute, how = first
            latency = minute - start
            points = _curve(latency, rubric.full_within, rubric.zero_after, rubric.points)
            reasons.append(
                f"detection {points}/{rubric.points}: surfaced {plural(latency, 'minute')} after "
                f"it began ({time_of(minute)}, {how}); full marks within "
                f"{rubric.full_within} min, none after {rubric.zero_after} min{versus}"
            )
    if start is not None and facts.silent_monitors:
        names = ", ".join(f"'{n}'" for n in facts.silent_monitors)
        reasons.append(f"detection: monitor{'s' if len(facts.silent_monitors) > 1 else ''} "
                       f"{names} never alerted on this unknown night: what "
                       f"{'they watch' if len(facts.silent_monitors) > 1 else 'it watches'} "
                       "for shows on some nights and not others; a monitor on what the "
                       "customers see alerts on every night that harms them")
    wrong = [(m, f) for m, f, correct in ruled.declarations if not correct]
    if wrong and rubric.wrong_finding_cost:
        cost = min(points, rubric.wrong_finding_cost * len(wrong))
        points -= cost
        own = own_words_key("")  # a finding in own words is named by its words, not its key
        names = ", ".join(f"'{f.removeprefix(own)}' at {time_of(m)}" for m, f in wrong)
        reasons.append(f"detection -{cost}: wrong finding{'s' if len(wrong) > 1 else ''} "
                       f"declared ({names}), {rubric.wrong_finding_cost} each")
    if ruled.false_alarms and rubric.wrong_finding_cost:
        cost = min(points, rubric.wrong_finding_cost * len(ruled.false_alarms))
        points -= cost
        alarm = ruled.false_alarms[0]
        reasons.append(f"detection -{cost}: {plural(len(ruled.false_alarms), 'false alarm')} "
                       f"(first: '{alarm[1]}' at {time_of(alarm[0])}, when it was not so), "
                       f"{rubric.wrong_finding_cost} each")
    since = start or 0
    return vd.Detection(
        points=points, max=rubric.points,
        latency_minutes=first[0] - since if first else None,
        detected_at=time_of(first[0]) if first else None, by=first[1] if first else None,
        event_minutes=rubric.event_minutes,
        alert_minutes=alert[0] - since if alert else None,
        alerted_at=time_of(alert[0]) if alert else None, alert_by=alert[1] if alert else None,
        diagnosis_minutes=diagnosis[0] - since if diagnosis else None,
        diagnosed_at=time_of(diagnosis[0]) if diagnosis else None,
        diagnosis=diagnosis[1] if diagnosis else None,
        false_alarms=tuple(vd.FalseAlarm(finding=f, at=time_of(m))
                           for m, f in ruled.false_alarms),
        noise=tuple(sorted(facts.noisy_monitors)),
        reasons=tuple(reasons))


def step_worth(ex: Exercise) -> dict[str, int]:
    """What each race step is worth: its own points, or an even share of the guards'."""
    rubric = ex.scoring.guards
    steps = rubric.steps if rubric else ()
    share = rubric.points // len(steps) if rubric and steps else 0
    return {s.id: s.points or share for s in steps}


def replay_guards(ex: Exercise, replay: ReplayResult) -> ReplayGuards:
    """The guards points a replay earns on its own (before the end's good-path probes): as
    in the score, each good write of the normal night it refuses costs its collateral (with
    race steps, any refusal costs everything)."""
    rubric = ex.scoring.guards
    maximum = rubric.points if rubric else 0
    if rubric is not None and rubric.harms:
        graded = grade_harms(rubric, replay.harms, harm_titles(ex), practice_titles(ex))
        refused, harmed = len(replay.blocked_good_writes), replay.normal_harms
        cost = graded.earned if stops_the_service(rubric, refused, 0, harmed) else min(
            graded.earned, collateral_cost(rubric, refused, 0, harmed))
        return ReplayGuards(points=graded.earned - cost, max=maximum, penalty=cost,
                            worth={v.key: v.points for v in graded.verdicts})
    worth = step_worth(ex)
    earned = min(sum(worth.get(s.id, 0) for s in replay.steps if s.status == PREVENTED), maximum)
    penalty = earned if replay.blocked_good_writes else 0
    return ReplayGuards(points=earned - penalty, max=maximum, penalty=penalty, worth=worth)


def _lower(text: str) -> str:
    """A title inside a sentence: its first letter small ("An endpoint" -> "an endpoint")."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _guards_by_harm(ex: Exercise, facts: Facts, steps: tuple[vd.StepVerdict, ...],
                    lead: list[str]) -> vd.Guards:
    """Guards by the harm they kept away in the final replay's nights; the race steps are
    the story the debrief tells, and earn nothing of their own."""
    rubric = ex.scoring.guards
    assert rubric is not None
    replay = facts.replay
    reasons = list(lead)
    graded = grade_harms(rubric, replay.harms if replay else (), harm_titles(ex),
                         practice_titles(ex))
    total = graded.earned if replay is not None else 0
    if replay is not None:
        reasons.extend(graded.reasons)
    blocked = replay.blocked_good_writes if replay else ()
    failed = [(t, why, next((g.penalty for g in rubric.good_path if g.id == i), 0))
              for i, t, ok, why in facts.good_path if not ok]
    harmed = replay.normal_harms if replay else ()
    titles = harm_titles(ex)
    cost = collateral_cost(rubric, len(blocked), sum(p for _t, _w, p in failed), harmed)
    if stops_the_service(rubric, len(blocked), sum(p for _t, _w, p in failed), harmed):
        writes = "; ".join(f"{b.task} at {b.at} ({b.outcome})" for b in blocked[:3])
        more = f" and {len(blocked) - 3} more" if len(blocked) > 3 else ""
        what = [f"refused {plural(len(blocked), 'good write')} of the normal night "
                f"({writes}{more})"] if blocked else []
        what += [f"blocked the good path: {t} ({why})" for t, why, _p in failed]
        what += [f"caused {_lower(titles.get(h.harm, h.harm))} for "
                 f"{plural(h.minutes, 'minute')} on {h.night}" for h in harmed]
        reasons.append(f"guards -{total}: your guards or edits {'; '.join(what)}: "
                       f"they cost {cost} of the {rubric.points} guard points, so they stop the "
                       "service doing its job, an outage of their own; they earn nothing")
        cost = total
    elif cost:
        cost = min(cost, total)
        for b in blocked:
            reasons.append(f"guards -{rubric.collateral}: collateral: a good write of the "
                           f"normal night was refused: {b.task} at {b.at} ({b.outcome})")
        for t, why, penalty in failed:
            reasons.append(f"guards -{penalty}: collateral: a guard also blocks the good path: "
                           f"{t} ({why})")
        for h in harmed:
            when = f" from {h.first_at}" if h.first_at else ""
            reasons.append(f"guards -{harm_cost(rubric, h.minutes)}: collateral: on {h.night} "
                           f"(no fault of its own) your world showed "
                           f"{_lower(titles.get(h.harm, h.harm))}{when} for "
                           f"{plural(h.minutes, 'minute')}")
    good = tuple(vd.GoodPath(id=path_id, title=title, ok=ok, why=why)
                 for path_id, title, ok, why in facts.good_path)
    return vd.Guards(
        points=total - cost, max=rubric.points, harms=graded.verdicts, collateral=cost,
        prevented=tuple(s.id for s in steps if s.status == PREVENTED),
        happened=tuple(s.id for s in steps if s.status == HAPPENED),
        steps=steps, good_path=good,
        judged_by=vd.BY_REPLAY if replay is not None else vd.BY_NONE,
        blocked_good_writes=tuple(blocked), reasons=tuple(reasons))


def _unbuilt_guards(facts: Facts, time_of: TimeOf) -> list[str]:
    """The team's schema changes that failed, said once: a guard never built is judged as
    absent, and the score says why rather than letting the team think it was there."""
    if not facts.failed_schema:
        return []
    first_at, head, error = facts.failed_schema[0]
    others = len(facts.failed_schema) - 1
    return [f"guards: {plural(len(facts.failed_schema), 'schema change')} of the team's failed "
            f"and built nothing (first: {head} … at {time_of(first_at)}: {error}"
            + (f"; and {others} more" if others else "") + "): judged without them"]


def _guards(ex: Exercise, facts: Facts, time_of: TimeOf) -> vd.Guards | None:
    """Guards from the final replay alone: each race step it shows prevented earns its worth;
    a guard that refuses (or turns into 0 rows) any good write of the normal night, or a good
    path at the end, earns nothing at all."""
    rubric = ex.scoring.guards
    if rubric is None:
        return None
    steps = facts.race_steps(ex)
    reasons: list[str] = []
    total = 0
    worth_of = step_worth(ex)
    prevented: list[str] = []
    happened: list[str] = []
    verdicts: list[vd.StepVerdict] = []
    replayed = {s.id: s for s in facts.replay.steps} if facts.replay else None
    if replayed is None and ex.replay is None:
        # an exercise with no replay of its race: the steps as they went tonight
        replayed = {state.step.id: StepReplay(
                        id=state.step.id, title=state.step.title,
                        status=facts.live_steps.get(state.step.id, NOT_REACHED),
                        at=time_of(state.happened_at) if state.happened_at is not None else None)
                    for state in steps}
        reasons.append("guards: judged by what the race did tonight (this exercise defines "
                       "no replay)")
    elif replayed is not None:
        reasons.append("guards: judged by the replay of the race against the team's final "
                       "database, every role automated")
    else:
        reasons.append(f"guards 0/{rubric.points}: the race could not be replayed against the "
                       "team's database, so no guard can be credited")
    unbuilt = _unbuilt_guards(facts, time_of)
    reasons.extend(unbuilt)
    for state in steps:
        worth = worth_of[state.step.id]
        label = state.step.title or state.step.id
        live = facts.live_steps.get(state.step.id, NOT_REACHED)
        live_at = time_of(state.happened_at) if state.happened_at is not None else None
        seen = replayed.get(state.step.id) if replayed is not None else None
        status, at, outcome = (seen.status, seen.at, seen.outcome) if seen else (None, None, "")
        prevented_now = status == PREVENTED
        happened_now = status == HAPPENED
        detail = f"at {at}: {outcome}" if at else outcome
        name = f"{state.step.id} ({label})"
        verdicts.append(vd.StepVerdict(
            id=state.step.id, title=label, points=worth if prevented_now else 0,
            status=HAPPENED if happened_now else PREVENTED if prevented_now else NOT_REACHED,
            detail=detail, live=live, live_at=live_at))
        tonight = f" (tonight it happened at {live_at})" if live_at else ""
        if replayed is None:
            continue
        if happened_now:
            happened.append(state.step.id)
            reasons.append(f"guards +0/{worth}: {name} happened in the replay {detail}".rstrip())
        elif prevented_now:
            prevented.append(state.step.id)
            total += worth
            how = f": {detail}" if detail else ""
            reasons.append(f"guards +{worth}/{worth}: {name} was prevented in the replay{how}"
                           f"{tonight}")
        else:
            reasons.append(f"guards +0/{worth}: {name} was never reached in the replay")
    if rubric.harms:
        lead = [r for r in reasons[:1] if not r.startswith("guards +")] + unbuilt
        story = tuple(replace(v, points=0) for v in verdicts)
        return _guards_by_harm(ex, facts, story, lead)
    total = min(total, rubric.points)
    blocked = facts.replay.blocked_good_writes if facts.replay else ()
    if blocked:
        cost, total = total, 0
        writes = "; ".join(f"{b.task} at {b.at} ({b.outcome})" for b in blocked[:3])
        more = f" and {len(blocked) - 3} more" if len(blocked) > 3 else ""
        reasons.append(
            f"guards -{cost}: on the normal night your guards or edits refused "
            f"{plural(len(blocked), 'good write')} that the original world took: {writes}{more}; "
            "a guard that stops good writes is an outage of its own, so it earns nothing")
    good = tuple(vd.GoodPath(id=path_id, title=title, ok=ok, why=why)
                 for path_id, title, ok, why in facts.good_path)
    for _id, title, ok, why in facts.good_path:
        if not ok:
            cost, total = total, 0
            reasons.append(f"guards -{cost}: a guard also blocks the good path: {title} ({why}); "
                           "a guard that stops the good write is an outage of its own")
    return vd.Guards(
        points=total, max=rubric.points, prevented=tuple(prevented),
        happened=tuple(happened), steps=tuple(verdicts), good_path=good,
        judged_by=(vd.BY_REPLAY if facts.replay is not None
                   else vd.BY_LIVE if replayed is not None else vd.BY_NONE),
        blocked_good_writes=tuple(blocked), reasons=tuple(reasons))


def _recovery(ex: Exercise, facts: Facts, time_of: TimeOf) -> vd.Recovery | None:
    rubric = ex.scoring.recovery
    if rubric is None:
        return None
    held = facts.restores[-1] if facts.restores and facts.healthy_at_end else None
    minutes = (held - facts.fault_started
               if held is not None and facts.fault_started is not None else None)
    night_end = facts.night_end or facts.ended_at
    outage = facts.outage_minutes(night_end) if facts.fault_started is not None else 0
    verdict = vd.Recovery(
        points=0, max=rubric.points,
        restored=facts.healthy_at_end,
        restored_at=time_of(held) if held is not None else None,
        first_restored_at=time_of(facts.restores[0]) if facts.restores else None,
        minutes_to_restore=minutes,
        outage_minutes=outage if facts.fault_started is not None else None,
        relapses=tuple(time_of(m) for m in facts.relapses),
        event_minutes=rubric.event_minutes,
    )
    if facts.fault_started is None:
        points, why = _no_fault_reason("recovery", rubric.points, ex, facts, time_of)
        return replace(verdict, points=points, reasons=(why,))
    healed = _healed_alone(facts)
    if healed is not None:
        end, alone = healed
        why = (f"it lasted {plural(facts.outage_minutes(end), 'minute')}, no less than the same "
               f"night with the automation alone, where the harm ended on its own after "
               f"{plural(alone, 'minute')}" if alone is not None else
               f"the harm ended on its own at {time_of(end)} (the night's own automation put "
               "it right)")
        return replace(verdict, points=0, reasons=(
            f"recovery +0/{rubric.points}: {why}: nothing the team did brought it back "
            "sooner, so there is no recovery to credit",))
    forged = _forged(rubric.forged, facts)
    if forged is not None:
        minute, who, tables = forged
        return replace(verdict, points=0, reasons=(
            f"recovery +0/{rubric.points}: {who} wrote {', '.join(tables)} at "
            f"{time_of(minute)}: that is the state the recovery measures, which only the "
            "service itself can bring back, so what the night showed from then on was forged, "
            "not recovered",))
    reasons: list[str] = []
    weighed: list[vd.RecoveryCredit] = []
    total = 0
    for item in rubric.items:
        if item.outage:
            earned, why = _outage_item(item.points, item.full_within, outage,
                                       facts, rubric.event_minutes, night_end, time_of)
        else:
            ok, why = _recovery_item(item.milestone, item.before, item.healthy_at_end,
                                     item.no_relapse, facts, time_of)
            earned = item.points if ok else 0
        total += earned
        reached = facts.milestones.get(item.milestone) if item.milestone else None
        weighed.append(vd.RecoveryCredit(
            id=item.id, title=item.title, points=earned, max=item.points,
            milestone=item.milestone, at=time_of(reached) if reached is not None else None))
        reasons.append(f"recovery +{earned}/{item.points}: {item.title}: {why}")
    if minutes is not None:
        versus = _versus(rubric.event_minutes, facts)
        reasons.append(f"recovery: restored for good {plural(minutes, 'minute')} after the "
                       f"fault{versus}")
    nets = {net.id: net for net in rubric.safety_nets}
    for net_id, where in facts.nets_torn:
        net = nets.get(net_id)
        if net is None:
            continue
        total -= net.penalty
        reasons.append(f"recovery -{net.penalty}: a safety net of the world's own was gone when "
                       f"the night ended: {net.title} (where it failed: {where}); a repair that "
                       "tears one down leaves the next night without it")
    return replace(verdict, points=max(0, min(total, rubric.points)), items=tuple(weighed),
                   reasons=tuple(reasons))


def _healed_alone(facts: Facts) -> tuple[int, int | None] | None:
    """When an unknown session's harm ended on its own (a practice night's fault that the
    next plan mends), the minute it ended. Judged by effect: on a practice night, the harm
    lasted no less than the same night played by the automation alone on the exercise's own
    world (a write that changes nothing earns nothing); elsewhere, no write or edit of the
    team's came between its start and its end. Returns (the minute it ended, the minutes it
    lasted with the automation alone, when that is known)."""
    if not facts.night_kind or facts.fault_started is None or not facts.restores \
            or not facts.healthy_at_end:
        return None
    start, end = facts.fault_started, facts.restores[-1]
    alone = [h.baseline for h in (facts.replay.harms if facts.replay else ())
             if h.practice == facts.night and h.harm == facts.fault_invariant]
    if facts.night_kind == "practice" and alone:
        return (end, max(alone)) if facts.outage_minutes(end) >= max(alone) else None
    acted = [m for m, _role, _tables in facts.player_writes if start <= m <= end]
    acted += [m for m, _statement in facts.edits if m <= end]
    return None if acted else (end, None)


def _forged(tables: tuple[str, ...], facts: Facts) -> tuple[int, str, tuple[str, ...]] | None:
    """The first write to a table only the service may bring back, at any minute: a player's
    statement, or a trigger the team made writing inside anyone's statement (the service's
    own included): (minute, who, those tables)."""
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for minute, role, wrote in facts.player_writes:
        hit = tuple(t for t in wrote if t.lower() in tables)
        if hit:
            found.append((minute, f"{role} (by hand)", hit))
            break
    for (trigger, table), minute in facts.made_writes.items():
        if table in tables:
            found.append((minute, f"the team's trigger {trigger}", (table,)))
    return min(found) if found else None


def _outage_item(points: int, full: int, outage: int, facts: Facts, event: int | None,
                 night_end: int, time_of: TimeOf) -> tuple[int, str]:
    """Points on a curve over the minutes the customers saw the fault: full within `full`,
    a third at that night's figure, nothing for a fault that lasted the rest of the night."""
    start = facts.fault_started or 0
    whole = max(night_end - start, 1)
    versus = _versus(event, facts)
    if not facts.healthy_at_end:
        still = f": {'; '.join(facts.faults_at_end)}" if facts.faults_at_end else ""
        return 0, (f"{plural(outage, 'minute')} of outage and still not restored when the "
                   f"night ended at {time_of(night_end)}{versus}{still}")
    if event is not None and full < event < whole:
        if outage <= event:
            earned = points - (points - points / 3) * max(outage - full, 0) / (event - full)
        else:
            earned = (points / 3) * (whole - outage) / (whole - event)
        earned_points = max(0, min(points, round(earned)))
    else:
        earned_points = _curve(outage, full, whole, points)
    relapsed = (f", {plural(len(facts.relapses), 'relapse')} included"
                if facts.relapses else "")
    return earned_points, (f"{plural(outage, 'minute')} of outage over the night{relapsed}"
                           f"{versus}; full marks within {full} min")


def _recovery_item(milestone: str | None, before: str | None, healthy: bool, no_relapse: bool,
                   facts: Facts, time_of: TimeOf) -> tuple[bool, str]:
    if healthy:
        return (True, "the world is healthy at the end") if facts.healthy_at_end else (
            False, "a fault is still present at the end")
    if no_relapse:
        if not facts.restores:
            return False, "never restored"
        if facts.relapses:
            return False, f"the fault came back at {time_of(facts.relapses[0])} after a repair"
        if milestone is not None and milestone not in facts.milestones:
            return False, f"the repair held, but '{milestone}' never happened"
        return True, "the repair held"
    if milestone is None:
        return False, "no criterion"
    reached = facts.milestones.get(milestone)
    if reached is None:
        return False, f"'{milestone}' never happened"
    if before is None:
        return True, f"reached at {time_of(reached)}"
    other = facts.milestones.get(before)
    if other is None:
        return False, f"reached at {time_of(reached)}, but '{before}' never happened"
    if reached <= other:
        return True, f"reached at {time_of(reached)}, before '{before}' at {time_of(other)}"
    return False, f"reached at {time_of(reached)}, after '{before}' at {time_of(other)}"


def _tasks(ex: Exercise, facts: Facts, time_of: TimeOf) -> vd.Tasks | None:
    worth = {t.id: t.points for t in ex.tasks if t.points}
    if not worth and not ex.scoring.tasks:
        return None
    maximum = ex.scoring.tasks or sum(worth.values())
    reasons: list[str] = []
    total = 0
    for task in ex.tasks:
        if not task.points:
            continue
        done = facts.tasks_done.get(task.id)
        if done is not None:
            total += task.points
            reasons.append(f"tasks +{task.points}/{task.points}: {task.title} "
                           f"(done at {time_of(done)})")
        elif task.id in facts.tasks_unproven:
            reasons.append(f"tasks +0/{task.points}: {task.title} (its job's row read as done, "
                           f"but {facts.tasks_unproven[task.id]})")
        else:
            reasons.append(f"tasks +0/{task.points}: {task.title} (not done)")
    return vd.Tasks(points=min(total, maximum), max=maximum,
                    done=tuple(sorted(facts.tasks_done, key=lambda t: facts.tasks_done[t])),
                    reasons=tuple(reasons))


def score_session(ex: Exercise, facts: Facts, time_of: TimeOf) -> Score:
    """Score a session from its facts, following the exercise's rubric."""
    detection = _detection(ex, facts, time_of)
    guards = _guards(ex, facts, time_of)
    recovery = _recovery(ex, facts, time_of)
    tasks = _tasks(ex, facts, time_of)
    parts = [p for p in (detection, guards, recovery, tasks) if p is not None]
    reasons = [r for p in parts for r in p.reasons]
    earned = sum(p.points for p in parts)
    hint_cost = min(earned, sum(cost for cost, _ in facts.hints))
    if facts.hints:
        reasons.append(f"hints -{hint_cost}: {plural(len(facts.hints), 'hint')} revealed")
    fault = vd.Fault(
        occurred=facts.fault_started is not None,
        started_at=time_of(facts.fault_started) if facts.fault_started is not None else None,
        invariant=facts.fault_invariant,
        what=facts.fault_text,
        present_at_end=tuple(facts.faults_at_end),
        outcome=_fault_outcome(ex, facts),
    )
    return Score(
        total=earned - hint_cost,
        max=sum(p.max for p in parts),
        fault=fault,
        detection=detection,
        guards=guards,
        recovery=recovery,
        tasks=tasks,
        hints=vd.Hints(revealed=tuple(h for _, h in facts.hints), cost=hint_cost),
        reasons=tuple(reasons),
    )
