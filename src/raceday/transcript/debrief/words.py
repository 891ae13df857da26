"""Small wordings the debrief's builders and every renderer share."""

from __future__ import annotations

from raceday.transcript.debrief.model import Change, Debrief, Timeline

FIGURES = "exercise-figures"
"""The source tag of a time worked out from the exercise's figures (not a revealed fact)."""

RACEDAY_SOURCES = {
    FIGURES: "the exercise's figures for that night, counted from the first symptom",
    "facilitator": "sent by the facilitator during the session",
}
"""Source tags raceday itself gives; an exercise's own come with its transcript."""


def duration(minutes: int | None) -> str:
    """'50 min', '2 h 37 min', '1 h'; an em dash for unknown."""
    if minutes is None:
        return "—"
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def after_label(minutes: int | None) -> str:
    return "—" if minutes is None else ("T+0" if minutes == 0 else f"T+{duration(minutes)}")


def source_tag(tag: str) -> str:
    return f"[{tag}]" if tag else ""


def source_text(timeline: Timeline, tag: str) -> str:
    """What a source tag stands for, in the exercise's words (or raceday's, for its own)."""
    return (timeline.source_titles.get(tag) or RACEDAY_SOURCES.get(tag)
            or "as the exercise names it")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def group_automation(d: Debrief) -> list[tuple[str, str, str, str, int, int]]:
    """(role, statement, outcome, times, runs, rows) per automation statement and outcome, over
    every write the automation made or tried, in order."""
    runs = sorted(d.automation_changes + tuple(c for c in d.failures if c.automated),
                  key=lambda c: c.seq)
    groups: dict[tuple[str, str, str], list[Change]] = {}
    for c in runs:
        outcome = ("changed rows" if (c.rowcount or 0) > 0 else "changed 0 rows") if c.ok else (
            f"failed: {c.error}")
        groups.setdefault((c.role, c.statement or c.task or "-", outcome), []).append(c)
    out = []
    for (role, statement, outcome), items in groups.items():
        times = [c.time for c in items]
        shown = ", ".join(times) if len(times) <= 6 else f"{times[0]} … {times[-1]}"
        out.append((role, statement, outcome, shown, len(items),
                    sum(c.rowcount or 0 for c in items if c.ok)))
    return out
