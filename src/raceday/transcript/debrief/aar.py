"""What the room writes into the after-action report in the hot wash (`raceday aar SESSION`):
the analysis and recommendation of each area for improvement, the improvement plan's issue,
owner, start and due date, rows of its own, observations tagged strength or area for
improvement, the evaluators. Saved as `aar.json` beside the transcript (which is never
rewritten), and rendered into the Markdown and HTML debriefs.

Each edit is keyed by the text it belongs to (an area for improvement, a corrective action),
not by its number: the debrief is rebuilt from the transcript each time, and a number could
come to mean another line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from raceday.errors import InputError, TranscriptError
from raceday.inert import json_text
from raceday.textfile import UnreadableText, read_text
from raceday.transcript.debrief.expectations import (
    Expected,
    expectations,
    mark_word,
    remark,
)
from raceday.transcript.debrief.model import (
    AfterAction,
    Analysis,
    CorrectiveAction,
    Debrief,
    Observation,
)
from raceday.transcript.debrief.people import tagged, with_observations
from raceday.value import Value, frozen

AAR_FILE = "aar.json"
PLAN_FIELDS = ("issue", "owner", "start", "due")
MAX_TEXT = 2000


@dataclass
class AarEdits:
    """The room's additions, as `aar.json` holds them."""

    evaluators: str = ""
    analyses: dict[str, dict[str, str]] = field(default_factory=dict)
    """area for improvement (its text) -> {"analysis": …, "recommendation": …}"""
    plan: dict[str, dict[str, str]] = field(default_factory=dict)
    """corrective action (its text) -> {"issue", "owner", "start", "due"}"""
    added_actions: list[str] = field(default_factory=list)
    observations: list[dict[str, str]] = field(default_factory=list)
    """{"time", "author", "text", "tag"}: written in the hot wash, not during play."""
    marks: dict[str, str] = field(default_factory=dict)
    """what an inject expected ("<inject id>: <its words>") -> met, partly or not met"""

    def to_json(self) -> str:
        return json_text({"format": "raceday-aar", "version": 1,
                          "evaluators": self.evaluators, "analyses": self.analyses,
                          "plan": self.plan, "added_actions": self.added_actions,
                          "observations": self.observations,
                          **({"marks": self.marks} if self.marks else {})}, indent=2) + "\n"


def aar_path(session: Path) -> Path:
    folder = session.parent if session.name == "events.jsonl" else session
    return folder / AAR_FILE


def read_edits(session: Path) -> AarEdits:
    """The session's `aar.json` (none yet: no edits); a broken one is a one-line error."""
    path = aar_path(session)
    if not path.is_file():
        return AarEdits()
    try:
        data = json.loads(read_text(path))
        if not isinstance(data, dict) or data.get("format") != "raceday-aar":
            raise ValueError("not a raceday AAR file")
        return AarEdits(
            evaluators=str(data.get("evaluators", "")),
            analyses={str(k): {str(f): str(v) for f, v in dict(x).items()}
                      for k, x in dict(data.get("analyses", {})).items()},
            plan={str(k): {str(f): str(v) for f, v in dict(x).items()}
                  for k, x in dict(data.get("plan", {})).items()},
            added_actions=[str(x) for x in data.get("added_actions", [])],
            observations=[{str(f): str(v) for f, v in dict(x).items()}
                          for x in data.get("observations", [])],
            marks={str(k): str(v) for k, v in dict(data.get("marks", {})).items()})
    except (OSError, UnreadableText) as exc:
        raise TranscriptError([f"{path}: cannot read the AAR ({exc})"]) from None
    except (ValueError, TypeError, AttributeError) as exc:
        raise TranscriptError([f"{path}: not a raceday AAR file ({exc})"]) from None


def apply_edits(d: Debrief, edits: AarEdits) -> Debrief:
    """The debrief with the room's words in its after-action report."""
    added = tuple(Observation(o.get("time", ""), o.get("author", ""), o.get("text", ""),
                              o.get("tag", "")) for o in edits.observations)
    a = with_observations(d.after_action, added)
    analyses = tuple(Analysis(edits.analyses.get(x, {}).get("analysis", ""),
                              edits.analyses.get(x, {}).get("recommendation", ""))
                     for x in a.improvements)
    known = {x.action for x in a.actions}
    rows = list(a.actions) + [CorrectiveAction(text, "the hot wash")
                              for text in edits.added_actions if text not in known]
    rows = [replace(row, **{f: edits.plan[row.action][f] for f in PLAN_FIELDS
                            if edits.plan.get(row.action, {}).get(f)})
            for row in rows]
    after = AfterAction(a.strengths, a.improvements, tuple(rows), analyses,
                        edits.evaluators)
    return remark(replace(d, after_action=after, observations=d.observations + added),
                  edits.marks)


@frozen
class AarChange(Value):
    """One edit asked for on the command line."""

    what: str  # analysis, recommendation, issue, owner, start, due, action, note, evaluators,
    # mark (`inject` names the inject, `number` its expectation, `text` the mark)
    text: str
    number: int | None = None
    at: str = ""
    by: str = ""
    inject: str = ""


