"""Print a session and its score readably in the terminal, with Rich."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from raceday.transcript.log import read_events

_STYLE = {
    "inject": "cyan",
    "fault": "bold red",
    "alert": "bold yellow",
    "detected": "bold green",
    "restored": "bold green",
    "declaration": "magenta",
    "refused": "red",
    "score": "bold",
}


_OUTCOME = {"applied": "done", "zero_rows": "0 rows changed", "failed": "failed",
            "skipped": "skipped"}


def describe(event: dict[str, Any]) -> str:
    """One line for an event, as the feed and `raceday transcript` show it."""
    kind = event.get("kind", "?")
    if kind == "statement":
        who = event.get("role", "?") + (" (automation)" if event.get("automated") else "")
        sql = _one_line(event.get("sql"))
        if not event.get("ok"):
            outcome = f"ERROR {event.get('error')}"
        elif event.get("schema_changed"):
            outcome = "schema changed"
        elif event.get("rows") is not None:
            n = event["rows"]
            outcome = f"{'more than ' if event.get('truncated') else ''}{n} row{'s' if n != 1 else ''}"
        else:
            n = event.get("rowcount") or 0
            outcome = f"{n} row{'s' if n != 1 else ''} changed"
        glass = " [break-glass]" if event.get("break_glass") else ""
        return f"{who}{glass}: {sql}  -> {outcome}"
    if kind == "inject":
        tag = str(event.get("inject_kind", "message")).upper()
        source = f" [{event['source']}]" if event.get("source") else ""
        return f"{tag}: {event.get('title', '')}{source}"
    if kind == "automation":
        follow = f"; {event['next']}" if event.get("next") else ""
        note = f" ({event['note']})" if event.get("note") else ""
        what = event.get("title") or event.get("task")
        outcome = _OUTCOME.get(str(event.get("outcome")), str(event.get("outcome")))
        return f"{event.get('role')}: {what}: {outcome}{note}{follow}"
    if kind == "fault":
        again = " AGAIN" if event.get("relapse") else ""
        return f"FAULT{again}: {event.get('fault')}"
    if kind == "alert":
        return f"ALERT from monitor '{event.get('name')}': {event.get('count')} row(s) {event.get('rows')}"
    if kind == "declaration":
        return f"{event.get('role')} declared: {event.get('text')}"
    if kind == "detected":
        return f"detected after {event.get('latency_minutes')} min: {event.get('how')}"
    if kind == "score":
        return f"score {event.get('total')}/{event.get('max')}"
    if kind == "refused":
        return f"refused {event.get('action')}: {event.get('error')}"
    if kind == "session_start":
        automated = ", ".join(event.get("automated") or []) or "none"
        return (f"session started: {event.get('title')} ({event.get('pace')} pace); players hold "
                f"{', '.join(event.get('players') or []) or 'no role'}; automation plays {automated}")
    if kind == "race_step":
        who = " (by a player)" if event.get("by_player") else ""
        return f"RACE STEP {event.get('step')}{who}: {event.get('title')}"
    if kind == "invariant_clear":
        return f"fault cleared: {event.get('fault')}"
    if kind == "restored":
        return "RESTORED: no fault is present any more"
    if kind == "milestone":
        return f"milestone: {event.get('label')}"
    if kind == "task_due":
        return f"task due for {event.get('role')}: {event.get('context') or event.get('title')}"
    if kind == "task_done":
        return f"task done by {event.get('role')}: {event.get('title')} (+{event.get('points', 0)})"
    if kind == "monitor_saved":
        return f"{event.get('role')} saved monitor '{event.get('name')}': {_one_line(event.get('sql'))}"
    if kind == "alert_clear":
        return f"monitor '{event.get('name')}' is clear again"
    if kind == "monitor_error":
        return f"monitor '{event.get('name')}' failed: {event.get('error')}"
    if kind == "edit":
        return (f"{event.get('role')} edited automation statement '{event.get('statement')}': "
                f"{_one_line(event.get('sql'))}")
    if kind == "hint":
        return f"hint revealed (-{event.get('cost', 0)}): {event.get('text')}"
    if kind == "wait":
        return f"waiting until {event.get('until')}"
    if kind == "timeline_end":
        return "the exercise's timeline has run out"
    if kind == "check_failed":
        return f"an exercise check failed (the schema changed?): {event.get('error')}"
    if kind == "replay":
        if not event.get("available"):
            return f"replay: {event.get('error') or event.get('note')}"
        return (f"REPLAY: prevented {', '.join(event.get('prevented') or []) or 'nothing'}; "
                f"happened {', '.join(event.get('happened') or []) or 'nothing'}")
    if kind == "note":
        return f"note: {event.get('text')}"
    fields = {k: v for k, v in event.items()
              if k not in {"seq", "sim_time", "minute", "wall_time", "kind"} and v not in (None, "", [])}
    detail = ", ".join(f"{k}={v}" for k, v in fields.items())
    return f"{kind}: {detail}" if detail else kind


def _one_line(sql: object, limit: int = 90) -> str:
    text = " ".join(str(sql or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def print_transcript(folder: Path, out: Console) -> int:
    log = read_events(folder)
    if log.warning:
        Console(stderr=True).print(f"raceday: {log.warning}", markup=False)
    table = Table(box=None, show_header=True, pad_edge=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("time")
    table.add_column("what", overflow="fold")
    for event in log.events:
        style = _STYLE.get(event.get("kind", ""), "")
        table.add_row(str(event.get("seq")), str(event.get("sim_time", "")),
                      Text(describe(event), style=style))
    out.print(table)
    score = next((e for e in reversed(log.events) if e.get("kind") == "score"), None)
    if score is not None:
        print_score(score, out)
    return 0


def print_score(result: dict[str, Any], out: Console) -> None:
    out.print(Text(f"Score {result['total']}/{result['max']}", style="bold"))
    fault = result.get("fault", {})
    if fault.get("occurred"):
        out.print(f"Fault began at {fault.get('started_at')}.")
    else:
        out.print("No fault occurred.")
    for reason in result.get("reasons", []):
        out.print(f"  - {reason}", markup=False)
    if result.get("session"):
        out.print(f"Transcript: {result['session']}", markup=False)
