"""The world so far, event by event: what `raceday review` shows beside the event in hand."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from raceday.transcript import events as ev
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.debrief.words import duration


@dataclass(frozen=True)
class WorldSoFar:
    """What a facilitator can say about the world after an event, from the events so far."""

    seq: int
    time: str
    faults: tuple[str, ...] = ()
    fault_began: str | None = None
    detected: str | None = None
    restores: tuple[str, ...] = ()
    relapses: tuple[str, ...] = ()
    milestones: tuple[str, ...] = ()
    monitors: tuple[str, ...] = ()
    alerting: tuple[str, ...] = ()
    declarations: tuple[str, ...] = ()
    race_steps: tuple[str, ...] = ()
    team_writes: int = 0
    automation_writes: int = 0
    guards: int = 0
    hints: int = 0
    automation: tuple[str, ...] = ()
    score: str | None = None

    def lines(self) -> list[str]:
        """The summary as short lines, for a side panel."""
        out = [f"Clock {self.time}  (event {self.seq})"]
        if self.faults:
            out.append("FAULT: " + "; ".join(self.faults))
        elif self.fault_began:
            out.append("healthy now (fault began " + self.fault_began + ")")
        else:
            out.append("healthy: no fault so far")
        if self.detected:
            out.append(f"detected: {self.detected}")
        if self.restores:
            out.append("restored at " + ", ".join(self.restores))
        if self.relapses:
            out.append("fault came back at " + ", ".join(self.relapses))
        out += [f"milestone: {m}" for m in self.milestones]
        if self.monitors:
            alerting = f" (alerting: {', '.join(self.alerting)})" if self.alerting else ""
            out.append(f"monitors: {', '.join(self.monitors)}{alerting}")
        out += [f"declared: {x}" for x in self.declarations]
        out += [f"race step: {x}" for x in self.race_steps]
        out.append(f"writes: team {self.team_writes}, automation {self.automation_writes}; "
                   f"guards {self.guards}; hints {self.hints}")
        out += [f"automation: {x}" for x in self.automation]
        if self.score:
            out.append(f"SCORE {self.score}")
        return out


class WorldStates(Sequence[WorldSoFar]):
    """The world so far after each event, one per event, each made the first time it is
    asked for (and every one before it): `raceday review` opens on the first event, so a
    20,000-event night no longer makes them all before its first frame (~0.2-0.3 s)."""

    def __init__(self, events: Sequence[ev.Event]) -> None:
        self._count = len(events)
        self._made: list[WorldSoFar] = []
        self._making: Iterator[WorldSoFar] = _states(events) if events else iter(())

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> WorldSoFar: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[WorldSoFar]: ...

    def __getitem__(self, index: int | slice) -> WorldSoFar | Sequence[WorldSoFar]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("no event at that index")
        made = self._made
        while len(made) <= index:
            made.append(next(self._making))
        return made[index]


def world_states(events: Sequence[ev.Event]) -> WorldStates:
    """The world so far after each event, in order (one per event), made as asked for."""
    return WorldStates(events)


def _states(events: Sequence[ev.Event]) -> Iterator[WorldSoFar]:
    r = Reading(events)
    faults: dict[str, str] = {}
    automation: dict[str, str] = {}
    state = WorldSoFar(0, "")
    for e in r.events:
        time = r.time(e)
        changes: dict[str, Any] = {"seq": e.seq, "time": time}
        if isinstance(e, ev.Fault):
            faults[e.invariant] = e.fault
            if e.relapse:
                changes["relapses"] = (*state.relapses, time)
            elif state.fault_began is None:
                changes["fault_began"] = time
        elif isinstance(e, ev.InvariantClear):
            faults.pop(e.invariant, None)
        elif isinstance(e, ev.Restored):
            changes["restores"] = (*state.restores, time)
        elif isinstance(e, ev.Detected):
            changes["detected"] = (f"{time}, {duration(e.latency_minutes)} after the fault "
                                   f"({e.how})")
        elif isinstance(e, ev.Milestone):
            changes["milestones"] = (*state.milestones, f"{time} {e.label or e.id}")
        elif isinstance(e, ev.MonitorSaved):
            changes["monitors"] = (*state.monitors, e.name)
        elif isinstance(e, ev.MonitorRemoved):
            changes["monitors"] = tuple(m for m in state.monitors if m != e.name)
        elif isinstance(e, ev.Alert):
            changes["alerting"] = (*state.alerting, e.name)
        elif isinstance(e, ev.AlertClear):
            changes["alerting"] = tuple(m for m in state.alerting if m != e.name)
        elif isinstance(e, ev.Declaration):
            right = {"false_alarm": "false alarm: not so then", "unseen": "not yet shown",
                     "repeat": "right, again",
                     "to_rule": "own words, for the facilitator"}.get(
                         e.verdict, "right" if e.correct else "wrong")
            changes["declarations"] = (*state.declarations, f"{time} {e.text} ({right})")
        elif isinstance(e, ev.RaceStep) and e.happened:
            changes["race_steps"] = (*state.race_steps, f"{time} {e.step}")
        elif isinstance(e, ev.Statement):
            change = r.change_of(e)
            if change is not None and change.ok:
                if change.automated:
                    changes["automation_writes"] = state.automation_writes + 1
                else:
                    changes["team_writes"] = state.team_writes + 1
                    if change.schema_changed:
                        changes["guards"] = state.guards + 1
        elif isinstance(e, ev.Edit):
            changes["guards"] = state.guards + 1
        elif isinstance(e, ev.Hint):
            changes["hints"] = state.hints + 1
        elif isinstance(e, ev.Automation):
            follow = f"; {e.next}" if e.next else ""
            automation[f"{e.role} {e.task}"] = f"{e.outcome} at {time}{follow}"
            changes["automation"] = tuple(f"{k}: {v}" for k, v in automation.items())
        elif isinstance(e, ev.ScoreEvent):
            changes["score"] = f"{e.score.total}/{e.score.max}"
        changes["faults"] = tuple(faults.values())
        state = _with(state, changes)
        yield state


def _with(state: WorldSoFar, changes: dict[str, Any]) -> WorldSoFar:
    """`dataclasses.replace` without running `__init__` again (WorldSoFar has no
    `__post_init__`): one a transcript's event, a fifth of the cost."""
    copy = object.__new__(WorldSoFar)
    copy.__dict__.update(state.__dict__)
    copy.__dict__.update(changes)
    return copy