def change(edits: AarEdits, debrief: Debrief, c: AarChange) -> None:
    """Apply one command-line edit to `edits` (checked against the debrief it edits)."""
    text = " ".join(c.text.split())
    if len(text) > MAX_TEXT:
        raise InputError([f"--{c.what}: at most {MAX_TEXT} characters"])
    a = debrief.after_action
    if c.what in ("analysis", "recommendation"):
        target = _numbered(a.improvements, c, "area for improvement",
                           "areas for improvement")
        edits.analyses.setdefault(target, {})[c.what] = text
    elif c.what in PLAN_FIELDS:
        row = _numbered([x.action for x in a.actions], c, "row of the improvement plan",
                        "rows in the improvement plan")
        if c.what in ("start", "due") and text:
            try:
                date.fromisoformat(text)
            except ValueError:
                raise InputError([f"--{c.what} {c.number} {text}: not a date (YYYY-MM-DD)"]) \
                    from None
        edits.plan.setdefault(row, {})[c.what] = text
    elif c.what == "action":
        if not text:
            raise InputError(["--action: say what is to be done"])
        if text not in edits.added_actions:
            edits.added_actions.append(text)
    elif c.what == "note":
        tag, words = tagged(text)
        if not words:
            raise InputError(["--note: the observation is empty"])
        edits.observations.append({"time": c.at, "author": c.by, "text": words, "tag": tag})
    elif c.what == "evaluators":
        edits.evaluators = text
    elif c.what == "mark":
        edits.marks[_expected(debrief, c).key] = _mark(c)
    else:
        raise InputError([f"unknown AAR edit {c.what!r}"])


NEWEST = -1
"""The number `new` stands for: the newest row (the one an --action of the same call adds)."""


def _numbered(items: tuple[str, ...] | list[str], c: AarChange, one: str, many: str) -> str:
    count = len(items)
    if c.number == NEWEST:
        if not items:
            raise InputError([f"--{c.what} new: there is no {one} yet (add one with --action "
                              "TEXT in the same call)"])
        return items[-1]
    if c.number is None or not 1 <= c.number <= count:
        raise InputError([f"--{c.what} {c.number}: there {'is' if count == 1 else 'are'} "
                          f"{count} {one if count == 1 else many} (numbered from 1; "
                          "`raceday aar SESSION` lists them)"])
    return items[c.number - 1]


def _mark(c: AarChange) -> str:
    word = mark_word(c.text)
    if word is None:
        raise InputError([f"--mark {c.inject}:{c.number} {c.text}: a mark is met, partly or "
                          "not-met"])
    return word


def _expected(d: Debrief, c: AarChange) -> Expected:
    """The expectation `--mark INJECT:N` names, or a one-line error saying what there is."""
    expected = expectations(d)
    of_inject = [x for x in expected if x.inject == c.inject]
    if not of_inject:
        there = sorted({x.inject for x in expected})
        raise InputError([f"--mark {c.inject}:{c.number}: no inject {c.inject!r} with expected "
                          "actions reached the team" + (
                              f" (these did: {', '.join(there)})" if there
                              else " (no inject of this session expected anything)")])
    found = next((x for x in of_inject if x.number == c.number), None)
    if found is None:
        count = len(of_inject)
        raise InputError([f"--mark {c.inject}:{c.number}: inject {c.inject} has {count} "
                          f"expected action{'s' * (count != 1)} (numbered from 1; `raceday "
                          "aar SESSION` lists them)"])
    return found


def aar_lines(d: Debrief) -> list[str]:
    """What can be edited, numbered as the command takes it."""
    a = d.after_action
    out = ["Areas for improvement (--analysis N TEXT, --recommendation N TEXT):"]
    for n, x in enumerate(a.improvements, start=1):
        filled = a.analysis_of(n - 1)
        out.append(f"  {n}. {x}")
        out.append(f"     analysis: {filled.analysis or '____'}; "
                   f"recommendation: {filled.recommendation or '____'}")
    if not a.improvements:
        out.append("  (none: --note '- WHAT' adds one)")
    out.append("Improvement plan (--issue/--owner/--start/--due N TEXT; --action TEXT adds a "
               "row):")
    for n, row in enumerate(a.actions, start=1):
        out.append(f"  {n}. {row.action} [{row.origin}]")
        out.append(f"     issue: {row.issue or '____'}; owner: {row.owner or '____'}; "
                   f"start: {row.start or '____'}; due: {row.due or '____'}")
    if not a.actions:
        out.append("  (no row yet: --action TEXT adds one)")
    out.append(f"Evaluators (--evaluators TEXT): {a.evaluators or '____'}")
    expected = expectations(d)
    if expected:
        out.append("What the injects expected (--mark INJECT:N met|partly|not-met):")
        out += [f"  {x.inject}:{x.number} {x.text}: "
                + (f"{x.mark} ({x.marked})" if x.mark else "____") for x in expected]
    return out
