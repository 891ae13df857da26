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


def describe(event: dict[str, Any]) -> str:
    """One line for an event, as the feed and `raceday transcript` show it."""
    kind = event.get("kind", "?")
    if kind == "statement":
        who = event.get("role", "?") + (" (automation)" if event.get("automated") else "")
        sql = " ".join(str(event.get("sql", "")).split())
        if len(sql) > 90:
            sql = sql[:87] + "..."
        if not event.get("ok"):
            outcome = f"ERROR {event.get('error')}"
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
        return f"{event.get('role')} {event.get('task')}: {event.get('outcome')}{note}{follow}"
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
    fields = {k: v for k, v in event.items()
              if k not in {"seq", "sim_time", "minute", "wall_time", "kind"} and v not in (None, "", [])}
    detail = ", ".join(f"{k}={v}" for k, v in fields.items())
    return f"{kind}: {detail}" if detail else kind


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
