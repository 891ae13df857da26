"""Fair turns: the seats' queued commands taken one seat at a time.

The meeting's queue is in submission order, so a seat that queued a hundred schema changes
and replays used to hold every other seat's statement behind all of them (a `SELECT 1`
waited 26.8 s, the live clock stalled). The host reads the queue into one line per seat and
takes each round the oldest command of every seat that has one: a seat's own commands
still run in its order, but only behind its own, and the host's clock runs between any two.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from raceday.store.team_db import MAX_QUEUED_PER_SEAT, CommandRow


class Turns:
    """The commands read from the meeting and not yet run, one line per seat."""

    def __init__(self) -> None:
        self._lines: dict[str, deque[CommandRow]] = {}
        self._ids: set[int] = set()
        self._served: dict[str, int] = {}
        self._round = 0

    @staticmethod
    def read_limit(seats: int) -> int:
        """How many queued rows to read so that every seat's are seen (a seat may have
        `MAX_QUEUED_PER_SEAT` waiting; unknown seat names count as one more)."""
        return MAX_QUEUED_PER_SEAT * (seats + 1)

    def add(self, rows: Iterable[CommandRow]) -> None:
        """Queue rows read from the meeting; a row already waiting here is not added again
        (the meeting still calls it queued until its outcome is published)."""
        for row in sorted(rows, key=lambda r: r.id):
            if row.id not in self._ids:
                self._ids.add(row.id)
                self._lines.setdefault(row.seat, deque()).append(row)

    def next_round(self) -> list[CommandRow]:
        """The oldest waiting command of each seat; the seat served longest ago goes first
        (a seat that just had a turn alone waits for one that has just sent its first)."""
        self._round += 1
        taken = sorted((line.popleft() for line in self._lines.values()),
                       key=lambda r: (self._served.get(r.seat, 0), r.id))
        for row in taken:
            self._ids.discard(row.id)
            self._served[row.seat] = self._round
        self._lines = {seat: line for seat, line in self._lines.items() if line}
        return taken

    def clear(self) -> None:
        self._lines.clear()
        self._ids.clear()

    def __len__(self) -> int:
        return len(self._ids)
