"""The debrief in the terminal (`raceday debrief --format terminal`), with Rich.

Every cell is shown as written: a player's SQL or an exercise's source tag is never read as
Rich markup.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from raceday.transcript.debrief.model import NOT_SEEN, Debrief
from raceday.transcript.debrief.words import after_label, source_tag
from raceday.transcript.timeline_chart import render_rich


def render_terminal(d: Debrief, console: Console) -> None:
    """The debrief in the terminal, with Rich: tables, the timeline chart, the checklist."""
    for renderable in terminal_renderables(d, width=max(40, min(console.width, 120) - 20)):
        console.print(renderable)


def _row(table: Table, *cells: str | Text) -> None:
    """Add a row whose text is shown as written: no Rich markup in a player's SQL or a tag."""
    table.add_row(*(c if isinstance(c, Text) else Text(c) for c in cells))


def terminal_renderables(d: Debrief, width: int = 72) -> list[RenderableType]:
    """The debrief as Rich renderables (the terminal view and the TUI can both show them)."""
    s = d.summary
    parts: list[RenderableType] = []
    if d.warning:
        parts.append(Text(f"Warning: {d.warning}", style="bold yellow"))
    head = Text()
    head.append(f"{s.text}\n\n" if s.text else "", style="italic")
    head.append(s.outcome)
    if s.resumed:
        head.append(f"\n\nInterrupted: the session {s.interruptions()}.", style="yellow")
    parts.append(Panel(head, title=Text(f"Debrief: {s.title}"), title_align="left"))
    if d.learned:
        parts.append(Panel(Text("\n".join(d.learned)), title=Text("What you learned"),
                           title_align="left"))
    sc = d.score
    if sc is not None:
        table = Table(title=f"Score {sc.total}/{sc.max}", title_justify="left")
        table.add_column("part", style="bold")
        table.add_column("points", justify="right")
        table.add_column("reasons")
        for sec in sc.sections:
            _row(table, sec.name, f"{sec.points}/{sec.max}", "\n".join(sec.reasons))
        if sc.hints:
            _row(table, "hints", f"-{sc.hint_cost}", ", ".join(sc.hints))
        parts.append(table)
        if sc.fault and not sc.fault_occurred:
            parts.append(Text(sc.fault))
        if sc.figures:
            night = d.timeline.night
            figures = Table(title="The times the score measured", title_justify="left")
            for column in ("measured", "your team", night.lower()) if night else (
                    "measured", "your team"):
                figures.add_column(column, overflow="fold")
            for f in sc.figures:
                _row(figures, *(f.label, f.team, f.night or "—")[:3 if night else 2])
            parts.append(figures)
        if sc.judged:
            parts.append(Text("".join(f"  - {line}\n" for line in sc.judged).rstrip()))
    t = d.timeline
    phases = Table(title=f"Your team beside {t.night.lower()}" if t.has_event else "Timeline",
                   title_justify="left")
    columns = ("moment", "your team", "T+", t.night.lower(), "T+", "source")
    for column in columns if t.has_event else columns[:3]:
        phases.add_column(column)
    for p in t.phases:
        cells = (p.label, f"{p.team_time or '—'} {p.team_note}".strip(),
                 after_label(p.team_after), f"{p.event_time or '—'} {p.event_note}".strip(),
                 after_label(p.event_after), source_tag(p.source))
        _row(phases, *(cells if t.has_event else cells[:3]))
    parts += [phases, render_rich(t.chart(), width, t.night)]
    for chart in d.charts:  # the night's charts, as text
        from raceday.transcript.charts import chart_text

        parts.append(Text("\n".join(chart_text(chart, max(width - 40, 20)))))
    team = Table(title="Changes by the team", title_justify="left")
    for column in ("time", "role", "SQL", "outcome"):
        team.add_column(column, overflow="fold")
    for c in d.team_changes:
        flag = next((f for f in c.flags if f != "schema"), None)
        _row(team, c.time, c.role + (f" ({flag})" if flag else ""),
             " ".join(c.sql.split()), c.outcome)
    parts.append(team)
    steps = Table(title="The race and the guards", title_justify="left")
    steps.add_column("step")
    steps.add_column("outcome")
    for st in d.guards.steps:
        style = "red" if st.outcome == "happened" else "green" if st.outcome == "prevented" else ""
        _row(steps, st.id, Text(st.describe(), style=style))
    parts.append(steps)
    parts.append(Text(f"Replay: {d.guards.replay.note or 'ran'}"
                      + "".join(f"\n  {r.step}: {r.outcome} {r.detail}".rstrip()
                                for r in d.guards.replay.steps)))
    checklist = Table(title=d.checklist_title, title_justify="left", show_lines=True)
    checklist.add_column("practice", style="bold")
    checklist.add_column("status")
    checklist.add_column("evidence")
    for i in d.checklist:
        lines = [f"did: {x}" for x in i.did] + [f"did not: {x}" for x in i.did_not]
        lines += [i.note] if i.note else []
        _row(checklist, i.practice, i.status, "\n".join(lines) or NOT_SEEN)
    if d.checklist:
        parts.append(checklist)
    aar = Text()
    aar.append("Strengths\n", style="bold")
    aar.append("".join(f"  + {x}\n" for x in d.after_action.strengths) or "  (none recorded)\n")
    aar.append("Areas for improvement\n", style="bold")
    aar.append("".join(f"  - {x}\n" for x in d.after_action.improvements) or "  (none recorded)\n")
    aar.append("Corrective actions (owner, due date: to fill in)\n", style="bold")
    aar.append("".join(f"  {n}. {x.action}\n" for n, x in enumerate(d.after_action.actions, 1))
               or "  (none)\n")
    parts.append(Panel(aar, title="After-action report", title_align="left"))
    return [Group(*parts)]
