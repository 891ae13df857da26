"""`build_debrief`: a session's typed events in, the whole `Debrief` out (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from raceday.errors import TranscriptError
from raceday.transcript import events as ev
from raceday.transcript.debrief import people
from raceday.transcript.debrief.checklist import build_checklist
from raceday.transcript.debrief.guards import build_guards
from raceday.transcript.debrief.learned import learned_lines
from raceday.transcript.debrief.model import (
    Change,
    Debrief,
    Declaration,
    HintInfo,
    MonitorInfo,
    Refusal,
)
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.debrief.report import after_action, score_report, summary
from raceday.transcript.debrief.timeline import build_timeline
from raceday.transcript.log import of_kind


def build_debrief(events: Sequence[ev.Event], warning: str | None = None) -> Debrief:
    """The whole debrief of a session, from its events (as `read_events` returns them)."""
    if not events:
        raise TranscriptError(["the transcript holds no events: there is nothing to debrief"
                               + (f" ({warning})" if warning else "")])
    r = Reading(events)
    score = score_report(r)
    changes: list[Change] = []
    failures: list[Change] = []
    for _, change in r.changes():
        (changes if change.ok else failures).append(change)
    declarations = _declarations(r)
    guards = build_guards(r)
    checklist = build_checklist(r, guards)
    notes = []
    if score is None:
        notes.append("The transcript has no score: the session stopped before it ended, so the "
                     "score and anything judged at the end (good paths, health) are missing.")
    observations = people.observations(r)
    if r.start.schema < 3:
        notes.append("This transcript was written before exercises gave the debrief their "
                     "checklist and phases, so it shows neither.")
    return Debrief(
        summary=summary(r, score, declarations, guards),
        warning=warning,
        score=score,
        timeline=build_timeline(r, guards.replay),
        changes=tuple(changes),
        failures=tuple(failures),
        refusals=tuple(Refusal(r.time(e), e.role or "-", e.action, e.error)
                       for e in of_kind(r.events, ev.Refused)),
        monitors=_monitors(r),
        declarations=declarations,
        hints=tuple(HintInfo(r.time(e), e.id, e.text, e.cost) for e in of_kind(r.events, ev.Hint)),
        guards=guards,
        checklist=checklist,
        after_action=people.with_observations(
            after_action(r, score, declarations, guards, checklist), observations),
        notes=tuple(notes),
        checklist_title=r.start.checklist_title or "Checklist",
        names=people.names(r),
        observations=observations,
        injects=people.inject_responses(r),
        objectives=people.objectives(score),
        facilitation=people.facilitation(r),
        charts=tuple(of_kind(r.events, ev.Chart)),
        learned=learned_lines(r.start.exercise, checklist, r.start.checklist),
    )


def _monitors(r: Reading) -> tuple[MonitorInfo, ...]:
    monitors: list[MonitorInfo] = []
    noise = set(r.score.detection.noise) if r.score and r.score.detection else set()

    def last(name: str) -> int | None:
        return next((i for i in range(len(monitors) - 1, -1, -1) if monitors[i].name == name),
                    None)

    for e in r.events:
        if isinstance(e, ev.MonitorSaved):
            monitors.append(MonitorInfo(e.name, e.role, e.sql, r.time(e),
                                        noise=e.name in noise))
        elif isinstance(e, ev.Alert | ev.MonitorError | ev.MonitorRemoved):
            index = last(e.name)
            if index is None:
                continue
            m = monitors[index]
            if isinstance(e, ev.Alert):
                m = replace(m, first_alert=m.first_alert or r.time(e), alerts=m.alerts + 1,
                            matched=m.matched or e.matched)
            elif isinstance(e, ev.MonitorError):
                m = replace(m, error=e.error)
            else:
                m = replace(m, removed_at=r.time(e))
            monitors[index] = m
    return tuple(monitors)


def _declarations(r: Reading) -> tuple[Declaration, ...]:
    """Each declaration with the judge's verdict, the facilitator's last ruling on it, and
    whether the score took it back as blind: the score's diagnosis is the earliest finding it
    kept, so a confirmed declaration before it (or with none kept) was taken back."""
    rulings = {e.declaration: e for e in of_kind(r.events, ev.Facilitation)
               if e.action == "ruling" and e.ruling}
    detection = r.score.detection if r.score is not None else None
    kept: int | None = None  # the minute of the diagnosis the score kept
    if detection is not None and detection.diagnosis_minutes is not None \
            and r.first_fault is not None:
        kept = r.first_fault.minute + detection.diagnosis_minutes
    judged = detection is not None and r.first_fault is not None
    out: list[Declaration] = []
    for e in of_kind(r.events, ev.Declaration):
        ruled = rulings.get(e.seq)
        blind = judged and e.verdict == "confirmed" and (kept is None or e.minute < kept)
        out.append(Declaration(r.time(e), e.role, e.finding, e.text, e.correct, e.verdict,
                               ruling=ruled.ruling if ruled else "",
                               ruling_note=ruled.text if ruled else "", blind=blind))
    return tuple(out)
