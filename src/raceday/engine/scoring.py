"""The score: every point with a reason a person can read. Pure: facts in, score out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from raceday.engine.facts import HAPPENED, NOT_REACHED, PREVENTED, Facts
from raceday.exercise.model import Exercise
from raceday.transcript.events import ReplayGuards, ReplayResult, StepReplay
from raceday.transcript.wording import plural

TimeOf = Callable[[int], str]


@dataclass(frozen=True)
class Section:
    """One part of the score (detection, guards, recovery, tasks)."""

    points: int
    max: int
    reasons: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"points": self.points, "max": self.max, **self.extra, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Score:
    total: int
    max: int
    fault: dict[str, Any]
    sections: dict[str, Section]
    hint_cost: int
    hints: tuple[str, ...]
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"total": self.total, "max": self.max, "fault": self.fault}
        for name, section in self.sections.items():
            data[name] = section.to_json()
        data["hints"] = {"revealed": list(self.hints), "cost": self.hint_cost}
        data["reasons"] = list(self.reasons)
        return data


def _curve(minutes: int, full: int, zero: int, points: int) -> int:
    if minutes <= full:
        return points
    if minutes >= zero:
        return 0
    return round(points * (zero - minutes) / (zero - full))


def _prevented_outright(facts: Facts) -> bool | None:
    """No fault tonight: did the database stop it (the final replay saw no fault)? None when
    there was no replay to ask."""
    if facts.replay is None:
        return None
    blocked = bool(facts.replay.blocked_good_writes) or any(
        not ok for _id, _t, ok, _w in facts.good_path)
    return facts.replay.fault_at is None and not blocked


def _no_fault_reason(section: str, points: int, ex: Exercise, facts: Facts,
                     time_of: TimeOf) -> tuple[int, str]:
    """Detection and recovery when no fault happened tonight."""
    outright = _prevented_outright(facts)
    if outright is False and facts.replay is not None and facts.replay.fault_at is None:
        return 0, (f"{section} 0/{points}: no fault tonight, but only because good writes of "
                   "the normal night were refused too (see guards): an outage of its own")
    if outright is False:
        at = facts.replay.fault_at if facts.replay else None
        return 0, (f"{section} 0/{points}: no fault tonight, but nothing in the database "
                   f"stopped it: the replay with every role automated shows it at {at}; "
                   "what kept it away tonight was players' hands, not a guard")
    if not facts.race_reached(ex) and outright is None:
        return 0, (f"{section} 0/{points}: the session ended at {time_of(facts.ended_at)}, "
                   "before the race; nothing was detected or recovered")
    return points, f"{section} {points}/{points}: not needed, the fault never happened"


def _detection(ex: Exercise, facts: Facts, time_of: TimeOf) -> Section | None:
    rubric = ex.scoring.detection
    if rubric is None:
        return None
    reasons: list[str] = []
    extra: dict[str, Any] = {"latency_minutes": None, "detected_at": None, "by": None,
                             "event_minutes": rubric.event_minutes,
                             "alert_minutes": None, "alerted_at": None, "alert_by": None,
                             "diagnosis_minutes": None, "diagnosed_at": None, "diagnosis": None,
                             "false_alarms": [{"finding": f, "at": time_of(m)}
                                              for m, f in facts.false_alarms],
                             "noise": sorted(facts.noisy_monitors)}
    versus = (f" (that night: {rubric.event_minutes} min)"
              if rubric.event_minutes is not None else "")
    for name, minute in sorted(facts.noisy_monitors.items(), key=lambda kv: kv[1]):
        if name in facts.noise_reasons:
            reasons.append(f"detection: monitor '{name}' alerted at {time_of(minute)}, but not "
                           f"because of the fault: {facts.noise_reasons[name]}: noise, not "
                           "detection")
            continue
        reasons.append(f"detection: monitor '{name}' returned rows at {time_of(minute)} while "
                       "the world was healthy: noise, not detection")
    if facts.fault_started is None:
        points, why = _no_fault_reason("detection", rubric.points, ex, facts, time_of)
        reasons.append(why)
    else:
        start = facts.fault_started
        alert = next(((m, n) for m, n in facts.monitor_alerts
                      if n not in facts.noisy_monitors), None)
        diagnosis = facts.confirmed[0] if facts.confirmed else None
        if alert is not None:
            extra.update(alert_minutes=alert[0] - start, alerted_at=time_of(alert[0]),
                         alert_by=alert[1])
            reasons.append(f"detection: time to alert {plural(alert[0] - start, 'minute')} "
                           f"(monitor '{alert[1]}' at {time_of(alert[0])}){versus}")
        else:
            reasons.append("detection: time to alert: no monitor of yours alerted on the fault")
        if diagnosis is not None:
            text = next((f.text for f in ex.findings if f.id == diagnosis[1]), diagnosis[1])
            extra.update(diagnosis_minutes=diagnosis[0] - start, diagnosed_at=time_of(diagnosis[0]),
                         diagnosis=diagnosis[1])
            reasons.append(f"detection: time to diagnosis {plural(diagnosis[0] - start, 'minute')}"
                           f" ('{text}' at {time_of(diagnosis[0])}){versus}")
        else:
            reasons.append("detection: time to diagnosis: no correct finding was declared "
                           "while its evidence was there")
        for minute, finding, unread in facts.unseen[:1]:
            reasons.append(f"detection: '{finding}' declared at {time_of(minute)} before any "
                           f"query of yours had read {' or '.join(unread)} since the fault began: "
                           "a diagnosis from memory is not a diagnosis (it counts once you have "
                           "looked)")
        firsts = [(m, f"monitor '{n}' alerted") for m, n in ([alert] if alert else [])]
        if diagnosis is not None:
            text = next((f.text for f in ex.findings if f.id == diagnosis[1]), diagnosis[1])
            firsts.append((diagnosis[0], f"declared '{text}'"))
        if not firsts:
            points = 0
            what = f" ({facts.fault_text})" if facts.fault_text else ""
            reasons.append(f"detection 0/{rubric.points}: the fault that began at "
                           f"{time_of(start)}{what} was never surfaced by a monitor or finding")
        else:
            minute, how = min(firsts)
            latency = minute - start
            extra.update(latency_minutes=latency, detected_at=time_of(minute), by=how)
            points = _curve(latency, rubric.full_within, rubric.zero_after, rubric.points)
            reasons.append(
                f"detection {points}/{rubric.points}: surfaced {plural(latency, 'minute')} after "
                f"it began ({time_of(minute)}, {how}); full marks within "
                f"{rubric.full_within} min, none after {rubric.zero_after} min{versus}"
            )
    wrong = [(m, f) for m, f, correct in facts.declarations if not correct]
    if wrong and rubric.wrong_finding_cost:
        cost = min(points, rubric.wrong_finding_cost * len(wrong))
        points -= cost
        names = ", ".join(f"'{f}' at {time_of(m)}" for m, f in wrong)
        reasons.append(f"detection -{cost}: wrong finding{'s' if len(wrong) > 1 else ''} "
                       f"declared ({names}), {rubric.wrong_finding_cost} each")
    if facts.false_alarms and rubric.wrong_finding_cost:
        cost = min(points, rubric.wrong_finding_cost * len(facts.false_alarms))
        points -= cost
        first = facts.false_alarms[0]
        reasons.append(f"detection -{cost}: {plural(len(facts.false_alarms), 'false alarm')} "
                       f"(first: '{first[1]}' at {time_of(first[0])}, when it was not so), "
                       f"{rubric.wrong_finding_cost} each")
    return Section(points, rubric.points, tuple(reasons), extra)


def step_worth(ex: Exercise) -> dict[str, int]:
    """What each race step is worth: its own points, or an even share of the guards'."""
    rubric = ex.scoring.guards
    steps = rubric.steps if rubric else ()
    share = rubric.points // len(steps) if rubric and steps else 0
    return {s.id: s.points or share for s in steps}


