"""The world panel: the exercise's panel queries (grouped answers, switches, small tables; or the
tables' row counts), the faults, the monitors alerting and the latest alarms. An empty answer
shouts."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from raceday.engine.snapshot import ANSWERS_SHOWN, WorldView
from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.transcript.wording import plural

EMPTY = "bold white on red"
OK = "green"
WIDE_SHOWN = 4
"""The most endpoints the wide panel names in a world of many, what is wrong first (as many as
the flagship's own world has), so that their count above and the switches below stay on a
40-line screen."""
COMPACT_SHOWN = 2
"""The most empty endpoints the one-line strip names in a world of many, so that how many more
are empty and the switches after them stay within its three lines at 80 columns."""


@dataclass
class Alarms:
    """What is wrong as far as the screen has heard, kept from the events.

    `show_faults`: name the exercise's broken invariants ("Faults"). Only onboarding does:
    an invariant's text is the scorer's own diagnosis ("a stale save undid the failover"),
    and showing it would do the detecting the score rewards. Everyone sees the symptoms:
    every endpoint's answer (an empty one shouts), the alarms, their own monitors.
    """

    faults: dict[str, str] = field(default_factory=dict)
    alerting: dict[str, int] = field(default_factory=dict)
    recent: list[tuple[str, str]] = field(default_factory=list)
    show_faults: bool = True

    def note(self, event: ev.Event) -> bool:
        """Take in one event; True when it changed what the panel shows."""
        if isinstance(event, ev.Fault):
            self.faults[event.invariant] = event.fault
        elif isinstance(event, ev.InvariantClear):
            self.faults.pop(event.invariant, None)
        elif isinstance(event, ev.Alert):
            self.alerting[event.name] = event.count
        elif isinstance(event, (ev.AlertClear, ev.MonitorRemoved)):
            self.alerting.pop(event.name, None)
        elif isinstance(event, ev.Inject):
            if event.inject_kind == "alarm":
                self.recent.append((event.sim_time, event.title))
                del self.recent[:-4]
        else:
            return False
        return True


def render_compact(world: WorldView, alarms: Alarms) -> Text:
    """One or two lines: how many of the answers are there, each empty one by name, switches."""
    out = Text()
    if world.answers is not None:
        total, empty_total = world.endpoint_counts
        named = COMPACT_SHOWN if total > len(world.answers) else ANSWERS_SHOWN
        empty = [a.endpoint for a in world.answers if not a.addresses][:named]
        out.append(f"{inert(world.answers_label, one_line=True)} ", style="bold")
        if not empty_total:
            out.append(f"✓ all {total:,} answer", style=OK)
        else:
            out.append(f"{total - empty_total:,} of {total:,} answer ", style="bold")
            for name in empty:
                out.append(f" ✗ {inert(name, one_line=True)}: EMPTY ", style=EMPTY)
                out.append(" ")
            if empty_total > len(empty):
                out.append(f"and {empty_total - len(empty):,} more empty ", style="bold red")
    elif world.counts:
        out.append("rows ", style="bold")
        out.append(inert("  ".join(f"{t} {c:,}" for t, c in world.counts), one_line=True))
    if world.switches:
        out.append("  │ ", style="dim")
        for name, enabled in world.switches:
            out.append(f"{inert(name, one_line=True)} ")
            out.append(" ON " if enabled else " OFF ",
                       style="bold black on green" if enabled else "bold white on blue")
            out.append(" ")
    faults = len(alarms.faults) if alarms.show_faults else 0
    problems = [plural(n, word) for n, word in (
        (faults, "fault"), (len(alarms.alerting), "monitor alert")) if n]
    if problems:
        out.append(" │ ⚠ " + ", ".join(problems), style="bold red")
    if world.error:
        out.append(f"  world: {inert(world.error, one_line=True)}", style="red")
    return out


def render_world(world: WorldView, alarms: Alarms) -> Group:
    parts: list[RenderableType] = []
    if world.answers is not None:
        parts.append(Text(inert(world.answers_label, one_line=True), style="bold underline"))
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(width=1)
        grid.add_column(ratio=1)
        answers = list(world.answers)
        total, empty_total = world.endpoint_counts
        if total > WIDE_SHOWN and (len(answers) > ANSWERS_SHOWN or total > len(answers)):
            # a world of many: its count, what is wrong first, then a count of the rest
            parts.append(Text(f"✓ all {total:,} answer", style=OK) if not empty_total else
                         Text(f"✗ {empty_total:,} of {total:,} answer nothing",
                              style="bold red"))
            answers = ([a for a in answers if not a.addresses]
                       + [a for a in answers if a.addresses])[:WIDE_SHOWN]
        hidden = total - len(answers)
        for answer in answers:
            if answer.addresses:
                listed = inert("  ".join(f"{a} ({w})" if w is not None else a
                                         for a, w in answer.addresses))
                grid.add_row(Text("✓", style=OK), Text.assemble(
                    (inert(answer.endpoint, one_line=True), "bold"), "\n", (listed, "dim")))
            else:
                grid.add_row(Text("✗", style="bold red"), Text.assemble(
                    (inert(answer.endpoint, one_line=True), "bold red"), "\n",
                    (" EMPTY: nothing answers ", EMPTY)))
        if hidden:
            grid.add_row(Text("…", style="dim"),
                         Text(f"and {hidden:,} more endpoint{'s' if hidden != 1 else ''}",
                              style="dim"))
        parts.append(grid)
    elif world.counts:
        parts.append(Text("Rows per table", style="bold underline"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column()
        grid.add_column(justify="right")
        for table, count in world.counts:
            grid.add_row(Text(inert(table, one_line=True)), f"{count:,}")
        parts.append(grid)
    for label, columns, rows in world.tables:
        parts.append(Text(("\n" if parts else "") + inert(label, one_line=True),
                          style="bold underline"))
        small = Table(box=None, padding=(0, 1), show_header=True, header_style="dim")
        for column in columns:
            small.add_column(Text(inert(column, one_line=True)))
        for row in rows:  # Text: a str cell is read as markup, and these are the world's data
            small.add_row(*(Text(inert(v, one_line=True)) for v in row))
        parts.append(small)
    if world.charts:
        from raceday.tui.widgets.chart import render_chart

        for chart in world.charts:
            if parts:
                parts.append(Text(""))
            parts.append(render_chart(chart))
    if world.switches:
        parts.append(Text(("\n" if parts else "") + inert(world.switches_label, one_line=True),
                          style="bold underline"))
        for name, enabled in world.switches:
            parts.append(Text.assemble(
                f"  {inert(name, one_line=True):<18}", (" ON " if enabled else " OFF ",
                                  "bold black on green" if enabled else "bold white on blue")))
    if world.error:
        parts.append(Text(f"world: {inert(world.error, one_line=True)}", style="red"))
    if alarms.faults and alarms.show_faults:
        parts.append(Text("\nFaults", style="bold underline"))
        for fault in alarms.faults.values():
            parts.append(Text(f" ✗ {fault} ", style=EMPTY))
    if alarms.alerting:
        parts.append(Text("\nMonitors alerting", style="bold underline"))
        for name, count in alarms.alerting.items():
            parts.append(Text(f" ! {name} ({plural(count, 'row')}) ",
                              style="bold black on yellow"))
    if alarms.recent:
        parts.append(Text("\nLatest alarms", style="bold underline"))
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(width=5)
        grid.add_column(ratio=1)
        for stamp, title in alarms.recent:
            grid.add_row(Text(stamp, style="dim"), Text(title, style="red"))
        parts.append(grid)
    return Group(*parts)


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
        if self.compact:
            self.update(render_compact(self.world, self.alarms))
        else:
            self.update(render_world(self.world, self.alarms))
