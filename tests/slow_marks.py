"""tests/slow.txt read: the tests `pytest -m "not slow"` leaves out (tests/conftest.py marks
them)."""

from __future__ import annotations

from pathlib import Path

SLOW = Path(__file__).resolve().parent / "slow.txt"


def slow_entries() -> list[str]:
    """tests/slow.txt's entries: a file, a test function (all its cases) or one case."""
    return [line.strip() for line in SLOW.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def names(entry: str, nodeid: str) -> bool:
    """Whether `entry` names the test `nodeid` (its xdist `@group` cut off)."""
    nodeid = nodeid.split("@")[0]
    return nodeid == entry or nodeid.startswith((entry + "::", entry + "["))
