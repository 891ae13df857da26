"""The timeline: the team's moments beside the real night's, row by row, and the chart.

The rows are the exercise's phases (carried in `session_start`); each names which of the
team's events answers it (the fault, the detection, the automation stopped, the repair, the
restore). That night's side comes from the reveals the exercise tags with a phase, else from
its figures (minutes from the first symptom to detection and to restore).
"""

from __future__ import annotations

from raceday.transcript import events as ev
from raceday.transcript.debrief.model import EventFact, Phase, Replay, Timeline
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.debrief.words import FIGURES, duration
from raceday.transcript.timeline_chart import EVENT, TEAM, Band, Mark

TeamSide = tuple[str | None, int | None, str]
EventSide = tuple[str | None, int | None, str, str]


def build_timeline(r: Reading, replay: Replay) -> Timeline:
    facts = tuple(EventFact(x.event_at or x.at, x.title, x.source, x.phase or "")
                  for x in r.start.event_timeline)
    figures = r.start.event_figures
    detection = figures.get("detection_minutes") if r.night else None
    restore = figures.get("restore_minutes") if r.night else None
    rows = []
    for info in r.phases:
        team_time, team_after, team_note = _team_side(r, info)
        time, after, note, source = _night_side(r, info, facts, detection, restore)
        rows.append(Phase(info.id, info.label, team_time, team_after, team_note, time, after,
                          note, source))
    phases = tuple(rows)
    end = max([e.minute for e in r.events] + [0])
    marks = _marks(r, facts, phases, replay, end)
    return Timeline(phases, facts, marks, 0, end, r.clock.origin, detection, restore,
                    r.night, dict(r.start.sources),
                    bands=_bands(r, phases, detection, restore, end))


def _bands(r: Reading, phases: tuple[Phase, ...], detection: int | None,
           restore: int | None, end: int) -> tuple[Band, ...]:
    """The outage and the time to detect, for the team and (from its figures) that night."""
    bands: list[Band] = []
    if r.first_fault is not None:
        fault = r.first_fault.minute
        restored = r.restores[0].minute if r.restores else end
        bands.append(Band(TEAM, fault, restored, "outage",
                          f"your outage: {r.time(r.first_fault)} to "
                          + (r.time(r.restores[0]) if r.restores else "the end, not restored")))
        if r.surfaced is not None:
            bands.append(Band(TEAM, fault, r.surfaced.minute, "detect",
                              f"your time to detect: {duration(r.surfaced.latency)}"))
    if r.night:
        first = next((p for p in phases if p.event_after == 0 and p.event_time), None)
        start = r.clock.minute_of_face(first.event_time) if first and first.event_time \
            else r.fault_minute
        if start is not None:
            night = r.night.lower()
            if restore is not None:
                bands.append(Band(EVENT, start, start + restore, "outage",
                                  f"{night}'s outage: {duration(restore)}"))
            if detection is not None:
                bands.append(Band(EVENT, start, start + detection, "detect",
                                  f"{night}'s time to detect: {duration(detection)}"))
    return tuple(bands)


def _team_side(r: Reading, info: ev.PhaseInfo) -> TeamSide:
    if info.team == "fault":
        if r.first_fault is None:
            return None, None, "no fault in this session"
        return r.time(r.first_fault), 0, r.first_fault.fault
    if r.first_fault is None:
        return None, None, "not needed: no fault"
    if info.team == "detected" and r.surfaced is not None:
        return r.surfaced.time, r.surfaced.latency, r.surfaced.how
    moment = {"stopped": r.stop, "repaired": r.repair}.get(info.team)
    if moment is not None:
        return r.time(moment.event), r.after_fault(moment.event), moment.label
    if info.team == "restored" and r.restores:
        first = r.restores[0]
        note = "no invariant violated any more"
        if r.relapses:
            again = [r.time(x) for x in r.restores[1:]]
            note = (f"undone at {', '.join(r.relapse_times)}"
                    + (f"; restored again at {', '.join(again)}" if again
                       else "; not restored again"))
        return r.time(first), r.after_fault(first), note
    return None, None, r.never


