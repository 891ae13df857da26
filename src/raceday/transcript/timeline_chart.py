"""The debrief's timeline chart: the team's night beside the real one, on one clock.

Pure layout first (`Chart`), then three drawings of it: an inline SVG for the HTML debrief
(no external references, readable when printed), a fixed-width text chart for Markdown, and a
Rich renderable for the terminal. Nothing here reads a transcript: the debrief hands it marks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from raceday.value import Value, frozen

if TYPE_CHECKING:
    from rich.text import Text

TEAM, EVENT = "team", "event"
LANES: tuple[tuple[str, str], ...] = ((TEAM, "Your team"), (EVENT, "That night"))
NIGHT = "That night"


def lanes(night: str = NIGHT) -> tuple[tuple[str, str], ...]:
    """The chart's lanes: the team's, and the real night's under the exercise's name for it
    (none when the exercise compares with no real event)."""
    return ((TEAM, "Your team"), (EVENT, night)) if night else ((TEAM, "Your team"),)

# kind -> (symbol in text charts, colour in SVG and Rich, legend word)
KINDS: dict[str, tuple[str, str, str]] = {
    "fault": ("F", "#c0392b", "fault began"),
    "relapse": ("!", "#c0392b", "fault came back"),
    "detected": ("D", "#1e8449", "detected"),
    "declaration": ("?", "#7d3c98", "finding declared"),
    "milestone": ("M", "#2471a3", "milestone"),
    "restored": ("R", "#1e8449", "restored"),
    "race_step": ("x", "#a04000", "race step happened"),
    "replay": ("P", "#2471a3", "replay run"),
    "resumed": ("C", "#b7950b", "crashed, then resumed"),
    "reveal": ("*", "#566573", "what happened that night"),
    "figure": ("o", "#566573", "that night's figure"),
}
_RICH_STYLE = {
    "fault": "bold red", "relapse": "bold red", "detected": "bold green",
    "declaration": "magenta", "milestone": "bold blue", "restored": "bold green",
    "race_step": "dark_orange", "replay": "blue", "reveal": "dim", "figure": "dim",
    "resumed": "bold yellow",
}
_TICK_STEPS = (5, 10, 15, 20, 30, 60, 120, 180, 240)
# when two marks share a column of a text chart, the one ranked first is drawn
_RANK = ("fault", "relapse", "resumed", "detected", "restored", "milestone", "declaration",
         "race_step", "replay", "figure", "reveal")


@frozen
class Mark(Value):
    """One moment on the chart: `minute` counts from the exercise clock's start."""

    lane: str
    minute: int
    time: str
    kind: str
    label: str
    source: str = ""


@frozen
class Band(Value):
    """A stretch of one lane: the outage (fault to restored) or the time to detect."""

    lane: str
    start: int
    end: int
    kind: str  # outage | detect
    label: str


@frozen
class Chart(Value):
    """What to draw: the axis (minutes since the clock's start) and the marks on it."""

    start: int
    end: int
    origin: int
    ticks: tuple[tuple[int, str], ...]
    marks: tuple[Mark, ...]
    bands: tuple[Band, ...] = ()

    def clock(self, minute: int) -> str:
        total = (self.origin + minute) % (24 * 60)
        return f"{total // 60:02d}:{total % 60:02d}"


def build_chart(marks: tuple[Mark, ...], start: int, end: int, origin: int,
                bands: tuple[Band, ...] = ()) -> Chart:
    """Lay out the axis so it covers every mark and band, with about eight ticks on round
    minutes."""
    minutes = [m.minute for m in marks] + [b.end for b in bands] + [b.start for b in bands]
    lo = min([start, *minutes])
    hi = max([end, *minutes, lo + 10])
    span = hi - lo
    step = next((s for s in _TICK_STEPS if span / s <= 9), _TICK_STEPS[-1])
    first = lo + (-(origin + lo)) % step
    chart = Chart(lo, hi, origin, (), tuple(sorted(marks, key=lambda m: (m.minute, m.lane))))
    ticks = tuple((t, chart.clock(t)) for t in range(first, hi + 1, step))
    return Chart(lo, hi, origin, ticks, chart.marks, bands)


# -- SVG ---------------------------------------------------------------------------------------

_W, _LEFT, _RIGHT, _TOP = 960, 110, 20, 24
_LANE_H, _CHAR_W = 96, 7.4
_BAND_STYLE = {"outage": ("#c0392b", 0.16, 18), "detect": ("#d4ac0d", 0.35, 8)}
BAND_WORDS = {"outage": "outage (fault to restored)", "detect": "time to detect"}


def _x(chart: Chart, minute: int) -> float:
    span = max(chart.end - chart.start, 1)
    return _LEFT + (minute - chart.start) * (_W - _LEFT - _RIGHT) / span


