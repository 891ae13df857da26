"""The console's live verdicts: what the scorer knows so far, for the facilitator's eyes."""

from __future__ import annotations

from rich.text import Text

from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.transcript.render import ruling_words


class Verdicts:
    """What the scorer knows so far, kept from every event (private ones included)."""

    def __init__(self) -> None:
        self.faults: dict[str, str] = {}
        self.first_fault: str | None = None
        self.detected: str | None = None
        self.restored: str | None = None
        self.steps: list[str] = []
        self.declarations: list[ev.Declaration] = []
        self.rulings: dict[int, ev.Facilitation] = {}  # declaration seq -> the last ruling
        self.tasks_done: list[str] = []
        self.hints: list[str] = []
        self.refused: list[ev.CommandRefused] = []
        self.lost: dict[str, ev.SeatLost] = {}
        self.score: ev.ScoreEvent | None = None
        self.night: str | None = None
        """An unknown night's drawn night, in words: the facilitator knows it, no seat does."""

    def note(self, event: ev.Event) -> None:
        if isinstance(event, ev.Fault):
            self.faults[event.invariant] = event.fault
            self.first_fault = self.first_fault or event.sim_time
            self.restored = None
        elif isinstance(event, ev.InvariantClear):
            self.faults.pop(event.invariant, None)
        elif isinstance(event, ev.Restored):
            self.restored = event.sim_time
        elif isinstance(event, ev.Detected):
            self.detected = f"{event.sim_time} ({event.latency_minutes} min: {event.how})"
        elif isinstance(event, ev.RaceStep):
            self.steps.append(f"{event.sim_time} {event.step}")
        elif isinstance(event, ev.Declaration):
            self.declarations.append(event)
        elif isinstance(event, ev.Facilitation) and event.action == "ruling":
            self.rulings[event.declaration] = event
        elif isinstance(event, ev.TaskDone):
            self.tasks_done.append(f"{event.sim_time} {event.role}: {event.title}")
        elif isinstance(event, ev.Hint):
            self.hints.append(event.id)
        elif isinstance(event, ev.CommandRefused):
            self.refused.append(event)
        elif isinstance(event, ev.SeatLost):
            self.lost[event.seat] = event
        elif isinstance(event, (ev.SeatJoined, ev.SeatLeft)):
            self.lost.pop(event.seat, None)
        elif isinstance(event, ev.ScoreEvent):
            self.score = event

    def render(self) -> Text:
        t = Text()
        if self.night:
            t.append("Unknown night: ", style="bold")
            t.append(inert(self.night) + "\n", style="yellow")
        t.append("Faults now: ", style="bold")
        if self.faults:
            t.append(inert("; ".join(self.faults.values())), style="bold white on red")
        else:
            t.append("none", style="green")
        t.append(f"\nFirst fault: {self.first_fault or '—'}")
        t.append(f"\nDetected: {inert(self.detected or '—')}")
        t.append(f"\nRestored: {self.restored or '—'}")
        t.append(f"\nRace steps: {', '.join(self.steps) or '—'}")
        for d in self.declarations:
            t.append(f"\n{d.sim_time} {inert(d.role)} declared ")
            mark, style = {"confirmed": ("✓ ", "green"), "repeat": ("✓ again ", "green"),
                           "false_alarm": ("✗ not so yet: ", "bold red"),
                           "unseen": ("? nothing showed it yet: ", "yellow"),
                           "to_rule": ("? in their own words, yours to rule (r): ", "yellow"),
                           "wrong": ("✗ ", "bold red")}.get(
                               d.verdict, ("✓ ", "green") if d.correct else ("✗ ", "bold red"))
            t.append(mark, style=style)
            t.append(inert(d.text))
            ruled = self.rulings.get(d.seq)
            if ruled is not None:
                t.append(f" → you ruled it {ruling_words(ruled.ruling)}",
                         style={"right": "green", "wrong": "red"}.get(ruled.ruling, "yellow"))
        for done in self.tasks_done[-4:]:
            t.append(f"\ntask done {inert(done)}", style="green")
        if self.hints:
            t.append(f"\nHints given: {', '.join(self.hints)}", style="magenta")
        for refused in self.refused[-3:]:
            t.append(f"\nREFUSED {inert(refused.seat)}: {inert(refused.error)}", style="red")
        for lost in self.lost.values():
            t.append(f"\nSEAT LOST {lost.sim_time} {inert(lost.seat)} "
                     f"({inert(lost.player, one_line=True)}): no heartbeat for "
                     f"{lost.silent_seconds} s", style="bold red")
        return t
