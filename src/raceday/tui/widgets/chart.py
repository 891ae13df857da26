"""Charts over simulated time for the world panel: one sparkline per series, each scaled to its
own peak, with the moments of that night (the exercise's reveals) marked under the time axis.

People would rather look than read when a queue grows or capacity drains: the panel's `chart`
items (first column the minute, each other column a series) are drawn here, live, as the
automation writes them.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from raceday.engine.snapshot import ChartView
from raceday.inert import inert

BLOCKS = " ▁▂▃▄▅▆▇█"
LABEL = 9
STYLES = ("cyan", "green", "yellow", "magenta", "blue", "red")


def _buckets(chart: ChartView, width: int) -> list[list[int]]:
    """Which data points fall in each column, over minute 0 to the last one shown."""
    if not chart.minutes:
        return []
    last = max(chart.minutes[-1], 1)
    columns: list[list[int]] = [[] for _ in range(width)]
    for i, minute in enumerate(chart.minutes):
        columns[min(width - 1, minute * width // (last + 1))].append(i)
    return columns


def _column_of(chart: ChartView, minute: int, width: int) -> int:
    last = max(chart.minutes[-1], 1) if chart.minutes else 1
    return min(width - 1, minute * width // (last + 1))


def _number(value: float) -> str:
    """Short enough for a side panel: 980, 19.8k, 1.2M."""
    size = abs(value)
    if size >= 999_500:
        return f"{value / 1e6:.1f}M"
    if size >= 9_995:
        return f"{value / 1e3:.0f}k"
    if size >= 1_000:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}" if value == int(value) or size >= 10 else f"{value:.1f}"


def render_chart(chart: ChartView, width: int = 26) -> Group:
    """The chart as lines of text: title, a sparkline per series, the axis and its marks."""
    lines: list[Text] = []
    if chart.minutes:  # a young night fills columns one minute each, not spread thin
        width = max(1, min(width, chart.minutes[-1] + 1))
    columns = _buckets(chart, width)
    span = (f"  {chart.clock[0]}–{chart.clock[-1]}" if chart.clock else "")
    lines.append(Text.assemble((inert(chart.label, one_line=True), "bold underline"),
                               (span, "dim")))
    if not columns:
        lines.append(Text("  no figures yet", style="dim"))
        return Group(*lines)
    for n, (name, values) in enumerate(zip(chart.series, chart.values, strict=False)):
        peak = max(values) if values else 0.0
        line = Text(f"{inert(name, one_line=True)[:LABEL - 1]:<{LABEL}}")
        bar = []
        for picked in columns:
            if not picked:
                bar.append(" ")
                continue
            value = max(values[i] for i in picked)
            level = 0 if peak <= 0 else round(value / peak * (len(BLOCKS) - 1))
            bar.append(BLOCKS[max(level, 1 if value > 0 else 0)])
        line.append("".join(bar), style=STYLES[n % len(STYLES)])
        line.append(f" {_number(values[-1])}", style="bold")
        lines.append(line)
    last = chart.minutes[-1]
    marks = [(m, what) for m, what in chart.marks if m <= last]
    axis = ["─"] * width
    for minute, _ in marks:
        axis[_column_of(chart, minute, width)] = "┴"
    lines.append(Text(" " * LABEL + "".join(axis), style="dim"))
    faces = dict(zip(chart.minutes, chart.clock, strict=False))
    room = max(width - 8, 8)
    for minute, what in marks:
        at = faces.get(minute, "")
        said = inert(_short(what), one_line=True)
        said = said if len(said) <= room else said[:room - 1] + "…"
        lines.append(Text.assemble(" " * LABEL, ("┴ ", "dim"), (at + " ", "bold"),
                                   (said, "dim")))
    return Group(*lines)


def _short(title: str) -> str:
    """A reveal's title without its "That night, HH:MM:" lead (the time is shown beside it)."""
    head, sep, rest = title.partition(": ")
    return rest if sep and any(c.isdigit() for c in head) else title


def render_charts_text(charts: tuple[ChartView, ...], width: int = 60) -> str:
    """Plain text of the charts (for a terminal debrief or a log)."""
    import io

    from rich.console import Console

    console = Console(width=width + LABEL + 20, color_system=None, record=True,
                      file=io.StringIO())
    for chart in charts:
        console.print(render_chart(chart, width))
    return console.export_text()
