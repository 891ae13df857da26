"""The debrief as one self-contained HTML file: inline CSS, an inline SVG chart, printable.

Nothing in the file refers to anything outside it: no stylesheet or script links, no images,
no fonts, no URLs (text that contains '://' is written with an entity, so even a player's SQL
that names a web address cannot become one). Opening it makes no network request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from raceday.transcript.debrief.model import NOT_SEEN, Change, Debrief
from raceday.transcript.debrief.people import RATINGS
from raceday.transcript.debrief.words import after_label, capital, group_automation, source_text
from raceday.transcript.timeline_chart import (
    EVENT,
    KINDS,
    LANES,
    escape_text,
    numbered,
    render_svg,
    render_svg_narrow,
)

_CSS = """
:root { --ink: #1b1f23; --dim: #5d6670; --rule: #d5d9de; --bad: #b03a2e; --good: #1e8449;
        --part: #b9770e; --bg: #ffffff; --panel: #f5f7f9; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: var(--bg); max-width: 1040px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.7em; margin: 0 0 .2em; }
h2 { font-size: 1.3em; border-bottom: 2px solid var(--rule); padding-bottom: .2em;
     margin-top: 2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 .4em; }
.lede { color: var(--dim); font-style: italic; }
.outcome { background: var(--panel); border-left: 4px solid var(--ink); padding: .6em 1em; }
.warning { background: #fdf2e9; border-left: 4px solid var(--part); padding: .6em 1em; }
.facts { color: var(--dim); margin: .4em 0 0; padding-left: 1.2em; }
table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; font-size: .92em; }
th, td { border: 1px solid var(--rule); padding: .3em .5em; text-align: left;
         vertical-align: top; }
th { background: var(--panel); }
td.num { text-align: right; white-space: nowrap; }
td[data-label="Start"], td[data-label="Due date"] { white-space: nowrap; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
            font-size: .9em; }
pre { background: var(--panel); padding: .5em .8em; overflow-x: auto; white-space: pre-wrap;
      margin: .2em 0 .8em; }
.score { font-size: 2.2em; font-weight: 700; }
.status { font-weight: 600; white-space: nowrap; }
.s-done, .ok { color: var(--good); }
.s-not-done, .bad { color: var(--bad); }
.s-partly-done, .part { color: var(--part); }
.s-not-seen-in-this-session { color: var(--dim); }
.tag { color: var(--dim); font-size: .85em; white-space: nowrap; }
svg.timeline { display: block; margin: .6em 0; }
svg.timeline-narrow { display: none; max-width: 420px; }
@media (max-width: 640px) {
  svg.timeline-wide { display: none; } svg.timeline-narrow { display: block; }
  body { padding: 12px; overflow-wrap: anywhere; }
  table, thead, tbody, tr, th, td { display: block; width: 100%; }
  thead { position: absolute; left: -9999px; }
  tr { border: 1px solid var(--rule); margin-bottom: .6em; }
  td { border: none; border-bottom: 1px solid var(--rule); }
  td:last-child { border-bottom: none; }
  td[data-label]::before { content: attr(data-label); display: block; font-weight: 600;
                           color: var(--dim); font-size: .85em; }
  td.num { text-align: left; white-space: normal; }
  .status, .tag, .legend span { white-space: normal; }
}
svg .band-label { font: 12px system-ui, sans-serif; fill: var(--ink); }
svg .lane-name-top { text-anchor: middle; font-size: 14px; }
svg .tick-label-left { text-anchor: start; font-size: 12px; }
svg .mark-label-side { text-anchor: start; font-size: 14px; }
svg .lane-team { fill: #f4f8fb; } svg .lane-event { fill: #f8f6f2; }
svg .lane-name { font: 600 13px system-ui, sans-serif; fill: var(--ink); }
svg .track { stroke: #aab2bb; stroke-width: 1; }
svg .axis, svg .tick { stroke: #aab2bb; stroke-width: 1; }
svg .tick { stroke-dasharray: 2 3; }
svg .tick-label { font: 11px ui-monospace, monospace; fill: var(--dim); text-anchor: middle; }
svg .mark-label { font: 600 11px system-ui, sans-serif; text-anchor: middle; }
.legend span { margin-right: 1.2em; white-space: nowrap; }
.blank { min-width: 8em; }
footer { color: var(--dim); font-size: .85em; margin-top: 3em; border-top: 1px solid var(--rule);
         padding-top: .6em; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  table, pre, svg, .outcome { break-inside: avoid; page-break-inside: avoid; }
  pre { white-space: pre-wrap; }
  .outcome, th, pre { background: none; }
  a { color: inherit; text-decoration: none; }
}
"""


def _e(text: object) -> str:
    return escape_text(str(text))


def _table(header: Sequence[str], rows: Iterable[Sequence[object]],
           numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    labels = [f' data-label="{_e(h)}"' if h else "" for h in header]  # a narrow screen's cards
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num"{labels[i]}>{_e(c)}</td>' if i in numeric
            else f"<td{labels[i] if i < len(labels) else ''}>{c}</td>"
            for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _pre(sql: str) -> str:
    return f"<pre><code>{_e(sql.strip())}</code></pre>"


def _ul(items: Iterable[str], empty: str = "") -> str:
    lines = [f"<li>{_e(x)}</li>" for x in items]
    if not lines:
        return f"<p>{_e(empty)}</p>" if empty else ""
    return "<ul>" + "".join(lines) + "</ul>"


def _slug(text: str) -> str:
    return "s-" + "-".join(text.lower().split())


def render_html(d: Debrief) -> str:
    """The whole debrief as one HTML document."""
    s = d.summary
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Debrief: {_e(s.title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Debrief: {_e(s.title)}</h1>",
    ]
    if d.warning:
        parts.append(f'<p class="warning"><strong>Warning:</strong> {_e(d.warning)}</p>')
    if s.text:
        parts.append(f'<p class="lede">{_e(s.text)}</p>')
    parts.append(f'<p class="outcome">{_e(s.outcome)}</p>')
    parts.append('<ul class="facts">'
                 f"<li>Exercise <code>{_e(s.exercise)}</code>"
                 f"{', ' + _e(s.dates()) if s.dates() else ''}</li>"
                 f"<li>Players held: {_e(_held(d) or 'nobody (all automated)')}; "
                 f"automation played: {_e(', '.join(s.automated) or 'nothing')}</li>"
                 f"<li>Clock {_e(s.clock_from)} to {_e(s.clock_to)} {_e(s.zone)} "
                 f"({_e(s.pace)} pace); {s.events} events</li>"
                 f"<li>Wall clock {_e(s.wall_started or '?')} to {_e(s.wall_ended or '?')}; "
                 f"{_e(s.ended)}</li>"
                 + (f"<li>Interrupted: the session {_e(s.interruptions())}</li>"
                    if s.resumed else "") + "</ul>")
    parts += [f'<p class="warning">{_e(n)}</p>' for n in d.notes]
    if d.learned:
        parts.append('<h2 id="what-you-learned">What you learned</h2>'
                     + _ul(_e(line) for line in d.learned))
    parts += [_score(d), _timeline(d), _night_charts(d), _changes(d), _monitors(d), _guards(d),
              _checklist(d), _after_action(d)]
    parts.append("<footer>Written by raceday from the session's transcript (events.jsonl). "
                 "This file is self-contained: it loads nothing from anywhere.</footer>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _night_charts(d: Debrief) -> str:
    """The night's charts (SVG), with that night's moments numbered in a legend."""
    from raceday.transcript.charts import chart_legend, chart_svg

    out = []
    for chart in d.charts:
        legend = _ul(f"{_e(n)}: {_e(what)}" for n, what in chart_legend(chart))
        out.append(f"<h2>{_e(chart.label)}</h2><figure>{chart_svg(chart)}</figure>{legend}")
    return "\n".join(out)


def _held(d: Debrief) -> str:
    named = dict(d.names)
    return ", ".join(f"{p} ({named[p]})" if named.get(p) else p for p in d.summary.players)


def _score(d: Debrief) -> str:
    sc = d.score
    if sc is None:
        return "<h2>Score</h2><p>No score: the session did not reach its end.</p>"
    out = [f'<h2>Score</h2><p class="score">{sc.total} / {sc.max}</p>']
    if sc.prevented_outright:
        out.append("<p>The team prevented the race outright: detection and recovery score full "
                   "marks as not needed. To practise the response too, play it again as it "
                   "happened.</p>")
    elif sc.fault and not sc.fault_occurred:
        out.append(f"<p>{_e(sc.fault)}</p>")
    rows: list[Sequence[object]] = [
        (_e(sec.name), sec.points, sec.max, "<br>".join(_e(r) for r in sec.reasons))
        for sec in sc.sections]
    if sc.hints or sc.hint_cost:
        rows.append(("hints", -sc.hint_cost, 0, _e(", ".join(sc.hints))))
    if sc.figures:
        night = d.timeline.night
        header = ("Measured", "Your team", night) if night else ("Measured", "Your team")
        out.append(_table(header, [tuple(_e(x) for x in (f.label, f.team, f.night or "—"))
                                   [:len(header)] for f in sc.figures]))
    if sc.judged:
        out.append(_ul(sc.judged))
    out.append(_table(("Part", "Points", "Of", "Every point, with its reason"), rows, (1, 2)))
    return "".join(out)


def _timeline(d: Debrief) -> str:
    t = d.timeline
    chart = t.chart()
    if t.has_event:
        out = [f"<h2>Timeline: your team beside {_e(t.night.lower())}</h2>",
               "<p>T+ counts from the first symptom (the fault) on each side.</p>",
               render_svg(chart, t.night), render_svg_narrow(chart, t.night)]
    else:
        out = ["<h2>Timeline</h2>", "<p>T+ counts from the first symptom (the fault). This "
               "exercise compares with no real event, so only the team's side is shown.</p>",
               render_svg(chart, ""), render_svg_narrow(chart, "")]
    lanes = {**dict(LANES), EVENT: t.night}
    if chart.marks:
        out.append(_table(("#", "Lane", "Time", "What", "Source"), [
            (n, _e(lanes[m.lane]), _e(m.time),
             f'<span style="color:{KINDS.get(m.kind, KINDS["reveal"])[1]}">&#9679;</span> '
             + _e(m.label), f'<span class="tag">{_e(m.source)}</span>')
            for n, m in numbered(chart, t.night)], (0,)))
    header: tuple[str, ...] = ("Moment", "Your team", "T+", "What", t.night, "T+", "What",
                               "Source")
    rows: list[tuple[str, ...]] = [
        (_e(p.label), _e(p.team_time or "—"), _e(after_label(p.team_after)), _e(p.team_note),
         _e(p.event_time or "—"), _e(after_label(p.event_after)), _e(p.event_note),
         f'<span class="tag">{_e(p.source)}</span>') for p in t.phases]
    if not t.has_event:
        header, rows = header[:4], [row[:4] for row in rows]
    out.append(_table(header, rows))
    if t.facts:
        out.append(f"<h3>What happened {_e(t.night.lower())} (the facts this exercise "
                   "reveals)</h3>" if t.has_event else "<h3>What the exercise revealed</h3>")
        out.append(_table(("Time", "What", "Source"), [
            (_e(f.time), _e(f.title), f'<span class="tag">{_e(f.source)}</span>')
            for f in t.facts]))
    if t.sources:
        out.append("<h3>Sources</h3>" + _ul(f"{tag}: {source_text(t, tag)}" for tag in t.sources))
    return "".join(out)


def _change_rows(changes: Iterable[Change]) -> str:
    out = []
    for c in changes:
        flags = c.flags
        out.append(f"<h3>{_e(c.time)} {_e(c.role)}"
                   f"{' (' + _e(', '.join(flags)) + ')' if flags else ''}: "
                   f"{_e(c.outcome)}</h3>{_pre(c.sql)}")
    return "".join(out)


def _changes(d: Debrief) -> str:
    out = ["<h2>Every change to the world</h2>", "<h3>By the team</h3>"]
    team = d.team_changes
    out.append(_change_rows(team) if team else "<p>The team changed nothing in the world.</p>")
    auto = group_automation(d)
    out.append("<h3>By the automation</h3>")
    out.append(_table(("Role", "Statement", "Outcome", "When", "Runs", "Rows"),
                      [tuple(_e(x) for x in row) for row in auto], (4, 5))
               if auto else "<p>The automation changed nothing.</p>")
    fails = [c for c in d.failures if not c.automated]
    if fails:
        out.append("<h3>The team's statements that failed</h3>")
        out.append(_table(("When", "Role", "SQL", "Error"), [
            (_e(c.time), _e(c.role), f"<code>{_e(c.sql)}</code>", _e(c.outcome)) for c in fails]))
    if d.refusals:
        out.append("<h3>Actions raceday refused</h3>")
        out.append(_table(("When", "Role", "Action", "Why"), [
            (_e(r.time), _e(r.role), _e(r.action), _e(r.error)) for r in d.refusals]))
    return "".join(out)


def _monitors(d: Debrief) -> str:
    out = ["<h2>Monitors and declarations</h2>"]
    if d.monitors:
        out.append(_table(("Monitor", "Role", "Saved", "First alert", "Alerts", "Counted", "SQL"), [
            (_e(m.name), _e(m.role), _e(m.saved_at), _e(m.first_alert or "never"), _e(m.alerts),
             _e("no (noise)" if m.noise else "yes" if m.matched else "no"),
             f"<code>{_e(m.sql)}</code>" + (f" (error: {_e(m.error)})" if m.error else ""))
            for m in d.monitors]))
    else:
        out.append("<p>No monitor was saved.</p>")
    if d.declarations:
        out.append(_table(("When", "Role", "Finding", "Right?"), [
            (_e(x.time), _e(x.role), _e(x.text),
             f'<span class="{"ok" if x.right else "bad"}">'
             f"{_e(x.judged)}</span>")
            for x in d.declarations]))
    else:
        out.append("<p>No finding was declared.</p>")
    if d.hints:
        out.append("<p>Hints revealed:</p>" + _ul(f"{h.time} {h.text} (-{h.cost})"
                                                 for h in d.hints))
    return "".join(out)


def _guards(d: Debrief) -> str:
    g = d.guards
    out = ["<h2>Guards and the replay</h2>", "<h3>Guards the team put in place</h3>"]
    if not g.schema_changes and not g.edits:
        out.append("<p>None: no schema change and no edit to the automation.</p>")
    out += [f"<p>{_e(c.time)} <strong>{_e(c.role)}</strong> changed the schema:</p>{_pre(c.sql)}"
            for c in g.schema_changes]
    out += [f"<p>{_e(e.time)} <strong>{_e(e.role)}</strong> edited the automation's "
            f"<code>{_e(e.statement)}</code> to:</p>{_pre(e.sql)}" for e in g.edits]
    if g.steps:
        out.append("<h3>The race, step by step</h3><p>What the step did tonight, and the "
                   "score's verdict (the replay's, against the team's final database, when one "
                   "was run).</p>")
        out.append(_table(("Step", "What", "Tonight", "Scored", "Why", "What was seen"), [
            (_e(st.id), _e(st.title),
             f'<span class="{"bad" if st.live == "happened" else "ok"}">{_e(st.live_label)}'
             "</span>",
             f'<span class="{_verdict_class(st.verdict, st.guarded)}">'
             f"{_e(st.verdict_label)}</span>", _e(st.detail),
             ("<strong>guard:</strong> " if st.guarded else "") + _e(st.evidence))
            for st in g.steps]))
    if g.good_path or g.blocked:
        out.append("<h3>The good path</h3>" + _ul(g.good_path_lines()))
    r = g.replay
    out.append("<h3>Replay</h3>")
    if not r.ran:
        out.append(f"<p>{_e(r.note)}{' (asked at ' + _e(r.time) + ')' if r.time else ''}</p>")
    else:
        out.append(f"<p>Replayed at {_e(r.time or '?')}"
                   f"{': ' + _e(r.note) + '.' if r.note else '.'}</p>")
        if r.steps:
            out.append(_table(("Step", "What", "Outcome", "Detail"), [
                (_e(st.step), _e(st.title), _e(st.outcome), _e(st.detail)) for st in r.steps]))
        out.append(_ul(r.details))
    return "".join(out)


def _verdict_class(verdict: str, guarded: bool) -> str:
    """Red for happened, green for prevented by a guard seen working, amber otherwise."""
    if verdict == "happened":
        return "bad"
    return "ok" if guarded or verdict != "prevented" else "part"


def _checklist(d: Debrief) -> str:
    if not d.checklist:
        return ""
    rows = []
    for i in d.checklist:
        evidence = [f"Did: {x}" for x in i.did] + [f"Did not: {x}" for x in i.did_not]
        if i.status == NOT_SEEN:
            evidence = [capital(NOT_SEEN) + "."]
        if i.note:
            evidence.append(f"Note: {i.note}")
        rows.append((f"<strong>{_e(i.practice)}</strong><br><em>{_e(i.text)}</em>",
                     f'<span class="status {_slug(i.status)}">{_e(i.status)}</span>',
                     _ul(evidence)))
    return (f"<h2>{_e(d.checklist_title)}</h2>"
            + _table(("Practice", "Status", "What the team did and did not do"), rows))


def _after_action(d: Debrief) -> str:
    """The after-action report in the AAR/IP shape (see the Markdown renderer)."""
    a = d.after_action
    s = d.summary
    named = dict(d.names)
    blank = '<span class="blank">____</span>'
    people = ", ".join(f"{role} ({named[role]})" if named.get(role) else role
                       for role in s.players) or "none"
    out = ["<h2>After-action report and improvement plan</h2>",
           "<p>In the AAR/IP shape, to finish together in the hot wash: <code>raceday aar "
           "SESSION</code> adds what the transcript cannot know (the analysis, owners, dates, "
           "observations) and writes this page again.</p>",
           "<h3>1. Exercise overview</h3>",
           _ul([f"Exercise: {s.title} ({s.exercise})" + (f", {s.dates()}" if s.dates() else ""),
                f"Scenario: {s.text or '(see the briefing)'}",
                f"Simulated time: {s.clock_from} to {s.clock_to} {s.zone} ({s.pace} pace); "
                f"wall clock {s.wall_started or '?'} to {s.wall_ended or '?'}",
                f"Participants: {people}; automated: {', '.join(s.automated) or 'none'}",
                f"Facilitator / evaluators: {a.evaluators or '____'}",
                *([f"Interrupted: the session {s.interruptions()}"] if s.resumed else [])]),
           "<h3>2. Objectives</h3>"]
    if d.objectives:
        out.append(_table(("Objective", "Points", "Rating"), [
            (_e(o.name), f"{o.points}/{o.max}", _e(f"{o.rating}: {RATINGS[o.rating]}"))
            for o in d.objectives]))
    else:
        out.append("<p>No score: the session stopped before it ended.</p>")
    out += ["<h3>3. Analysis</h3><h4>Strengths</h4>",
            _ul(a.strengths, "(none recorded: add them in the hot wash)"),
            "<h4>Areas for improvement</h4>"]
    if a.improvements:
        out.append("<ol>" + "".join(
            f"<li><strong>Observation:</strong> {_e(x)}<br><strong>Analysis:</strong> "
            f"{_e(a.analysis_of(n).analysis) or blank}<br><strong>Recommendation:</strong> "
            f"{_e(a.analysis_of(n).recommendation) or blank}</li>"
            for n, x in enumerate(a.improvements))
            + "</ol>")
    else:
        out.append("<p>(none recorded: add them in the hot wash)</p>")
    out += ["<h3>4. Injects and the team's responses</h3>",
            "<p>What the team did after each inject, until the next one (at most 15 "
            "minutes). An inject with no response is worth a question in the hot wash.</p>"]
    if d.injects:
        out.append(_table(("Time", "Inject", "To", "The team's response"), [
            (_e(i.time), _e(f"{i.kind}: {i.title}")
             + (" <em>(facilitator)</em>" if i.source == "facilitator" else ""), _e(i.to),
             "<br>".join(_e(x) for x in i.responses) or "<strong>no response seen</strong>")
            for i in d.injects]))
    out += ["<h3>5. Observer notes</h3>",
            _ul([f"{o.time or 'hot wash'} {o.author or 'observer'}"
                 + (f" ({'strength' if o.tag == 'strength' else 'area for improvement'})"
                    if o.tag else "") + f": {o.text}" for o in d.observations],
                "(none recorded: ctrl+o during play writes one)")]
    if d.facilitation:
        out.append(f"<p>Facilitation: {_e('; '.join(d.facilitation))}.</p>")
    out.append("<h3>Appendix A: Improvement plan</h3>")
    rows: list[Sequence[object]] = [
        (n, _e(x.origin), _e(x.issue) or blank, _e(x.action), _e(x.owner) or blank,
         _e(x.start) or blank, _e(x.due) or blank)
        for n, x in enumerate(a.actions, start=1)]
    if not rows:
        rows = [(1, "", blank, "", blank, blank, blank)]
    out.append(_table(("#", "Objective / practice", "Issue", "Corrective action", "Owner",
                       "Start", "Due date"), rows, (0,)))
    return "".join(out)
