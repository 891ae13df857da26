"""The world panel: every endpoint's DNS answer (or the tables' row counts), the kill
switches, the faults, the monitors alerting and the latest alarms. An empty answer shouts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widgets import Static

from raceday.tui.snapshot import WorldView

EMPTY = "bold white on red"
OK = "green"


@dataclass
class Alarms:
    """What is wrong as far as the screen has heard, kept from the events."""

    faults: dict[str, str] = field(default_factory=dict)
    alerting: dict[str, int] = field(default_factory=dict)
    recent: list[tuple[str, str]] = field(default_factory=list)

    def note(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "fault":
            self.faults[str(event.get("invariant"))] = str(event.get("fault"))
        elif kind == "invariant_clear":
            self.faults.pop(str(event.get("invariant")), None)
        elif kind == "alert":
            self.alerting[str(event.get("name"))] = int(event.get("count") or 0)
        elif kind == "alert_clear":
            self.alerting.pop(str(event.get("name")), None)
        elif kind == "monitor_removed":
            self.alerting.pop(str(event.get("name")), None)
        elif kind == "inject" and event.get("inject_kind") == "alarm":
            self.recent.append((str(event.get("sim_time", "")), str(event.get("title", ""))))
            del self.recent[:-4]


def render_world(world: WorldView, alarms: Alarms, *, compact: bool) -> Text:
    out = Text()
    if world.answers is not None:
        answers = sorted(world.answers, key=lambda a: bool(a.addresses)) if compact else list(
            world.answers)
        if not compact:
            out.append("DNS answers now\n", style="bold underline")
        else:
            out.append("DNS ", style="bold")
        for answer in answers:
            if compact:
                if answer.addresses:
                    out.append(f"✓ {answer.endpoint} {len(answer.addresses)}", style=OK)
                else:
                    out.append(f"✗ {answer.endpoint} EMPTY", style=EMPTY)
                out.append("  ")
                continue
            if answer.addresses:
                out.append("✓ ", style=OK)
                out.append(answer.endpoint + "\n", style="bold")
                listed = "  ".join(f"{a} w{w}" for a, w in answer.addresses)
                out.append(f"   {listed}\n", style="dim")
            else:
                out.append("✗ ", style="bold red")
                out.append(answer.endpoint + "\n", style="bold red")
                out.append("   EMPTY ANSWER: no addresses \n", style=EMPTY)
    elif world.counts:
        out.append("Rows per table" + ("\n" if not compact else " "), style="bold underline")
        for table, count in world.counts:
            out.append(f"{table} {count:,}" + ("\n" if not compact else "  "))
    if world.switches:
        out.append("\nAutomation\n" if not compact else "│ ", style="bold underline"
                   if not compact else "bold")
        for name, enabled in world.switches:
            state = Text(" ON " if enabled else " OFF ",
                         style="bold black on green" if enabled else "bold white on blue")
            out.append(f"{name} " if compact else f"  {name:<18}")
            out.append_text(state)
            out.append("  " if compact else "\n")
    if world.error:
        out.append(("\n" if not compact else " ") + f"world: {world.error}", style="red")
    if compact:
        problems = len(alarms.faults) + len(alarms.alerting)
        if problems:
            out.append(f"│ ⚠ {problems} alerting", style="bold red")
        return out
    if alarms.faults:
        out.append("\nFaults\n", style="bold underline")
        for fault in alarms.faults.values():
            out.append(f" ✗ {fault} \n", style=EMPTY)
    if alarms.alerting:
        out.append("\nMonitors alerting\n", style="bold underline")
        for name, count in alarms.alerting.items():
            out.append(f" ! {name} ({count} row{'s' if count != 1 else ''}) \n",
                       style="bold black on yellow")
    if alarms.recent:
        out.append("\nLatest alarms\n", style="bold underline")
        for stamp, title in alarms.recent:
            out.append(f" {stamp} ", style="dim")
            out.append(title + "\n", style="red")
    return out


class WorldPanel(Static):
    """The world at a glance; `compact` is the one- or two-line strip for small terminals."""

    def __init__(self, *, compact: bool = False, id: str | None = None) -> None:  # noqa: A002
        super().__init__("", id=id)
        self.compact = compact
        self.world = WorldView()
        self.alarms = Alarms()

    def show(self, world: WorldView | None = None, alarms: Alarms | None = None) -> None:
        if world is not None:
            self.world = world
        if alarms is not None:
            self.alarms = alarms
        self.update(render_world(self.world, self.alarms, compact=self.compact))