def blocked_penalty(ex: Exercise) -> int:
    """What blocking the normal night's good writes costs (once, however many)."""
    rubric = ex.scoring.guards
    if rubric is None:
        return 0
    return max((p.penalty for p in rubric.good_path), default=rubric.points // 2)


def replay_guards(ex: Exercise, replay: ReplayResult) -> ReplayGuards:
    """The guards points a replay earns on its own (before the end's good-path probes)."""
    rubric = ex.scoring.guards
    maximum = rubric.points if rubric else 0
    worth = step_worth(ex)
    earned = min(sum(worth.get(s.id, 0) for s in replay.steps if s.status == PREVENTED), maximum)
    penalty = min(earned, blocked_penalty(ex)) if replay.blocked_good_writes else 0
    return ReplayGuards(points=earned - penalty, max=maximum, penalty=penalty, worth=worth)


def _guards(ex: Exercise, facts: Facts, time_of: TimeOf) -> Section | None:
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
    verdicts: list[dict[str, Any]] = []
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
        verdicts.append({"id": state.step.id, "title": label, "points": worth if prevented_now else 0,
                         "status": HAPPENED if happened_now else PREVENTED if prevented_now
                         else NOT_REACHED, "detail": detail,
                         "live": live, "live_at": live_at})
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
    good: list[dict[str, Any]] = []
    for path_id, title, ok, why in facts.good_path:
        good.append({"id": path_id, "title": title, "ok": ok, "why": why})
        if not ok:
            cost, total = total, 0
            reasons.append(f"guards -{cost}: a guard also blocks the good path: {title} ({why}); "
                           "a guard that stops the good write is an outage of its own")
    extra = {"prevented": prevented if total else [], "happened": happened, "steps": verdicts,
             "good_path": good,
             "judged_by": ("replay" if facts.replay is not None
                           else "live" if replayed is not None else "none"),
             "blocked_good_writes": [{"task": b.task, "at": b.at, "outcome": b.outcome}
                                     for b in blocked]}
    return Section(total, rubric.points, tuple(reasons), extra)


def _recovery(ex: Exercise, facts: Facts, time_of: TimeOf) -> Section | None:
    rubric = ex.scoring.recovery
    if rubric is None:
        return None
    held = facts.restores[-1] if facts.restores and facts.healthy_at_end else None
    minutes = (held - facts.fault_started
               if held is not None and facts.fault_started is not None else None)
    night_end = facts.night_end or facts.ended_at
    outage = facts.outage_minutes(night_end) if facts.fault_started is not None else 0
    extra: dict[str, Any] = {
        "restored": facts.healthy_at_end,
        "restored_at": time_of(held) if held is not None else None,
        "first_restored_at": time_of(facts.restores[0]) if facts.restores else None,
        "minutes_to_restore": minutes,
        "outage_minutes": outage if facts.fault_started is not None else None,
        "relapses": [time_of(m) for m in facts.relapses],
        "event_minutes": rubric.event_minutes,
    }
    if facts.fault_started is None:
        points, why = _no_fault_reason("recovery", rubric.points, ex, facts, time_of)
        return Section(points, rubric.points, (why,), extra)
    reasons: list[str] = []
    total = 0
    for item in rubric.items:
        if item.outage:
            ok_points, why = _outage_item(item.points, item.full_within, outage,
                                          facts, rubric.event_minutes, night_end, time_of)
            total += ok_points
            reasons.append(f"recovery +{ok_points}/{item.points}: {item.title}: {why}")
            continue
        ok, why = _recovery_item(item.milestone, item.before, item.healthy_at_end,
                                 item.no_relapse, facts, time_of)
        total += item.points if ok else 0
        reasons.append(f"recovery +{item.points if ok else 0}/{item.points}: {item.title}: {why}")
    if minutes is not None:
        versus = (f" (that night: {rubric.event_minutes} min)"
                  if rubric.event_minutes is not None else "")
        reasons.append(f"recovery: restored for good {plural(minutes, 'minute')} after the "
                       f"fault{versus}")
    return Section(min(total, rubric.points), rubric.points, tuple(reasons), extra)


def _outage_item(points: int, full: int, outage: int, facts: Facts, event: int | None,
                 night_end: int, time_of: TimeOf) -> tuple[int, str]:
    """Points on a curve over the minutes the customers saw the fault: full within `full`,
    a third at that night's figure, nothing for a fault that lasted the rest of the night."""
    start = facts.fault_started or 0
    whole = max(night_end - start, 1)
    versus = f" (that night: {event} min)" if event is not None else ""
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


def _tasks(ex: Exercise, facts: Facts, time_of: TimeOf) -> Section | None:
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
    extra = {"done": sorted(facts.tasks_done, key=lambda t: facts.tasks_done[t])}
    return Section(min(total, maximum), maximum, tuple(reasons), extra)


def score_session(ex: Exercise, facts: Facts, time_of: TimeOf) -> Score:
    """Score a session from its facts, following the exercise's rubric."""
    sections: dict[str, Section] = {}
    for name, build in (("detection", _detection), ("guards", _guards),
                        ("recovery", _recovery), ("tasks", _tasks)):
        section = build(ex, facts, time_of)
        if section is not None:
            sections[name] = section
    reasons = [r for s in sections.values() for r in s.reasons]
    earned = sum(s.points for s in sections.values())
    hint_cost = min(earned, sum(cost for cost, _ in facts.hints))
    if facts.hints:
        reasons.append(f"hints -{hint_cost}: {plural(len(facts.hints), 'hint')} revealed")
    fault: dict[str, Any] = {
        "occurred": facts.fault_started is not None,
        "started_at": time_of(facts.fault_started) if facts.fault_started is not None else None,
        "invariant": facts.fault_invariant,
        "what": facts.fault_text,
        "present_at_end": list(facts.faults_at_end),
    }
    return Score(
        total=earned - hint_cost,
        max=sum(s.max for s in sections.values()),
        fault=fault,
        sections=sections,
        hint_cost=hint_cost,
        hints=tuple(h for _, h in facts.hints),
        reasons=tuple(reasons),
    )
