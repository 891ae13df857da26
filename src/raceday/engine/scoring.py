"""The score: every point with a reason a person can read. Pure: facts in, score out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from raceday.engine.facts import HAPPENED, PREVENTED, Facts, step_statuses
from raceday.exercise.model import Exercise
from raceday.transcript.events import ReplayGuards, ReplayResult
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


def _detection(ex: Exercise, facts: Facts, time_of: TimeOf) -> Section | None:
    rubric = ex.scoring.detection
    if rubric is None:
        return None
    reasons: list[str] = []
    extra: dict[str, Any] = {"latency_minutes": None, "detected_at": None, "by": None,
                             "event_minutes": rubric.event_minutes}
    if facts.fault_started is None and not facts.race_reached(ex):
        points = 0
        reasons.append(f"detection 0/{rubric.points}: the session ended at "
                       f"{time_of(facts.ended_at)}, before the race; nothing was detected")
    elif facts.fault_started is None:
        points = rubric.points
        reasons.append(f"detection {points}/{rubric.points}: not needed, the fault never happened")
    elif facts.detected_at is None:
        points = 0
        reasons.append(f"detection 0/{rubric.points}: the fault that began at "
                       f"{time_of(facts.fault_started)} was never surfaced by a monitor or finding")
    else:
        latency = facts.detected_at - facts.fault_started
        extra.update(latency_minutes=latency, detected_at=time_of(facts.detected_at),
                     by=facts.detected_by)
        if latency <= rubric.full_within:
            points = rubric.points
        elif latency >= rubric.zero_after:
            points = 0
        else:
            span = rubric.zero_after - rubric.full_within
            points = round(rubric.points * (rubric.zero_after - latency) / span)
        versus = (f"; that night it took {rubric.event_minutes} min"
                  if rubric.event_minutes is not None else "")
        reasons.append(
            f"detection {points}/{rubric.points}: surfaced {plural(latency, 'minute')} after "
            f"it began ({time_of(facts.detected_at)}, {facts.detected_by}); full marks within "
            f"{rubric.full_within} min, none after {rubric.zero_after} min{versus}"
        )
    wrong = [(m, f) for m, f, correct in facts.declarations if not correct]
    if wrong and rubric.wrong_finding_cost:
        cost = min(points, rubric.wrong_finding_cost * len(wrong))
        points -= cost
        names = ", ".join(f"'{f}' at {time_of(m)}" for m, f in wrong)
        reasons.append(f"detection -{cost}: wrong finding{'s' if len(wrong) > 1 else ''} "
                       f"declared ({names}), {rubric.wrong_finding_cost} each")
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
    rubric = ex.scoring.guards
    if rubric is None:
        return None
    steps = facts.race_steps(ex)
    statuses = step_statuses(steps)
    reasons: list[str] = []
    total = 0
    worth_of = step_worth(ex)
    prevented: list[str] = []
    happened: list[str] = []
    verdicts: list[dict[str, Any]] = []
    replayed = {s.id: s for s in facts.replay.steps} if facts.replay else None
    if replayed is not None:
        reasons.append("guards: judged by the replay of the race against the team's database")
    for state in steps:
        worth = worth_of[state.step.id]
        label = state.step.title or state.step.id
        if replayed is not None:
            seen = replayed.get(state.step.id)
            status, at, outcome = (seen.status, seen.at, seen.outcome) if seen else (None, None, "")
            prevented_now = status == "prevented"
            happened_now = status == "happened"
            detail = f"at {at}: {outcome}" if at else outcome
        else:
            prevented_now = statuses[state.step.id] == PREVENTED
            happened_now = statuses[state.step.id] == HAPPENED
            detail = (f"at {time_of(state.happened_at)}" if state.happened_at is not None else "")
        name = f"{state.step.id} ({label})"
        verdicts.append({"id": state.step.id, "title": label, "points": worth if prevented_now else 0,
                         "status": "happened" if happened_now else "prevented" if prevented_now
                         else "not reached", "detail": detail})
        if happened_now:
            happened.append(state.step.id)
            reasons.append(f"guards +0/{worth}: {name} happened {detail}".rstrip())
        elif prevented_now:
            prevented.append(state.step.id)
            total += worth
            how = f": {detail}" if replayed is not None and detail else ""
            reasons.append(f"guards +{worth}/{worth}: {name} was prevented{how}")
        else:
            reasons.append(f"guards +0/{worth}: {name} was never reached")
    total = min(total, rubric.points)
    blocked = facts.replay.blocked_good_writes if facts.replay else ()
    if blocked:
        cost = min(total, blocked_penalty(ex))
        total -= cost
        first = blocked[0]
        reasons.append(
            f"guards -{cost}: on the normal night your guards refused {plural(len(blocked), 'write')}"
            f" that the original world took (first: {first.task} at {first.at}: "
            f"{first.outcome})")
    good: list[dict[str, Any]] = []
    for path_id, title, ok, why in facts.good_path:
        good.append({"id": path_id, "title": title, "ok": ok, "why": why})
        if not ok:
            penalty = next(p.penalty for p in rubric.good_path if p.id == path_id)
            cost = min(total, penalty)
            total -= cost
            reasons.append(f"guards -{cost}: a guard also blocks the good path: {title} ({why}); "
                           "a guard that stops the good write is an outage of its own")
    extra = {"prevented": prevented, "happened": happened, "steps": verdicts, "good_path": good,
             "judged_by": "replay" if replayed is not None else "live"}
    return Section(total, rubric.points, tuple(reasons), extra)


def _recovery(ex: Exercise, facts: Facts, time_of: TimeOf) -> Section | None:
    rubric = ex.scoring.recovery
    if rubric is None:
        return None
    held = facts.restores[-1] if facts.restores and facts.healthy_at_end else None
    minutes = (held - facts.fault_started
               if held is not None and facts.fault_started is not None else None)
    extra: dict[str, Any] = {
        "restored": facts.healthy_at_end,
        "restored_at": time_of(held) if held is not None else None,
        "first_restored_at": time_of(facts.restores[0]) if facts.restores else None,
        "minutes_to_restore": minutes,
        "event_minutes": rubric.event_minutes,
    }
    if facts.fault_started is None and not facts.race_reached(ex):
        return Section(0, rubric.points,
                       (f"recovery 0/{rubric.points}: the session ended at "
                        f"{time_of(facts.ended_at)}, before the race; nothing was recovered",),
                       extra)
    if facts.fault_started is None:
        return Section(rubric.points, rubric.points,
                       (f"recovery {rubric.points}/{rubric.points}: not needed, "
                        "the fault never happened",), extra)
    reasons: list[str] = []
    total = 0
    for item in rubric.items:
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
        return True, f"reached at {time_of(reached)}, before '{before}' (which never happened)"
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
