"""The debrief as Markdown: what `debrief.md` holds, and what the review screen shows.

Tables are GitHub-flavoured; a player's SQL goes in fenced blocks (or inline code in a table
cell) exactly as written, with the pipes of table cells escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from raceday.transcript.debrief.model import NOT_SEEN, Debrief
from raceday.transcript.debrief.people import RATINGS
from raceday.transcript.debrief.words import (
    after_label,
    capital,
    group_automation,
    source_tag,
    source_text,
)
from raceday.transcript.timeline_chart import render_text


class _Md(str):
    """Markdown this module made (a code span): put in a table cell as it is."""


_ACTIVE = {ord(c): "\\" + c for c in "\\`<[]|"}


def _text(text: object) -> str:
    """Data (a name, a note, an error, a title) as Markdown that shows it and does nothing:
    on one line, with what could open a code span, raw HTML, a link or a table cell escaped."""
    return " ".join(str(text).split()).translate(_ACTIVE)


def _cell(text: object) -> str:
    if isinstance(text, _Md):
        return str(text).replace("|", "\\|")
    return _text(text)


def _longest_run(text: str, char: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == char else 0
        longest = max(longest, run)
    return longest


def _code(text: str) -> _Md:
    """A code span longer than any run of backticks in it (CommonMark: it cannot end early)."""
    flat = " ".join(text.split())
    if not flat:
        return _Md("")
    ticks = "`" * (_longest_run(flat, "`") + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return _Md(f"{ticks}{pad}{flat}{pad}{ticks}")


def _sql_block(sql: str, indent: str = "") -> list[str]:
    """A fenced block whose fence is longer than any run of backticks in the SQL, so no line
    of it can close the block early."""
    fence = "`" * max(3, _longest_run(sql, "`") + 1)
    body = [f"{indent}{line}".rstrip() for line in sql.strip().splitlines()]
    return [f"{indent}{fence}sql", *body, f"{indent}{fence}"]


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(d: Debrief) -> str:
    """The debrief as Markdown: what `debrief.md` holds."""
    s = d.summary
    out: list[str] = [f"# Debrief: {_text(s.title)}", ""]
    if d.warning:
        out += [f"> **Warning:** {_text(d.warning)}", ""]
    out += [f"*{_text(s.text)}*", ""] if s.text else []
    out += [s.outcome, ""]
    named = dict(d.names)
    played = ", ".join(f"{p} ({_text(named[p])})" if named.get(p) else p for p in s.players) \
        or "nobody (all automated)"
    out += [
        f"- Exercise: {_code(s.exercise)}" + (f", {s.dates()}" if s.dates() else ""),
        f"- Players held: {played}; automation played: {', '.join(s.automated) or 'nothing'}",
        f"- Clock: {s.clock_from} to {s.clock_to} {s.zone} ({s.pace} pace); {s.events} events",
        f"- Wall clock: {s.wall_started or '?'} to {s.wall_ended or '?'}; {s.ended}",
        *([f"- Interrupted: the session {_text(s.interruptions())}"] if s.resumed else []),
        "",
    ]
    for note in d.notes:
        out += [f"> {_text(note)}", ""]
    if d.learned:
        out += ["## What you learned", "", *[f"- {_text(line)}" for line in d.learned], ""]
    out += _score(d)
    out += _timeline(d)
    for chart in d.charts:  # the night's charts, as text
        from raceday.transcript.charts import chart_text

        out += [f"## {chart.label}", "", "```", *chart_text(chart), "```", ""]
    out += _changes(d)
    out += _monitors(d)
    out += _guards(d)
    out += _checklist(d)
    out += _after_action(d)
    out += ["---", "", "*Written by raceday from the session's transcript (events.jsonl).*", ""]
    return "\n".join(out)


def _score(d: Debrief) -> list[str]:
    sc = d.score
    if sc is None:
        return ["## Score", "", "No score: the session did not reach its end.", ""]
    out = [f"## Score: {sc.total}/{sc.max}", ""]
    if sc.prevented_outright:
        out += ["The team prevented the race outright: detection and recovery score full marks "
                "as not needed. To practise the response too, play it again as it happened.",
                ""]
    elif sc.fault and not sc.fault_occurred:
        out += [sc.fault, ""]
    rows = [(sec.name, sec.points, sec.max) for sec in sc.sections]
    if sc.hint_cost or sc.hints:
        rows.append(("hints", -sc.hint_cost, 0))
    out += _table(("Part", "Points", "Of"), rows) + [""]
    if sc.figures:
        night = d.timeline.night
        header = ("Measured", "Your team", night) if night else ("Measured", "Your team")
        out += ["The times the score measured" + (f", beside {night.lower()}'s:" if night
                                                   else ":"), ""]
        out += _table(header, [(f.label, f.team, f.night or "—")[:len(header)]
                               for f in sc.figures]) + [""]
    if sc.judged:
        out += [f"- {_text(line)}" for line in sc.judged] + [""]
    out += ["Every point, with its reason:", ""]
    out += [f"- {_text(r)}" for r in sc.reasons] + [""]
    return out


def _timeline(d: Debrief) -> list[str]:
    t = d.timeline
    if t.has_event:
        out = [f"## Timeline: your team beside {t.night.lower()}", "",
               "T+ counts from the first symptom (the fault) on each side.", ""]
        out += _table(
            ("Moment", "Your team", "T+", "What", t.night, "T+", "What", "Source"),
            [(p.label, p.team_time or "—", after_label(p.team_after), p.team_note,
              p.event_time or "—", after_label(p.event_after), p.event_note, source_tag(p.source))
             for p in t.phases]) + [""]
    else:
        out = ["## Timeline", "", "T+ counts from the first symptom (the fault). This exercise "
               "compares with no real event, so only the team's side is shown.", ""]
        out += _table(("Moment", "Your team", "T+", "What"),
                      [(p.label, p.team_time or "—", after_label(p.team_after), p.team_note)
                       for p in t.phases]) + [""]
    out += ["```text", *render_text(t.chart(), night=t.night), "```", ""]
    if t.facts:
        out += [(f"What happened {t.night.lower()} (the facts this exercise reveals, each with "
                 "its source):") if t.has_event else "What the exercise revealed:", ""]
        out += [f"- {f.time} {f.title} {source_tag(f.source)}".rstrip() for f in t.facts] + [""]
    if t.sources:
        out += ["Sources: " + "; ".join(f"[{tag}] {source_text(t, tag)}" for tag in t.sources) + ".",
                ""]
    return out


def _changes(d: Debrief) -> list[str]:
    out = ["## Every change to the world", "", "### By the team", ""]
    team = d.team_changes
    if not team:
        out += ["The team changed nothing in the world.", ""]
    for c in team:
        flags = ", ".join(c.flags)
        out.append(f"- {c.time} **{c.role}**{f' ({flags})' if flags else ''}: {_text(c.outcome)}")
        out += _sql_block(c.sql, "  ")
    out.append("")
    auto = group_automation(d)
    out += ["### By the automation", ""]
    if auto:
        out += _table(("Role", "Statement", "Outcome", "When", "Runs", "Rows"), auto) + [""]
    else:
        out += ["The automation changed nothing.", ""]
    team_fail = [c for c in d.failures if not c.automated]
    if team_fail:
        out += ["### The team's statements that failed", ""]
        out += _table(("When", "Role", "SQL", "Error"),
                      [(c.time, c.role, _code(c.sql), c.outcome) for c in team_fail]) + [""]
    if d.refusals:
        out += ["### Actions raceday refused", ""]
        out += _table(("When", "Role", "Action", "Why"),
                      [(r.time, r.role, r.action, r.error) for r in d.refusals]) + [""]
    return out


def _monitors(d: Debrief) -> list[str]:
    out = ["## Monitors and declarations", ""]
    if d.monitors:
        out += _table(("Monitor", "Role", "Saved", "First alert", "Alerts", "Counted", "SQL"),
                      [(m.name, m.role, m.saved_at, m.first_alert or "never", m.alerts,
                        "no (noise)" if m.noise else "yes" if m.matched else "no",
                        _Md(_code(m.sql) + (f" (error: {_text(m.error)})" if m.error else "")))
                       for m in d.monitors]) + [""]
    else:
        out += ["No monitor was saved.", ""]
    if d.declarations:
        out += _table(("When", "Role", "Finding", "Right?"),
                      [(x.time, x.role, x.text, x.judged)
                       for x in d.declarations]) + [""]
    else:
        out += ["No finding was declared.", ""]
    if d.hints:
        out += ["Hints revealed: " + "; ".join(f"{h.time} {_text(h.text)} (-{h.cost})"
                                               for h in d.hints), ""]
    return out


def _guards(d: Debrief) -> list[str]:
    g = d.guards
    out = ["## Guards and the replay", "", "### Guards the team put in place", ""]
    if not g.schema_changes and not g.edits:
        out += ["None: no schema change and no edit to the automation.", ""]
    for c in g.schema_changes:
        out.append(f"- {c.time} **{c.role}** changed the schema:")
        out += _sql_block(c.sql, "  ")
    for e in g.edits:
        out.append(f"- {e.time} **{e.role}** edited the automation's {_code(e.statement)} to:")
        out += _sql_block(e.sql, "  ")
    out += [""] if g.schema_changes or g.edits else []
    if g.steps:
        out += ["### The race, step by step", "",
                "What the step did tonight, and the score's verdict (the replay's, against the "
                "team's final database, when one was run).", ""]
        out += _table(("Step", "What", "Tonight", "Scored", "Why", "What was seen"),
                      [(st.id, st.title, st.live_label, st.verdict_label, st.detail,
                        ("guard: " if st.guarded else "") + st.evidence)
                       for st in g.steps]) + [""]
    if g.good_path or g.blocked:
        out += ["### The good path", ""]
        out += [f"- {_text(line)}" for line in g.good_path_lines()] + [""]
    out += ["### Replay", ""]
    r = g.replay
    if not r.ran:
        out += [_text(r.note) + (f" (asked at {r.time})" if r.time else ""), ""]
    else:
        out += [f"Replayed at {r.time}" + (f": {_text(r.note)}." if r.note else "."), ""]
        if r.steps:
            out += _table(("Step", "What", "Outcome", "Detail"),
                          [(st.step, st.title, st.outcome, st.detail) for st in r.steps]) + [""]
        out += [f"- {_text(line)}" for line in r.details] + ([""] if r.details else [])
    return out


def _checklist(d: Debrief) -> list[str]:
    if not d.checklist:
        return []
    out = [f"## {d.checklist_title}", ""]
    out += _table(("Practice", "Status"), [(i.practice, i.status) for i in d.checklist]) + [""]
    for i in d.checklist:
        out += [f"### {i.practice}: {i.status}", ""] + ([f"*{i.text}*", ""] if i.text else [])
        out += [f"- Did: {line}" for line in i.did]
        out += [f"- Did not: {line}" for line in i.did_not]
        if i.status == NOT_SEEN:
            out.append(f"- {capital(NOT_SEEN)}.")
        if i.note:
            out.append(f"- Note: {i.note}")
        out.append("")
    return out


TAGS = {"strength": "strength", "improvement": "area for improvement"}


def _after_action(d: Debrief) -> list[str]:
    """The after-action report in the AAR/IP shape (CISA/HSEEP): overview, objectives,
    analysis (observations with analysis and recommendation), injects beside the team's
    responses, observer notes, and the improvement plan, with blanks to fill in together."""
    a = d.after_action
    s = d.summary
    named = dict(d.names)
    out = ["## After-action report and improvement plan", "",
           "In the AAR/IP shape, to finish together in the hot wash: `raceday aar SESSION` adds "
           "what the transcript cannot know (the analysis, owners, dates, observations).", "",
           "### 1. Exercise overview", "",
           f"- Exercise: {_text(s.title)} ({_code(s.exercise)})"
           + (f", {s.dates()}" if s.dates() else ""),
           f"- Scenario: {_text(s.text)}" if s.text else "- Scenario: (see the briefing)",
           f"- Simulated time: {s.clock_from} to {s.clock_to} {s.zone} ({s.pace} pace); "
           f"wall clock {s.wall_started or '?'} to {s.wall_ended or '?'}",
           "- Participants: " + (", ".join(
               f"{role} ({_text(named[role])})" if named.get(role) else role for role in s.players)
               or "none") + "; automated: " + (", ".join(s.automated) or "none"),
           f"- Facilitator / evaluators: {_text(a.evaluators) if a.evaluators else '____'}",
           *([f"- Interrupted: the session {_text(s.interruptions())}"] if s.resumed else []),
           ""]
    out += ["### 2. Objectives", ""]
    if d.objectives:
        out += _table(("Objective", "Points", "Rating"),
                      [(o.name, f"{o.points}/{o.max}", f"{o.rating}: {RATINGS[o.rating]}")
                       for o in d.objectives])
    else:
        out.append("(no score: the session stopped before it ended)")
    out += ["", "### 3. Analysis", "", "#### Strengths", ""]
    out += [f"- {x}" for x in a.strengths] or ["- (none recorded: add them in the hot wash)"]
    out += ["", "#### Areas for improvement", ""]
    if not a.improvements:
        out.append("- (none recorded: add them in the hot wash)")
    for n, x in enumerate(a.improvements, start=1):
        filled = a.analysis_of(n - 1)
        out += [f"{n}. **Observation:** {_text(x)}",
                f"   **Analysis:** {_text(filled.analysis) or '____ (why it happened)'}",
                f"   **Recommendation:** {_text(filled.recommendation) or '____'}", ""]
    out += ["", "### 4. Injects and the team's responses", "",
            "What the team did after each inject, until the next one (at most 15 minutes). "
            "An inject with no response is worth a question in the hot wash.", ""]
    out += _table(("Time", "Inject", "To", "The team's response"),
                  [(i.time, f"{i.kind}: {i.title}" + (" (facilitator)"
                                                      if i.source == "facilitator" else ""),
                    i.to, "; ".join(i.responses) or "**no response seen**")
                   for i in d.injects]) if d.injects else ["(no injects)"]
    out += ["", "### 5. Observer notes", ""]
    out += [f"- {o.time or 'hot wash'} **{_text(o.author or 'observer')}**"
            + (f" ({TAGS[o.tag]})" if o.tag in TAGS else "") + f": {_text(o.text)}"
            for o in d.observations] \
        or ["- (none recorded: ctrl+o during play writes one)"]
    if d.facilitation:
        out += ["", "Facilitation: " + "; ".join(_text(f) for f in d.facilitation) + "."]
    out += ["", "### Appendix A: Improvement plan", ""]
    out += _table(("#", "Objective / practice", "Issue or area for improvement",
                   "Corrective action", "Owner", "Start", "Due date"),
                  [(n, x.origin, x.issue, x.action, x.owner, x.start, x.due)
                   for n, x in enumerate(a.actions, start=1)])
    if not a.actions:
        out.append("| 1 | | | | | | |")
    out.append("")
    return out
