"""The meeting's door: what no seat's client would send is refused before it is run or
written into the transcript, in one short line, and no seat can flood the host.

A seat's client sends a seat name the host gave out, a kind from a short list, a payload
no longer than the longest statement the store runs, and a few commands a second at most.
Anyone who can write the meeting's commands table (on one machine, every player) can send
anything else: 200 KB names, unknown seats, thousands of rows. The store's constraints
refuse most of it at the insert; the gate is the host's own check, for rows that got past
them (or a store made before them), and the bound on how many refusals a seat (or all
unknown seats together) may leave in the transcript each minute.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field

from raceday.store.team_db import (
    MAX_COMMAND_KIND,
    MAX_COMMAND_MAC,
    MAX_COMMAND_PAYLOAD,
    MAX_SEAT_NAME,
    CommandRow,
)

WINDOW_S = 60.0
UNKNOWN = "?"
"""The one bucket every unknown seat name shares (so inventing names buys no more room)."""


@dataclass(frozen=True)
class Bounds:
    """How much one seat may send and leave behind in a minute."""

    commands_per_minute: int = 600
    """Ten a second: no player types that fast, and a heartbeat is one every two seconds."""
    refusals_recorded_per_minute: int = 5
    """Refusals written to the transcript per seat (the rest are refused all the same)."""


@dataclass(frozen=True)
class Verdict:
    """The gate's word on one command: `refusal` is None when it may go on."""

    refusal: str | None = None
    record: bool = True
    """Whether a refusal goes into the transcript (False once the seat's minute is full)."""
    first_unrecorded: bool = False
    """The first refusal of the minute that is not recorded (the host logs that one line)."""


@dataclass
class Gate:
    """Counts each seat's commands and recorded refusals over the last minute."""

    seats: Collection[str]
    """The host's seat names (its own live view of them)."""
    bounds: Bounds = Bounds()
    _sent: dict[str, deque[float]] = field(default_factory=dict)
    _recorded: dict[str, deque[float]] = field(default_factory=dict)
    _quiet: set[str] = field(default_factory=set)

    def bucket(self, seat: str) -> str:
        return seat if seat in self.seats else UNKNOWN

    def check(self, row: CommandRow, now: float) -> Verdict:
        """Is `row` something a seat's client would send? (Also counts it.)"""
        bucket = self.bucket(row.seat)
        sent = _window(self._sent.setdefault(bucket, deque()), now)
        sent.append(now)
        refusal = _oversized(row)
        if refusal is None and bucket == UNKNOWN:
            refusal = f"no seat {shown_seat(row.seat)!r} in this session"
        if refusal is None and len(sent) > self.bounds.commands_per_minute:
            refusal = (f"more than {self.bounds.commands_per_minute} commands in a minute "
                       f"from seat {row.seat}")
        if refusal is None:
            return Verdict()
        return self.refused(row.seat, now, refusal)

    def refused(self, seat: str, now: float, refusal: str) -> Verdict:
        """A refusal (the gate's or the host's): recorded while the seat's minute has room."""
        bucket = self.bucket(seat)
        recorded = _window(self._recorded.setdefault(bucket, deque()), now)
        if len(recorded) < self.bounds.refusals_recorded_per_minute:
            recorded.append(now)
            self._quiet.discard(bucket)
            return Verdict(refusal)
        first = bucket not in self._quiet
        self._quiet.add(bucket)
        return Verdict(refusal, record=False, first_unrecorded=first)


def shown_seat(name: str) -> str:
    """A seat name short enough for one line of a transcript."""
    return name if len(name) <= MAX_SEAT_NAME else name[:MAX_SEAT_NAME] + "…"


def _oversized(row: CommandRow) -> str | None:
    for what, value, limit in (("seat name", row.seat, MAX_SEAT_NAME),
                               ("command kind", row.kind, MAX_COMMAND_KIND),
                               ("signature", row.mac, MAX_COMMAND_MAC),
                               ("payload", row.payload, MAX_COMMAND_PAYLOAD)):
        if len(value) > limit:
            return f"the command's {what} is {len(value)} characters (at most {limit})"
    return None


def _window(times: deque[float], now: float) -> deque[float]:
    while times and times[0] <= now - WINDOW_S:
        times.popleft()
    return times
