"""The customers' harms over the night, minute by minute, for the room's projector.

Built from the events every screen already receives (a harm's `fault` when it starts to
hold, `invariant_clear` when it stops), so the projector decides nothing: it draws the
minutes the engine found the customers hurt. One strip per harm across the whole night,
one cell for a few minutes: held in any of them, served in all of them, or not yet played.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from raceday.exercise.times import format_time
from raceday.transcript import events as ev

HELD = "█"
SERVED = "·"
AHEAD = " "


@dataclass
class Harm:
    """One harm the night has shown: its words, and the minutes it held ([start, end))."""

    ident: str
    fault: str
    spans: list[list[int]] = field(default_factory=list)
    holding: bool = False

    def minutes(self, now: int) -> int:
        """How many minutes it held up to `now` (a harm still holding counts to now)."""
        return sum((now if self.holding and i == len(self.spans) - 1 else end) - start
                   for i, (start, end) in enumerate(self.spans))

    def held_in(self, first: int, last: int, now: int) -> bool:
        """Did it hold in any minute of [first, last)?"""
        for i, (start, end) in enumerate(self.spans):
            stop = now + 1 if self.holding and i == len(self.spans) - 1 else end
            if start < last and first < stop:
                return True
        return False


@dataclass
class HarmsOverTime:
    """Follows the events; `strips` draws them."""

    start: int = 0
    """The clock's start, in minutes after midnight (from `session_start`)."""
    harms: dict[str, Harm] = field(default_factory=dict)
    last: int = 0
    """The latest minute an event was seen at (a night played out after the team left goes
    on past the screen's last look at the world)."""

    def note(self, event: ev.Event) -> bool:
        """Take an event in; True when it changed what the strips show."""
        self.last = max(self.last, event.minute)
        if isinstance(event, ev.SessionStart):
            try:
                clock = datetime.fromisoformat(event.clock_start)
            except ValueError:
                return False
            self.start = clock.hour * 60 + clock.minute
            return True
        if isinstance(event, ev.Fault):
            harm = self.harms.setdefault(event.invariant, Harm(event.invariant, event.fault))
            if not harm.holding:
                harm.spans.append([event.minute, event.minute])
                harm.holding = True
            return True
        if isinstance(event, ev.InvariantClear):
            cleared = self.harms.get(event.invariant)
            if cleared is not None and cleared.holding:
                cleared.spans[-1][1] = event.minute
                cleared.holding = False
            return True
        return False

    def time(self, minute: int) -> str:
        return format_time(minute, self.start)

    def strips(self, now: int, end: int, width: int = 48, *,
               named: bool) -> list[tuple[str, str, str]]:
        """One (label, strip, words) per harm the night has shown, in the order they began.
        `named`: the harm's own words (the hot wash); else "customers hurt" and a number,
        since a harm's words would tell the players what to look for."""
        step, cells = _cells(max(end, now), width)
        rows = []
        for number, harm in enumerate(self.harms.values(), start=1):
            strip = "".join(
                AHEAD if c * step > now else
                HELD if harm.held_in(c * step, (c + 1) * step, now) else SERVED
                for c in range(cells))
            label = (" ".join(harm.fault.split()) if named else
                     "Customers hurt" + (f" ({number})" if len(self.harms) > 1 else ""))
            rows.append((label, strip, self._words(harm, now)))
        return rows

    def served(self, now: int, end: int, width: int = 48) -> str:
        """The strip of a night no harm has touched yet: the minutes played so far."""
        step, cells = _cells(max(end, now), width)
        return "".join(AHEAD if c * step > now else SERVED for c in range(cells))

    def _words(self, harm: Harm, now: int) -> str:
        spans = []
        for i, (start, stop) in enumerate(harm.spans):
            if harm.holding and i == len(harm.spans) - 1:
                spans.append(f"since {self.time(start)}")
            else:
                spans.append(f"{self.time(start)}-{self.time(stop)}")
        total = harm.minutes(now)
        return f"{total} min: {', '.join(spans)}"

    def axis(self, end: int, width: int = 48) -> str:
        """The night's start and end under the strips."""
        _, cells = _cells(end, width)
        first, last = self.time(0), self.time(end)
        return first + " " * max(1, cells - len(first) - len(last)) + last


def _cells(end: int, width: int) -> tuple[int, int]:
    """(minutes per cell, how many cells) for a night of `end` minutes in `width` cells."""
    end = max(end, 1)
    step = max(1, -(-end // width))  # rounded up: the night fits
    return step, -(-end // step)