def _night_side(r: Reading, info: ev.PhaseInfo, facts: tuple[EventFact, ...],
                detection: int | None, restore: int | None) -> EventSide:
    """That night's side of one row.

    A revealed fact tagged with the row's phase gives the time and its source. Otherwise the
    exercise's figures give an offset from the first symptom; a revealed fact at exactly that
    offset from the team's own fault lends its time, title and source (the exercise's clock
    is that night's)."""
    if not r.night:
        return None, None, "", ""
    tagged = {f.phase: f for f in facts if f.phase}
    figure = {"fault": 0 if detection is not None or restore is not None else None,
              "detected": detection, "restored": restore}.get(info.team)
    fact = tagged.get(info.id)
    if fact is not None:
        minute = r.clock.minute_of_face(fact.time)
        first = _first_symptom(r, tagged, detection)
        after = minute - first if minute is not None and first is not None else figure
        return fact.time, after, fact.title, fact.source
    if figure is None:
        return None, None, "not in this exercise's timeline", ""
    if r.fault_minute is not None:
        face = r.clock.time(r.fault_minute + figure)
        match = next((f for f in facts if f.time == face), None)
        if match is not None:
            return match.time, figure, match.title, match.source
    if figure == 0:
        return None, 0, "the moment that night's figures count from", FIGURES
    return None, figure, f"{duration(figure)} after the first symptom", FIGURES


def _first_symptom(r: Reading, tagged: dict[str, EventFact], detection: int | None) -> int | None:
    """That night's first symptom as a minute of the clock: a fact tagged with the fault's
    phase, else the tagged detection less the detection figure."""
    for info in r.phases:
        fact = tagged.get(info.id)
        if fact is None:
            continue
        minute = r.clock.minute_of_face(fact.time)
        if info.team == "fault":
            return minute
        if info.team == "detected" and minute is not None and detection is not None:
            return minute - detection
    return None


def _marks(r: Reading, facts: tuple[EventFact, ...], phases: tuple[Phase, ...],
           replay: Replay, end: int) -> tuple[Mark, ...]:
    """The chart's moments: the team's, and that night's over the exercise's whole clock
    (not only the part the session played), so both lanes span the night."""
    marks: list[Mark] = []
    last = max(end, r.start.length_minutes or 0)
    for e in r.events:
        kind, label = "", None
        if isinstance(e, ev.Fault):
            kind, label = ("relapse", f"fault again: {e.fault}") if e.relapse else (
                "fault", f"fault: {e.fault}")
        elif isinstance(e, ev.Milestone):
            kind, label = "milestone", e.label or e.id
        elif isinstance(e, ev.Restored):
            kind, label = "restored", "restored"
        elif isinstance(e, ev.Declaration):
            said = ("own words" if e.verdict == "to_rule" else
                    "right" if e.correct else "wrong")
            kind, label = "declaration", f"declared ({said}): {e.text}"
        elif isinstance(e, ev.RaceStep) and e.happened:
            kind, label = "race_step", f"race step: {e.step}"
        elif isinstance(e, ev.SessionResumed):
            stopped: ev.Event = next((x for x in r.events if x.seq == e.recorded), e)
            marks.append(Mark(TEAM, stopped.minute, r.time(stopped), "resumed",
                              f"crashed after event {e.recorded}, then resumed"
                              + ("" if stopped.minute == e.minute else f" at {r.time(e)}")))
            continue
        if label is not None:
            marks.append(Mark(TEAM, e.minute, r.time(e), kind, label))
    if r.surfaced is not None:
        marks.append(Mark(TEAM, r.surfaced.minute, r.surfaced.time, "detected",
                          f"detected ({r.surfaced.how})"))
    if replay.ran and replay.time is not None:
        minute = r.clock.minute_of_face(replay.time)
        if minute is not None:
            marks.append(Mark(TEAM, minute, replay.time, "replay", "replay"))
    if not r.night:
        return tuple(marks)
    fact_minutes = set()
    for fact in facts:
        minute = r.clock.minute_of_face(fact.time)
        if minute is None or minute > last:
            continue
        fact_minutes.add(minute)
        marks.append(Mark(EVENT, minute, fact.time, "reveal", fact.title, fact.source))
    if r.fault_minute is not None:
        for phase in phases:
            if phase.event_time is None and phase.event_after is not None:
                minute = r.fault_minute + phase.event_after
                if minute not in fact_minutes and minute <= last:
                    marks.append(Mark(EVENT, minute, r.clock.time(minute), "figure",
                                      f"{phase.label.lower()} that night "
                                      f"(+{duration(phase.event_after)})", phase.source))
    return tuple(marks)