_ATTRIBUTE_LIKE = re.compile(r"\b(src|href|srcset)=", re.IGNORECASE)


def escape_text(text: str) -> str:
    """Escape text for HTML/SVG. '://' and 'src='/'href=' are written with entities, so text a
    player typed (SQL naming a web address) reads the same but never looks like a reference."""
    from html import escape  # the HTML debrief's only: Markdown and the terminal never ask

    escaped = escape(text, quote=True).replace("://", ":&#47;&#47;")
    return _ATTRIBUTE_LIKE.sub(r"\1&#61;", escaped)


def numbered(chart: Chart, night: str = NIGHT) -> list[tuple[int, Mark]]:
    """The marks numbered as the SVG labels them: the team's lane first, each in time order."""
    ordered = [m for lane, _ in lanes(night) for m in chart.marks if m.lane == lane]
    return list(enumerate(ordered, start=1))


@dataclass
class _Cluster:
    """Marks drawn under one label ("6-10"): close enough that their labels would touch."""

    at: float  # where the label sits (the middle of the marks' positions)
    marks: list[tuple[int, Mark]]
    spots: list[float]

    @property
    def label(self) -> str:
        first, last = self.marks[0][0], self.marks[-1][0]
        return str(first) if first == last else f"{first}-{last}"

    def size(self, char: float) -> float:
        return len(self.label) * char + 6


def clusters(spots: list[tuple[float, int, Mark]], char: float) -> list[_Cluster]:
    """Group marks (position, number, mark; in order) so that no two labels overlap: a
    label that would touch the one before it joins it, until none do."""
    out: list[_Cluster] = []
    for at, n, mark in spots:
        if out and out[-1].spots[-1] == at:
            out[-1].marks.append((n, mark))
            continue
        out.append(_Cluster(at, [(n, mark)], [at]))
        while len(out) > 1:
            a, b = out[-2], out[-1]
            if a.at + a.size(char) / 2 < b.at - b.size(char) / 2:
                break
            merged = _Cluster(0.0, a.marks + b.marks, a.spots + b.spots)
            merged.at = (min(merged.spots) + max(merged.spots)) / 2
            out[-2:] = [merged]
    return out


def _tip(group: list[tuple[int, Mark]]) -> str:
    return "; ".join(f"{n}. {m.time} {m.label}" + (f" [{m.source}]" if m.source else "")
                     for n, m in group)


def _colour(group: list[tuple[int, Mark]]) -> tuple[str, str]:
    kind = min((m.kind for _, m in group), key=_rank)
    return kind, KINDS.get(kind, KINDS["reveal"])[1]


def render_svg(chart: Chart, night: str = NIGHT) -> str:
    """An inline SVG (no xmlns, no links, no fonts to fetch): two lanes on one clock, for a
    wide page. Each moment is a dot; numbers above the lane are explained in the table beside
    the chart (`numbered`); marks too close for their own number share one ("6-10"). Bands
    show the outage and the time to detect on each side."""
    shown = lanes(night)
    height = _TOP + _LANE_H * len(shown) + 48
    about = f"the team beside {night.lower()}" if night else "the team"
    out: list[str] = [
        f'<svg class="timeline timeline-wide" viewBox="0 0 {_W} {height}" width="100%" '
        f'role="img" aria-label="Timeline: {escape_text(about)}">'
    ]
    axis_y = _TOP + _LANE_H * len(shown)
    numbers = numbered(chart, night)
    for index, (lane, name) in enumerate(shown):
        y0 = _TOP + index * _LANE_H
        mid = y0 + _LANE_H / 2 + 12
        out.append(f'<rect x="0" y="{y0}" width="{_W}" height="{_LANE_H}" '
                   f'class="lane lane-{lane}"/>')
        out.append(f'<text x="8" y="{mid + 4:.1f}" class="lane-name">{escape_text(name)}</text>')
        for band in (b for b in chart.bands if b.lane == lane):
            colour, opacity, tall = _BAND_STYLE.get(band.kind, ("#566573", 0.2, 10))
            x1, x2 = _x(chart, band.start), _x(chart, max(band.end, band.start))
            out.append(f'<g class="band band-{band.kind}"><title>{escape_text(band.label)}'
                       f'</title><rect x="{x1:.1f}" y="{mid - tall / 2:.1f}" '
                       f'width="{max(x2 - x1, 2):.1f}" height="{tall}" fill="{colour}" '
                       f'fill-opacity="{opacity}"/></g>')
        out.append(f'<line x1="{_LEFT}" y1="{mid:.1f}" x2="{_W - _RIGHT}" y2="{mid:.1f}" '
                   'class="track"/>')
        spots = [(_x(chart, m.minute), n, m) for n, m in numbers if m.lane == lane]
        for cluster in clusters(spots, _CHAR_W):
            kind, colour = _colour(cluster.marks)
            dots = "".join(f'<circle cx="{x:.1f}" cy="{mid:.1f}" r="5" fill="{colour}"/>'
                           for x in sorted(set(cluster.spots)))
            out.append(f'<g class="mark mark-{kind}"><title>{escape_text(_tip(cluster.marks))}'
                       f'</title>{dots}<text x="{cluster.at:.1f}" y="{mid - 16:.1f}" '
                       f'fill="{colour}" class="mark-label">{cluster.label}</text></g>')
    out.append(f'<line x1="{_LEFT}" y1="{axis_y}" x2="{_W - _RIGHT}" y2="{axis_y}" '
               'class="axis"/>')
    for minute, label in chart.ticks:
        x = _x(chart, minute)
        out.append(f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{axis_y + 4}" class="tick"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 18}" class="tick-label">{label}</text>')
    out.append(_band_legend(chart, _LEFT, axis_y + 38))
    out.append("</svg>")
    return "\n".join(out)


def _band_legend(chart: Chart, x: float, y: float) -> str:
    kinds = [k for k in BAND_WORDS if any(b.kind == k for b in chart.bands)]
    out = []
    for kind in kinds:
        colour, opacity, _ = _BAND_STYLE[kind]
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="22" height="10" fill="{colour}" '
                   f'fill-opacity="{opacity}"/><text x="{x + 28:.1f}" y="{y:.1f}" '
                   f'class="band-label">{BAND_WORDS[kind]}</text>')
        x += 40 + len(BAND_WORDS[kind]) * 7
    return "".join(out)


