"""Print a session and its score readably in the terminal, with Rich.

Rich is imported by the two printers: the debrief, written at every session's end, uses the
words here (`describe`) without printing anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.transcript.verdicts import Score
from raceday.transcript.wording import (
    access_flag,
    describe_statement,
    fault_sentence,
    night_sentence,
    plural,
)

if TYPE_CHECKING:
    from rich.console import Console

_STYLE: dict[type[ev.Event], str] = {
    ev.Inject: "cyan",
    ev.Fault: "bold red",
    ev.Alert: "bold yellow",
    ev.Detected: "bold green",
    ev.Restored: "bold green",
    ev.Declaration: "magenta",
    ev.Refused: "red",
    ev.ScoreEvent: "bold",
}


_OUTCOME = {"applied": "done", "zero_rows": "0 rows changed", "failed": "failed",
            "skipped": "skipped"}


def describe(event: ev.Event) -> str:
    """One line for an event, as the feed, `review` and `raceday transcript` show it: its
    data (SQL, errors, names) made inert, so it can go to a terminal as it is."""
    return inert(_describe(event))


def describe_for_the_room(event: ev.Event) -> str:
    """`describe` without the SQL anyone typed or edited (the projector's words): who ran a
    statement and what it did, which monitor was saved, which statement was edited."""
    e = event
    if isinstance(e, ev.Statement):
        return inert(f"{_who(e)} ran a statement  -> {describe_statement(e)}")
    if isinstance(e, ev.MonitorSaved):
        return inert(f"{e.role} saved monitor '{e.name}'")
    if isinstance(e, ev.Edit):
        return inert(f"{e.role} edited automation statement '{e.statement}'")
    return describe(e)


def _who(e: ev.Statement) -> str:
    """Who ran a statement, and under which right (`[guard]`, `[break-glass]`)."""
    flag = access_flag(e.sql, break_glass=e.break_glass, schema_changed=e.schema_changed,
                       writes=e.writes)
    return e.role + (" (automation)" if e.automated else "") + (f" [{flag}]" if flag else "")


def _describe(event: ev.Event) -> str:
    e = event
    if isinstance(e, ev.Statement):
        return f"{_who(e)}: {_one_line(e.sql)}  -> {describe_statement(e)}"
    if isinstance(e, ev.Inject):
        source = f" [{e.source}]" if e.source else ""
        return f"{e.inject_kind.upper()}: {e.title}{source}"
    if isinstance(e, ev.Automation):
        follow = f"; {e.next}" if e.next else ""
        note = f" ({e.note})" if e.note else ""
        outcome = _OUTCOME.get(e.outcome, e.outcome)
        return f"{e.role}: {e.title or e.task}: {outcome}{note}{follow}"
    if isinstance(e, ev.Fault):
        return f"FAULT{' AGAIN' if e.relapse else ''}: {e.fault}"
    if isinstance(e, ev.Alert):
        rows = [list(row) for row in e.rows]
        return f"ALERT from monitor '{e.name}': {plural(e.count, 'row')} {rows}"
    if isinstance(e, ev.Declaration):
        if e.verdict == "to_rule":
            return f"{e.role} declared in their own words: {e.text}"
        return f"{e.role} declared: {e.text}"
    if isinstance(e, ev.Detected):
        return f"detected after {e.latency_minutes} min: {e.how}"
    if isinstance(e, ev.ScoreEvent):
        return f"score {e.score.total}/{e.score.max}"
    if isinstance(e, ev.Refused):
        return f"refused {e.action}: {e.error}"
    if isinstance(e, ev.SessionStart):
        automated = ", ".join(e.automated) or "none"
        return (f"session started: {e.title} ({e.pace} pace); players hold "
                f"{', '.join(e.players) or 'no role'}; automation plays {automated}")
    if isinstance(e, ev.RaceStep):
        who = " (by a player)" if e.by_player else ""
        return f"RACE STEP {e.step}{who}: {e.title}"
    if isinstance(e, ev.InvariantClear):
        return f"fault cleared: {e.fault}"
    if isinstance(e, ev.Restored):
        return "RESTORED: no fault is present any more"
    if isinstance(e, ev.Milestone):
        return f"milestone: {e.label}"
    if isinstance(e, ev.Chart):
        return (f"chart: {e.label} ({', '.join(e.series)}; "
                f"{len(e.minutes)} minutes)")
    if isinstance(e, ev.TaskDue):
        return f"task due for {e.role}: {e.context or e.title}"
    if isinstance(e, ev.TaskDone):
        return f"task done by {e.role}: {e.title}" + (f" (+{e.points})" if e.points else "")
    if isinstance(e, ev.MonitorSaved):
        return f"{e.role} saved monitor '{e.name}': {_one_line(e.sql)}"
    if isinstance(e, ev.MonitorRemoved):
        return f"monitor '{e.name}' removed"
    if isinstance(e, ev.AlertClear):
        return f"monitor '{e.name}' is clear again"
    if isinstance(e, ev.MonitorError):
        return f"monitor '{e.name}' failed: {e.error}"
    if isinstance(e, ev.Edit):
        return f"{e.role} edited automation statement '{e.statement}': {_one_line(e.sql)}"
    if isinstance(e, ev.Hint):
        return f"hint revealed (-{e.cost}): {e.text}"
    if isinstance(e, ev.Wait):
        if e.next_inject:
            return f"waiting for the next inject (until {e.until} at the latest)"
        return f"waiting until {e.until}"
    if isinstance(e, ev.TimelineEnd):
        return "the exercise's timeline has run out"
    if isinstance(e, ev.NightRevealed):
        return "NIGHT TOLD: " + night_sentence(e)
    if isinstance(e, ev.SessionResumed):
        return f"RESUMED after a crash (from event {e.recorded})" + (f": {e.note}" if e.note else "")
    if isinstance(e, ev.TeamLeft):
        return f"the team left: the automation plays the rest of the night, to {e.until}"
    if isinstance(e, ev.CheckFailed):
        return f"an exercise check failed (the schema changed?): {e.error}"
    if isinstance(e, ev.Replay):
        if e.result is None:
            return f"replay: {e.error or e.note or 'not available'}"
        prevented, happened = e.result.prevented, e.result.happened
        parts = [f"prevented {', '.join(prevented)}" if prevented else "nothing prevented",
                 f"still happened: {', '.join(happened)}" if happened
                 else "no race step happened"]
        return "REPLAY: " + "; ".join(parts)
    if isinstance(e, ev.Cast):
        return "cast: " + ", ".join(f"{role} {name}" for role, name in e.names.items())
    if isinstance(e, ev.Facilitation):
        return facilitation_words(e)
    if isinstance(e, ev.Note):
        author = e.author or e.role
        return f"note{f' by {author}' if author else ''}: {e.text}"
    return _describe_team(e)


def _describe_team(e: ev.Event) -> str:
    """The seats of a team session: who joined, who acted, what was refused."""
    if isinstance(e, ev.SeatJoined):
        again = " again" if e.rejoin else ""
        return f"{e.player} joined{again} as {e.role} (seat {e.seat})"
    if isinstance(e, ev.SeatReady):
        return (f"{e.player} ({e.role}) is ready to start" if e.ready else
                f"{e.player} ({e.role}) is not ready after all")
    if isinstance(e, ev.SeatLost):  # a kind of SeatLeft: asked first
        return (f"{e.player}'s terminal at seat {e.seat} ({e.role}) went silent: no heartbeat "
                f"for {e.silent_seconds} s")
    if isinstance(e, ev.SeatLeft):
        return f"{e.player} left seat {e.seat} ({e.role})"
    if isinstance(e, ev.SeatCommand):
        return f"{e.player} ({e.role}): {e.action}"
    if isinstance(e, ev.CommandRefused):
        who = f"{e.player} " if e.player else ""
        return f"REFUSED {who}at seat {e.seat}: {e.action}: {e.error}"
    return e.kind


def facilitation_words(e: ev.Facilitation) -> str:
    """The facilitator's action in words: 'facilitator: clock paused'."""
    if e.action == "pause":
        what = "clock paused"
    elif e.action == "resume":
        what = "clock running again"
    elif e.action == "speed":
        what = f"speed set to {e.speed:g}x" + (f" ({e.detail})" if e.detail else "")
    elif e.action == "schedule" and e.when:
        whom = ", ".join(e.to) if e.to else "everyone"
        later = f", {e.after} min into it" if e.after else ""
        what = (f"{e.inject_kind or 'message'} planned for when {e.when} holds{later}, to "
                f"{whom}: {e.detail}")
    elif e.action == "schedule":
        whom = ", ".join(e.to) if e.to else "everyone"
        what = f"inject planned for {e.at} to {whom}: {e.detail}"
    elif e.action == "start":
        what = (f"clock started at {e.speed:g}x" if e.speed else "clock started") + \
            (f" ({e.detail})" if e.detail else "")
    elif e.action == "skip":
        what = f"skip to {e.detail}" if e.detail else "skip"
    elif e.action == "hint":
        what = f"hint {e.detail} given" + (f" to {', '.join(e.to)}" if e.to else "")
    elif e.action == "handover":
        what = f"{', '.join(e.to)}: {e.detail}"
    elif e.action == "automate":
        whose = f"{', '.join(e.to)}'s " if e.to else ""
        what = f"the automation did {whose}task '{e.detail}', left due by the seat" + (
            f" ({e.text})" if e.text else "")
    elif e.action == "skip-step":
        whose = f"{', '.join(e.to)}'s " if e.to else ""
        what = (f"the night goes on without {whose}task '{e.detail}', left due by the seat: "
                "not played tonight")
    elif e.action == "ruling":
        whose = f"{', '.join(e.to)}'s " if e.to else ""
        what = (f"ruled {whose}declaration at {e.at} ({e.detail}) {ruling_words(e.ruling)}"
                + (f": {e.text}" if e.text else ""))
    elif e.action in ("hold", "release"):
        whose = f"{', '.join(e.to)}'s " if e.to else ""
        what = (f"held {whose}task '{e.text or e.detail}' (it runs when released)"
                if e.action == "hold" else f"released {whose}task '{e.text or e.detail}'")
    elif e.action == "plan":
        what = f"loaded {e.detail}"
    elif e.action == "schedule-live":
        whom = ", ".join(e.to) if e.to else "everyone"
        when = (f"for {e.at}" if e.at else f"for when {e.when} holds"
                + (f", {e.after} min into it" if e.after else ""))
        what = f"{e.inject_kind or 'message'} planned {when}, to {whom}: {e.detail}"
    elif e.action == "expect":
        what = f"marked what inject {e.inject} expected, '{e.detail}': {e.ruling}"
    elif e.action == "move":
        what = f"inject moved: {e.detail}"
    elif e.action == "cancel":
        what = f"inject cancelled: {e.detail}"
    elif e.action in ("screen", "projector"):
        what = e.detail or e.action
    else:
        what = f"{e.action} {e.detail}".strip()
    return f"facilitator: {what}"


RULING_WORDS = {"right": "right", "partly": "partly right", "wrong": "wrong"}


def ruling_words(ruling: str) -> str:
    """'right', 'partly right', 'wrong': how a facilitator's ruling reads."""
    return RULING_WORDS.get(ruling, ruling)


def style_of(event: ev.Event) -> str:
    """The style `raceday transcript` gives an event's line."""
    return _STYLE.get(type(event), "")


def _one_line(sql: str, limit: int = 90) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def print_transcript(folder: Path, out: Console) -> int:
    from rich.table import Table
    from rich.text import Text

    log = read_events(folder)
    if log.warning:
        from raceday.inert_console import InertConsole

        InertConsole(stderr=True).print(inert(f"raceday: {log.warning}"), markup=False)
    table = Table(box=None, show_header=True, pad_edge=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("time")
    table.add_column("what", overflow="fold")
    for event in log.events:
        table.add_row(str(event.seq), event.sim_time, Text(inert(describe(event)), style=style_of(event)))
    out.print(table)
    score = next((e for e in reversed(log.events) if isinstance(e, ev.ScoreEvent)), None)
    if score is not None:
        print_score(score.score, out)
    return 0


def print_score(score: Score, out: Console, session: Path | None = None,
                night: ev.NightRevealed | None = None) -> None:
    from rich.text import Text

    out.print(Text(f"Score {score.total}/{score.max}", style="bold"))
    if night is not None:  # an unknown night: which it was, told now that it is over
        out.print(inert(night_sentence(night)), markup=False, soft_wrap=True)
    out.print(inert(fault_sentence(score.fault)), markup=False)
    for reason in score.reasons:
        out.print(inert(f"  - {reason}"), markup=False)
    if session is not None:
        out.print(inert(f"Transcript: {session}"), markup=False)