MOMENTS = (("f", "fault", "the fault and the race"), ("l", "alarms", "alarms"),
           ("e", "declarations", "declarations"), ("r", "repair", "the repair"),
           ("s", "score", "the score"))
"""The moments `review` jumps to, one key each: (key, kind, words)."""


def moment_of(event: ev.Event) -> str | None:
    """Which key moment an event is (None: not one): the fault, its relapses and the race's
    steps; the alarms (a monitor's, an alarm inject); the declarations; the repair (the world
    restored, a milestone such as the automation stopped); the score."""
    if isinstance(event, ev.Fault) or (isinstance(event, ev.RaceStep) and event.happened):
        return "fault"
    if (isinstance(event, ev.Alert) and not event.noise) or (
            isinstance(event, ev.Inject) and event.inject_kind == "alarm"):
        return "alarms"
    if isinstance(event, ev.Declaration):
        return "declarations"
    if isinstance(event, (ev.Restored, ev.Milestone)):
        return "repair"
    if isinstance(event, ev.ScoreEvent):
        return "score"
    return None


def key_moments(events: Sequence[ev.Event]) -> dict[str, tuple[int, ...]]:
    """Each kind of moment -> the indexes of its events, in order."""
    out: dict[str, list[int]] = {kind: [] for _, kind, _ in MOMENTS}
    for index, event in enumerate(events):
        kind = moment_of(event)
        if kind is not None:
            out[kind].append(index)
    return {kind: tuple(found) for kind, found in out.items()}