_NW, _NTOP, _NROW = 360, 40, 16
_NCOLS = {TEAM: 150, EVENT: 290}


def render_svg_narrow(chart: Chart, night: str = NIGHT) -> str:
    """The same chart for a phone (about 390 px): time runs down the page, the team's lane
    and that night's side by side, numbers beside the dots at a readable size."""
    shown = lanes(night)
    span = max(chart.end - chart.start, 1)
    body = max(420, min(900, span * 3))
    height = _NTOP + body + 60

    def y(minute: int) -> float:
        return _NTOP + (minute - chart.start) * body / span

    about = f"the team beside {night.lower()}" if night else "the team"
    out = [f'<svg class="timeline timeline-narrow" viewBox="0 0 {_NW} {height:.0f}" '
           f'width="100%" role="img" aria-label="Timeline: {escape_text(about)}">']
    for minute, label in chart.ticks:
        out.append(f'<line x1="48" y1="{y(minute):.1f}" x2="{_NW - 4}" y2="{y(minute):.1f}" '
                   f'class="tick"/><text x="4" y="{y(minute) + 4:.1f}" '
                   f'class="tick-label tick-label-left" style="text-anchor:start">{label}</text>')
    numbers = numbered(chart, night)
    for lane, name in shown:
        col = _NCOLS[lane] if len(shown) > 1 else 200
        out.append(f'<text x="{col}" y="20" class="lane-name lane-name-top" style="text-anchor:middle">'
                   f'{escape_text(name)}</text>')
        for band in (b for b in chart.bands if b.lane == lane):
            colour, opacity, tall = _BAND_STYLE.get(band.kind, ("#566573", 0.2, 10))
            y1, y2 = y(band.start), y(max(band.end, band.start))
            out.append(f'<g class="band band-{band.kind}"><title>{escape_text(band.label)}'
                       f'</title><rect x="{col - tall / 2:.1f}" y="{y1:.1f}" width="{tall}" '
                       f'height="{max(y2 - y1, 2):.1f}" fill="{colour}" '
                       f'fill-opacity="{opacity}"/></g>')
        out.append(f'<line x1="{col}" y1="{_NTOP - 6}" x2="{col}" y2="{_NTOP + body:.0f}" '
                   'class="track"/>')
        spots = [(y(m.minute), n, m) for n, m in numbers if m.lane == lane]
        for cluster in clusters(spots, _NROW / 2):  # rows: a label is one text line tall
            kind, colour = _colour(cluster.marks)
            dots = "".join(f'<circle cx="{col}" cy="{v:.1f}" r="5" fill="{colour}"/>'
                           for v in sorted(set(cluster.spots)))
            out.append(f'<g class="mark mark-{kind}"><title>{escape_text(_tip(cluster.marks))}'
                       f'</title>{dots}<text x="{col + 10}" y="{cluster.at + 5:.1f}" '
                       f'fill="{colour}" class="mark-label mark-label-side" '
                       f'style="text-anchor:start">{cluster.label}</text></g>')
    out.append(_band_legend_narrow(chart, _NTOP + body + 30))
    out.append("</svg>")
    return "\n".join(out)


