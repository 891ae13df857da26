"""The night's charts for the debrief: plain text for the terminal and Markdown, SVG for HTML.

Each chart is a `chart` event (written at the end of the session): minutes, one series per
column, and the moments of that night it marks. Every series is scaled to its own peak; the
marks are drawn across all of them, so "the queue emptied at the restart" can be seen.
"""

from __future__ import annotations

from html import escape

from raceday.transcript.events import Chart

BLOCKS = " ▁▂▃▄▅▆▇█"
_LABEL = 12
_COLOURS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#17becf")


def _columns(chart: Chart, width: int) -> list[list[int]]:
    last = max(chart.minutes[-1], 1) if chart.minutes else 1
    width = max(1, min(width, last + 1))
    columns: list[list[int]] = [[] for _ in range(width)]
    for i, minute in enumerate(chart.minutes):
        columns[min(width - 1, minute * width // (last + 1))].append(i)
    return columns


def _short(title: str) -> str:
    head, sep, rest = title.partition(": ")
    return rest if sep and any(c.isdigit() for c in head) else title


def _marks(chart: Chart) -> list[tuple[int, str, str]]:
    """(minute, clock face, what) for each mark within the chart's minutes."""
    faces = dict(zip(chart.minutes, chart.clock, strict=False))
    last = chart.minutes[-1] if chart.minutes else -1
    return [(m, faces.get(m, ""), _short(t))
            for m, t in zip(chart.mark_minutes, chart.mark_titles, strict=False) if m <= last]


def _figure(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) or abs(value) >= 10 else f"{value:.1f}"


def chart_text(chart: Chart, width: int = 60) -> list[str]:
    """The chart as lines of plain text: a sparkline a series, the axis, the marks."""
    span = f" ({chart.clock[0]}–{chart.clock[-1]})" if chart.clock else ""
    lines = [chart.label + span]
    if not chart.minutes:
        return [*lines, "  no figures"]
    columns = _columns(chart, width)
    for name, values in zip(chart.series, chart.values, strict=False):
        peak = max(values) if values else 0.0
        bar = ""
        for picked in columns:
            value = max((values[i] for i in picked), default=0.0)
            level = 0 if peak <= 0 else round(value / peak * (len(BLOCKS) - 1))
            bar += BLOCKS[max(level, 1 if value > 0 else 0)] if picked else " "
        lines.append(f"{name[:_LABEL - 1]:<{_LABEL}}{bar}  peak {_figure(peak)}, "
                     f"end {_figure(values[-1])}")
    axis = ["─"] * len(columns)
    last = max(chart.minutes[-1], 1)
    marks = _marks(chart)
    for number, (minute, _, _) in enumerate(marks, 1):
        axis[min(len(columns) - 1, minute * len(columns) // (last + 1))] = str(number % 10)
    lines.append(" " * _LABEL + "".join(axis))
    lines += [f"{'':<{_LABEL}}{n % 10} {face} {what}" for n, (_, face, what)
              in enumerate(marks, 1)]
    return lines


def chart_svg(chart: Chart, width: int = 720, band: int = 46) -> str:
    """The chart as an inline SVG: one band a series, the marks as dashed lines across."""
    left, right, top = 120, 70, 10
    plot = width - left - right
    height = top + band * max(len(chart.series), 1) + 20
    last = max(chart.minutes[-1], 1) if chart.minutes else 1

    def x(minute: int) -> float:
        return left + plot * minute / last

    out = [f'<svg width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(chart.label)}" '
           'font-family="sans-serif" font-size="11">']
    for n, (name, values) in enumerate(zip(chart.series, chart.values, strict=False)):
        base = top + band * (n + 1) - 6
        peak = max(values) if values else 0.0
        scale = (band - 14) / peak if peak > 0 else 0.0
        points = " ".join(f"{x(m):.1f},{base - v * scale:.1f}"
                          for m, v in zip(chart.minutes, values, strict=False))
        colour = _COLOURS[n % len(_COLOURS)]
        out.append(f'<text x="4" y="{base - 4}" fill="{colour}">{escape(name)}</text>')
        out.append(f'<line x1="{left}" y1="{base}" x2="{left + plot}" y2="{base}" '
                   'stroke="#ccc"/>')
        if points:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                       f'points="{points}"/>')
        out.append(f'<text x="{left + plot + 4}" y="{base - 4}" fill="#555">'
                   f'{escape(_figure(peak))}</text>')
    for number, (minute, face, what) in enumerate(_marks(chart), 1):
        mx = x(minute)
        out.append(f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{height - 18}" '
                   'stroke="#888" stroke-dasharray="3,3"><title>'
                   f'{escape(face)} {escape(what)}</title></line>')
        out.append(f'<text x="{mx + 2:.1f}" y="{height - 6}" fill="#555">{number}</text>')
    if chart.clock:
        out.append(f'<text x="{left}" y="{height - 6}" fill="#555">{escape(chart.clock[0])}'
                   '</text>')
        out.append(f'<text x="{left + plot}" y="{height - 6}" fill="#555" '
                   f'text-anchor="end">{escape(chart.clock[-1])}</text>')
    out.append("</svg>")
    return "".join(out)


def chart_legend(chart: Chart) -> list[tuple[str, str]]:
    """(number and time, what happened that night) for each mark, for a legend."""
    return [(f"{n} {face}", what) for n, (_, face, what) in enumerate(_marks(chart), 1)]
