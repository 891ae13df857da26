"""Harms as raceday measures them: when each was present, night by night.

A harm is one of the exercise's invariants: trusted SQL over base tables, checked after every
write and every simulated minute. A `went_back` harm needs history (a value lower than the
highest it has had tonight): `History` keeps it in raceday's memory, where no role of the
world can read or write it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class History:
    """The highest value each key has had tonight, per harm."""

    highest: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per harm, each key (as text) and the highest value it has had."""
    last: dict[str, tuple[list[Sequence[Any]], list[tuple[Any, ...]]]] = field(
        default_factory=dict)
    """Per harm, the rows compared last (when their keys were distinct) and the answer: the
    same rows again give the same answer and no new high, so they are not walked again (a
    harm over every endpoint is asked after every write)."""

    def went_back(self, harm: str, rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """The rows (key, value, highest before) whose value is below the highest that key
        has had; then remember the new highs. Rows with no value (NULL) are not compared."""
        rows = list(rows)
        seen = self.last.get(harm)
        if seen is not None and seen[0] == rows:
            return list(seen[1])
        back = self._compare(harm, rows)
        if len({str(row[0]) for row in rows if row}) == len(rows):
            self.last[harm] = (rows, back)
        else:  # a key twice: its second value is compared with its first, so not the same
            self.last.pop(harm, None)
        return list(back)

    def _compare(self, harm: str, rows: list[Sequence[Any]]) -> list[tuple[Any, ...]]:
        back: list[tuple[Any, ...]] = []
        highs = self.highest.setdefault(harm, {})
        high = highs.get
        for row in rows:  # every endpoint after every write: kept lean
            if len(row) < 2 or row[1] is None:
                continue
            name, value = row[0], row[1]
            key = name if type(name) is str else str(name)
            before = high(key)
            if before is None:
                highs[key] = value
                continue
            try:
                lower, higher = value < before, value > before
            except TypeError:  # a value of another type than before: compared as text
                lower, higher = str(value) < str(before), str(value) > str(before)
            if lower:
                back.append((name, value, before))
            elif higher:
                highs[key] = value
        return back


@dataclass
class HarmClock:
    """The stretches each harm was present ([start, end or None]), in simulated minutes."""

    stretches: dict[str, list[list[int | None]]] = field(default_factory=dict)

    def observe(self, harm: str, minute: int, present: bool) -> None:
        runs = self.stretches.setdefault(harm, [])
        open_now = bool(runs) and runs[-1][1] is None
        if present and not open_now:
            runs.append([minute, None])
        elif not present and open_now:
            runs[-1][1] = minute

    def minutes(self, harm: str, until: int) -> int:
        """Minutes the harm was present up to `until` (a harm that began and cleared in the
        same minute counts one: the customers saw it)."""
        total = 0
        for start, end in self.stretches.get(harm, []):
            assert start is not None
            if start >= until:
                continue
            stop = min(end if end is not None else until, until)
            total += max(stop - start, 1)
        return total

    def held(self, harm: str, since: int, until: int) -> int:
        """Minutes the harm was present between `since` and `until`, however many spells
        (an inject that follows a flapping fault counts them all)."""
        total = 0
        for start, end in self.stretches.get(harm, []):
            assert start is not None
            stop = until if end is None else min(end, until)
            total += max(0, stop - max(start, since))
        return total

    def first(self, harm: str) -> int | None:
        runs = self.stretches.get(harm)
        return runs[0][0] if runs else None