def _band_legend_narrow(chart: Chart, y: float) -> str:
    kinds = [k for k in BAND_WORDS if any(b.kind == k for b in chart.bands)]
    out = []
    for row, kind in enumerate(kinds):
        colour, opacity, _ = _BAND_STYLE[kind]
        out.append(f'<rect x="8" y="{y + row * 18 - 9:.1f}" width="22" height="10" '
                   f'fill="{colour}" fill-opacity="{opacity}"/><text x="36" '
                   f'y="{y + row * 18:.1f}" class="band-label">{BAND_WORDS[kind]}</text>')
    return "".join(out)


# -- text ---------------------------------------------------------------------------------------

def _rank(kind: str) -> int:
    return _RANK.index(kind) if kind in _RANK else len(_RANK)


def _cells(chart: Chart, width: int, night: str) -> dict[str, list[tuple[str, str]]]:
    cells: dict[str, list[tuple[str, str]]] = {lane: [(" ", "")] * width
                                               for lane, _ in lanes(night)}
    span = max(chart.end - chart.start, 1)
    for mark in chart.marks:
        if mark.lane not in cells:
            continue
        col = round((mark.minute - chart.start) * (width - 1) / span)
        symbol = KINDS.get(mark.kind, KINDS["reveal"])[0]
        current = cells[mark.lane][col][1]
        if not current or _rank(mark.kind) < _rank(current):
            cells[mark.lane][col] = (symbol, mark.kind)
    return cells


def _axis(chart: Chart, width: int) -> tuple[str, str]:
    span = max(chart.end - chart.start, 1)
    rule = ["-"] * width
    labels = [" "] * (width + 6)
    free = 0
    for minute, label in chart.ticks:
        col = round((minute - chart.start) * (width - 1) / span)
        rule[col] = "+"
        if col >= free and col + len(label) <= len(labels):
            labels[col:col + len(label)] = list(label)
            free = col + len(label) + 1
    return "".join(rule), "".join(labels).rstrip()


def legend(chart: Chart) -> list[str]:
    """The symbols the text charts use, for the kinds present."""
    seen = [k for k in KINDS if any(m.kind == k for m in chart.marks)]
    return [f"{KINDS[k][0]} {KINDS[k][2]}" for k in seen]


def render_text(chart: Chart, width: int = 72, night: str = NIGHT) -> list[str]:
    """A fixed-width two-lane chart (for a Markdown code block)."""
    names = dict(lanes(night))
    pad = max(len(n) for n in [*names.values(), *dict(LANES).values()]) + 2
    lines = []
    for lane, cells in _cells(chart, width, night).items():
        lines.append(names[lane].ljust(pad) + "|" + "".join(c for c, _ in cells).rstrip())
    rule, labels = _axis(chart, width)
    lines.append(" " * pad + "+" + rule)
    lines.append(" " * (pad + 1) + labels)
    row = ""
    for entry in legend(chart):
        if row and len(row) + 3 + len(entry) > width:
            lines.append(" " * (pad + 1) + row)
            row = ""
        row = f"{row}   {entry}" if row else entry
    if row:
        lines.append(" " * (pad + 1) + row)
    return [line.rstrip() for line in lines]


def render_rich(chart: Chart, width: int = 72, night: str = NIGHT) -> Text:
    """The same chart for the terminal, coloured by kind."""
    from rich.text import Text  # only the terminal shows it: the debrief files do without rich

    names = dict(lanes(night))
    pad = max(len(n) for n in [*names.values(), *dict(LANES).values()]) + 2
    text = Text()
    for lane, cells in _cells(chart, width, night).items():
        text.append(names[lane].ljust(pad), style="bold")
        text.append("|", style="dim")
        for symbol, kind in cells:
            text.append(symbol, style=_RICH_STYLE.get(kind, "") if symbol != " " else "")
        text.append("\n")
    rule, labels = _axis(chart, width)
    text.append(" " * pad + "+" + rule + "\n", style="dim")
    text.append(" " * (pad + 1) + labels + "\n", style="dim")
    used = 0
    for kind in KINDS:
        if any(m.kind == kind for m in chart.marks):
            symbol, _, word = KINDS[kind]
            if used and used + len(word) + 5 > width + pad:
                text.append("\n")
                used = 0
            text.append(" " * (pad + 1) if not used else "   ")
            text.append(symbol, style=_RICH_STYLE.get(kind, ""))
            text.append(f" {word}")
            used += len(word) + 5 + (pad if not used else 0)
    return text
