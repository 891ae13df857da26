"""The variant night: tonight's race on other numbers, drawn for each session.

The exercise file gives ranges (where the clock starts, how late the delayed worker is, how
far the seed is renumbered); the numbers are drawn when a session opens, from a seed kept in
the session's memory, so nothing on the players' disk predicts them. RACEDAY_SEED fixes the
seed (tests, and a facilitator who wants two runs of a play to be the same).
"""

from __future__ import annotations

import os
import random
import re
import secrets
from dataclasses import replace

from raceday.exercise.model import ShiftSpec

SEED_VARIABLE = "RACEDAY_SEED"
_OFFSET = re.compile(r"(?<![:\w]):offset\b")
_COUNT_FROM = re.compile(r"(?<![:\w]):count_from\b")
_NOW = re.compile(r"(?<![:\w]):now\b")


def session_seed() -> int:
    """RACEDAY_SEED when it is set (a whole number), else a fresh random seed."""
    given = os.environ.get(SEED_VARIABLE, "").strip()
    if given:
        try:
            return int(given)
        except ValueError:
            pass  # not a number: a seed of its own, the same for the same text
        return int.from_bytes(given.encode("utf-8")[:8].ljust(8, b"\0"), "big")
    return secrets.randbits(63)


def draw(shift: ShiftSpec, seed: int) -> ShiftSpec:
    """The variant night's numbers for `seed`: fixed values stay, ranges are drawn."""
    if not shift.drawn:  # fixed numbers: only the seed's :count_from to say
        return replace(shift, seed=_COUNT_FROM.sub(str(shift.count_from), shift.seed))
    rng = random.Random(seed)
    clock = rng.randint(*shift.clock_range) if shift.clock_range is not None else shift.clock
    later = dict(shift.later)
    drawn: dict[tuple[int, int, int], int] = {}  # tasks given the same range move together
    for task, least, most, step in shift.later_range:
        span = (least, most, step)
        if span not in drawn:
            drawn[span] = least + step * rng.randint(0, (most - least) // step)
        later[task] = drawn[span]
    offset = rng.randint(*shift.renumber) if shift.renumber is not None else 0
    swapped = tuple((group[0], rng.choice(group[1:])) for group in shift.swap)
    # drawn after the others: a seed gives the flagship's variant the numbers it always had
    count_from = rng.randint(*shift.count_from_range) if shift.count_from_range is not None \
        else shift.count_from
    return ShiftSpec(clock=clock, later=tuple(later.items()),
                     seed=seed_numbers(shift.seed, offset, count_from), swapped=swapped,
                     count_from=count_from)


def seed_numbers(seed: str, offset: int, count_from: int) -> str:
    """The variant's seed SQL with its `:offset` and `:count_from` said."""
    return _COUNT_FROM.sub(str(count_from), _OFFSET.sub(str(offset), seed))


def minutes_counted_from(sql: str, count_from: int) -> str:
    """`sql` with every `:now` reading `count_from` more (`(:now + 437)`): the night's
    minutes counted from another number, whatever the statement does with them."""
    if not count_from:
        return sql
    return _NOW.sub(f"(:now + {count_from})", sql)


def swap_names(sql: str, swapped: tuple[tuple[str, str], ...]) -> str:
    """`sql` with each drawn pair of text literals traded ('enactor-a' for 'enactor-c' and
    back), in one pass so a trade is not undone by the next."""
    if not swapped:
        return sql
    other: dict[str, str] = {}
    for first, second in swapped:
        other[first], other[second] = second, first
    names = "|".join(re.escape(n) for n in sorted(other, key=len, reverse=True))
    return re.sub(f"'({names})'", lambda m: f"'{other[m.group(1)]}'", sql)
