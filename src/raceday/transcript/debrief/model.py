"""What a debrief says about one session, as frozen values (no I/O, no rendering).

`build.build_debrief` fills them from a transcript's events; the renderers (Markdown, HTML,
the terminal, JSON) only read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from raceday.transcript import events as ev
from raceday.transcript.timeline_chart import Band, Chart, Mark, build_chart
from raceday.value import Value, frozen

NOT_SEEN = "not seen in this session"


@frozen
class Summary(Value):
    """Who played what, when, and the outcome in a few sentences."""

    exercise: str
    title: str
    text: str
    outcome: str
    players: tuple[str, ...]
    automated: tuple[str, ...]
    roles: tuple[tuple[str, str], ...]
    pace: str
    zone: str
    date: str
    clock_from: str
    clock_to: str
    wall_started: str | None
    wall_ended: str | None
    events: int
    ended: str
    played_on: str = ""
    """The date it was played (UTC, from the first event's wall time); `date` is the
    scenario's night."""
    resumed: tuple[str, ...] = ()
    """Each time the session stopped (a crash, a kill) and `raceday resume` went on:
    "at 07:04 (after event 7848), and resumed at 14:20 (…)"."""

    def interruptions(self) -> str:
        """'crashed or was killed at 07:04 (after event 7848), and resumed at 14:20', or ''."""
        if not self.resumed:
            return ""
        return "crashed or was killed " + "; again ".join(self.resumed)

    def dates(self) -> str:
        """'played on 2026-12-02 (the scenario's night: 2025-10-19)'."""
        night = f"the scenario's night: {self.date}" if self.date else ""
        if self.played_on:
            return f"played on {self.played_on}" + (f" ({night})" if night else "")
        return night


@frozen
class ScoreSection(Value):
    """One part of the score, with the engine's reason for every point."""

    name: str
    points: int
    max: int
    reasons: tuple[str, ...]


@frozen
class Figure(Value):
    """One of the team's times as the score measured it, beside that night's ("" when the
    exercise compares with no real event)."""

    label: str
    team: str
    night: str = ""


@frozen
class ScoreReport(Value):
    """The score event's verdicts, as scoring decided them, split for printing.

    `fault` is what became of the fault in a sentence; `figures` the times scoring measured
    (time to alert, to diagnosis, minutes of outage…); `judged` what else it judged (false
    alarms, noisy monitors, relapses, the team leaving early)."""

    total: int
    max: int
    fault_occurred: bool
    fault_started_at: str | None
    sections: tuple[ScoreSection, ...]
    hints: tuple[str, ...]
    hint_cost: int
    reasons: tuple[str, ...]
    prevented_outright: bool
    ended: str
    fault: str = ""
    figures: tuple[Figure, ...] = ()
    judged: tuple[str, ...] = ()


@frozen
class Phase(Value):
    """One row of the timeline table: the team's moment beside that night's."""

    id: str
    label: str
    team_time: str | None
    team_after: int | None
    team_note: str
    event_time: str | None
    event_after: int | None
    event_note: str
    source: str


@frozen
class EventFact(Value):
    """A moment of the real night that the exercise reveals, with its source.

    `time` is when it happened that night: the reveal's `event_at` when the exercise gives
    one (a fact revealed at 02:40 about 05:38), else its `at`. `phase` (optional) names the
    timeline row it answers.
    """

    time: str
    title: str
    source: str
    phase: str = ""


@frozen
class Timeline(Value):
    """The phases table, the facts the exercise revealed, and the marks for the chart.

    `night` is what the exercise calls the real event it compares with ("That night"); empty
    when it compares with none, and then only the team's side is shown."""

    phases: tuple[Phase, ...]
    facts: tuple[EventFact, ...]
    marks: tuple[Mark, ...]
    start: int
    end: int
    origin: int
    event_detection_minutes: int | None
    event_restore_minutes: int | None
    night: str = ""
    source_titles: Mapping[str, str] = field(default_factory=dict)
    bands: tuple[Band, ...] = ()

    @property
    def has_event(self) -> bool:
        """Whether there is a real event to set the team beside."""
        return bool(self.night)

    @property
    def sources(self) -> list[str]:
        """The source tags the phases and facts cite, each once, sorted."""
        return sorted({p.source for p in self.phases if p.source}
                      | {f.source for f in self.facts if f.source})

    def chart(self) -> Chart:
        return build_chart(self.marks, self.start, self.end, self.origin, self.bands)


@frozen
class Change(Value):
    """A statement that wrote to the world (or tried to): who, when, what, and what it did."""

    seq: int
    time: str
    role: str
    automated: bool
    sql: str
    ok: bool
    rowcount: int | None
    error: str | None = None
    error_kind: str | None = None
    task: str | None = None
    statement: str | None = None
    break_glass: bool = False
    schema_changed: bool = False
    writes: tuple[str, ...] = ()

    @property
    def flags(self) -> list[str]:
        """What the debrief marks it with: guard or break-glass (wording.access_flag), and
        schema for any other change of the schema."""
        from raceday.transcript.wording import access_flag

        flag = access_flag(self.sql, break_glass=self.break_glass,
                           schema_changed=self.schema_changed, writes=self.writes)
        return [f for f in (flag, "schema" if self.schema_changed and flag != "guard" else None)
                if f]

    @property
    def outcome(self) -> str:
        if not self.ok:
            word = "refused" if self.error_kind == "refused" else "error"
            return f"{word}: {self.error}"
        if self.schema_changed and not self.writes:
            return "schema changed"
        n = self.rowcount or 0
        return f"{n} row{'' if n == 1 else 's'} changed"


@frozen
class Refusal(Value):
    """An action raceday refused (a monitor that is not a query, an unknown finding…)."""

    time: str
    role: str
    action: str
    error: str


@frozen
class MonitorInfo(Value):
    """A saved monitor and what it did afterwards."""

    name: str
    role: str
    sql: str
    saved_at: str
    first_alert: str | None = None
    alerts: int = 0
    matched: bool = False
    error: str | None = None
    removed_at: str | None = None
    noise: bool = False  # the score judged it noise: rows while the world was healthy


@frozen
class Declaration(Value):
    """A finding a player declared, and whether it was right."""

    time: str
    role: str
    finding: str
    text: str
    correct: bool
    verdict: str = ""  # confirmed | unseen | false_alarm | wrong | repeat | to_rule (own words)
    ruling: str = ""  # the facilitator's: right | partly | wrong ("" when they did not rule)
    ruling_note: str = ""
    blind: bool = False  # the score took it back: the look it rested on showed no fault

    @property
    def judge_said(self) -> str:
        """'right', 'wrong', 'false alarm (not so then)', 'right (again)'…: the judge's word."""
        if self.blind:
            return "not counted (its query showed the same on a normal night)"
        return {"false_alarm": "false alarm (not so then)", "repeat": "right (again)",
                "unseen": "not yet shown by anything the team looked at",
                "to_rule": "in the player's own words" + (
                    "" if self.ruling else ", never ruled: neither counted nor cost"),
                "wrong": "wrong", "confirmed": "right"}.get(
                    self.verdict, "right" if self.correct else "wrong")

    @property
    def judged(self) -> str:
        """The judge's word, and the facilitator's ruling after it when they ruled."""
        if not self.ruling:
            return self.judge_said
        ruled = {"partly": "partly right"}.get(self.ruling, self.ruling)
        note = f": {self.ruling_note}" if self.ruling_note else ""
        return f"{self.judge_said}; the facilitator ruled it {ruled}{note}"

    @property
    def right(self) -> bool:
        """A strength of the team's: the facilitator ruled it right, or (unruled) the judge
        counted it (a right finding before its evidence, or resting on a blind look, is not)."""
        if self.ruling:
            return self.ruling == "right"
        return not self.blind and (self.verdict in ("confirmed", "repeat")
                                   or (not self.verdict and self.correct))


@frozen
class HintInfo(Value):
    """A hint the team revealed, when, and what it cost."""

    time: str
    id: str
    text: str
    cost: int


@frozen
class Edit(Value):
    """A change to one of the automation's own statements."""

    time: str
    role: str
    statement: str
    sql: str
    before: str


@frozen
class StepOutcome(Value):
    """A race step: what live play saw, the score's verdict, and what stopped it.

    `live` is what the step did tonight: "happened" (at `time`), "prevented", "never reached"
    (the score's record of it), or without one "did not happen"; `verdict` is the score's
    "happened", "prevented" or "never reached" (empty without a score), `detail` its why, and
    `judged` where that verdict comes from ("in the replay", "tonight"). `after_team_left`:
    it happened while the automation played out the night the team had left.
    `guarded` says a guard of the team's was seen stopping the step itself (live or in the
    replay), and `evidence` what was seen: the guard's run, or why the step did not happen
    when no guard stopped it.
    """

    id: str
    title: str
    live: str
    verdict: str = ""
    detail: str = ""
    time: str | None = None
    by_player: bool = False
    guarded: bool = False
    evidence: str = ""
    judged: str = ""
    after_team_left: bool = False

    @property
    def outcome(self) -> str:
        """The verdict when there is one, else what live play saw."""
        return self.verdict or self.live

    @property
    def live_label(self) -> str:
        """What live play saw: 'happened at 23:48' (and who held the role), or why not."""
        if self.live != "happened":
            return self.live
        return (f"happened at {self.time}" + (" (a player held the role)" if self.by_player else "")
                + (", after the team left" if self.after_team_left else ""))

    @property
    def verdict_label(self) -> str:
        """The score's verdict and where it comes from: 'prevented in the replay'."""
        if not self.verdict:
            return "—"
        return f"{self.verdict} {self.judged}" if self.judged else self.verdict

    def describe(self) -> str:
        live = self.live_label
        if not self.verdict or (self.judged == "tonight" and self.verdict == self.live
                                and self.detail in ("", f"at {self.time}")):
            text = f"tonight: {live}" if self.verdict else live
        else:
            text = f"tonight: {live}; scored {self.verdict_label}" + (
                f" ({self.detail})" if self.detail else "")
        return text + (f"; {self.evidence}" if self.evidence else "")


@frozen
class GoodPath(Value):
    """A write the guards must still allow, and whether they did."""

    id: str
    title: str
    ok: bool
    why: str


@frozen
class ReplayStep(Value):
    """One race step as the last replay judged it."""

    step: str
    title: str
    outcome: str
    detail: str


@frozen
class Replay(Value):
    """What the last replay event said; `ran` is False when there was none."""

    ran: bool
    time: str | None
    note: str
    steps: tuple[ReplayStep, ...] = ()
    details: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()
    """When the team asked for a replay that ran (the final one is raceday's, not theirs)."""


@frozen
class Guards(Value):
    """What the team put in place and what it did against the race."""

    schema_changes: tuple[Change, ...]
    edits: tuple[Edit, ...]
    steps: tuple[StepOutcome, ...]
    good_path: tuple[GoodPath, ...]
    replay: Replay
    blocked: tuple[str, ...] = ()
    """Each good write of the normal night the team's guards refused, and what it cost: the
    good path's other half (a check that "still works" does not clear these)."""

    def good_path_lines(self) -> list[str]:
        """The good path as the score judged it: each check, then each refused good write."""
        return [f"{p.title}: {'still works' if p.ok else 'BLOCKED: ' + p.why}"
                for p in self.good_path] + list(self.blocked)

    @property
    def any(self) -> bool:
        """Whether the team put any guard in place (a schema change or an edit)."""
        return bool(self.schema_changes or self.edits)


@frozen
class ChecklistItem(Value):
    """One practice of the exercise's checklist, with the evidence from this session."""

    id: str
    practice: str
    status: str
    did: tuple[str, ...]
    did_not: tuple[str, ...]
    note: str = ""
    text: str = ""


@frozen
class CorrectiveAction(Value):
    """A row of the improvement plan; owner and due date are for the team to fill in."""

    action: str
    origin: str
    owner: str = ""
    due: str = ""
    issue: str = ""
    start: str = ""


@frozen
class Analysis(Value):
    """What the room wrote in the hot wash for an area for improvement (`raceday aar`)."""

    analysis: str = ""
    recommendation: str = ""


@frozen
class AfterAction(Value):
    """The after-action report: strengths, areas for improvement and the improvement
    plan, with what the room wrote into it in the hot wash."""

    strengths: tuple[str, ...]
    improvements: tuple[str, ...]
    actions: tuple[CorrectiveAction, ...]
    analyses: tuple[Analysis, ...] = ()
    """One per area for improvement, in its order (blank until the room fills it in)."""
    evaluators: str = ""

    def analysis_of(self, index: int) -> Analysis:
        return self.analyses[index] if index < len(self.analyses) else Analysis()


@frozen
class Observation(Value):
    """An observer's note, with who wrote it, when; `tag` files it under the strengths
    ("strength") or the areas for improvement ("improvement") of the AAR."""

    time: str
    author: str
    text: str
    tag: str = ""


@frozen
class InjectResponse(Value):
    """An inject the team was shown, and what the team did before the next one arrived
    (at most `RESPONSE_WINDOW` minutes): the AAR's "injects beside the responses"."""

    time: str
    kind: str
    title: str
    to: str
    source: str
    responses: tuple[str, ...]


@frozen
class Objective(Value):
    """One objective of the exercise (a part of the score) and how it was met, rated as
    HSEEP does: P performed without challenges, S with some, M with major ones, U unable."""

    name: str
    points: int
    max: int
    rating: str


@frozen
class Debrief(Value):
    """Everything the debrief says about one session."""

    summary: Summary
    warning: str | None
    score: ScoreReport | None
    timeline: Timeline
    changes: tuple[Change, ...]
    failures: tuple[Change, ...]
    refusals: tuple[Refusal, ...]
    monitors: tuple[MonitorInfo, ...]
    declarations: tuple[Declaration, ...]
    hints: tuple[HintInfo, ...]
    guards: Guards
    checklist: tuple[ChecklistItem, ...]
    after_action: AfterAction
    notes: tuple[str, ...] = ()
    checklist_title: str = ""
    names: tuple[tuple[str, str], ...] = ()  # (role, the player's name) from the cast
    observations: tuple[Observation, ...] = ()
    injects: tuple[InjectResponse, ...] = ()
    objectives: tuple[Objective, ...] = ()
    facilitation: tuple[str, ...] = ()  # the facilitator's hand on the clock, in words
    charts: tuple[ev.Chart, ...] = ()  # the night's charts, drawn over simulated time
    learned: tuple[str, ...] = ()  # three lines from the checklist: done, left, next

    @property
    def team_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if not c.automated)

    @property
    def automation_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.automated)
