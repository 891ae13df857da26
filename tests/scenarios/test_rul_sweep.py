"""recovery-under-load's DWFM sweep (the statement `dwfm-sweep`) queues the lease attempts a
limited intake admits: each host's first droplets due, in lease order, as a per-host ranking
picks them (what the statement said until it read each host's droplets from an index instead:
a collapsed night at 20,000 droplets spent 13 of its 28 s of SQL ranking the whole fleet every
minute to keep two droplets a host).

The world is the exercise's own, built small in memory, its leases and queue marks scrambled;
the sweep runs as the automation runs it, and its queue is checked against the ranking done
here in Python.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from raceday.engine.load import load_exercise

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load"
NOW = 30


def _world(seed: int) -> tuple[sqlite3.Connection, str]:
    exercise = load_exercise(EXERCISE)
    conn = sqlite3.connect(":memory:")
    conn.executescript(exercise.world_sql.replace("SELECT 20000 AS size", "SELECT 2000 AS size"))
    rng = random.Random(seed)
    conn.executemany("UPDATE droplet SET lease_until = ?, queued = ? WHERE id = ?",
                     [(rng.randrange(NOW - 20, NOW + 20), int(rng.random() < 0.3), i)
                      for i in range(1, 2001)])
    sweep = next(s.sql for s in exercise.statements if s.id == "dwfm-sweep")
    return conn, sweep


def _ranked(conn: sqlite3.Connection, admitted: int | None) -> list[tuple[int, int]]:
    """(host, droplet) of each lease attempt a per-host ranking queues, in queue order."""
    due = conn.execute("SELECT host, id, lease_until FROM droplet "
                       "WHERE queued = 0 AND lease_until < ?", (NOW + 5,)).fetchall()
    by_host: dict[int, list[tuple[int, int, int]]] = {}
    for row in sorted(due, key=lambda r: (r[2], r[1])):
        by_host.setdefault(row[0], []).append(row)
    kept = [r for rows in by_host.values() for r in rows[:admitted]]
    return [(h, i) for h, i, _ in sorted(kept, key=lambda r: (r[2], r[1]))]


@pytest.mark.parametrize(("knob", "admitted"), [
    (0, None), (-3, None),          # no limit
    (1, 1), (2, 2), (7, 7), (2.5, 2),  # a fractional limit admits its whole part
    (400, 400),                     # more than a host has due
    ("'many'", None),               # not a number: limits nothing (it compares above every number)
])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_sweep_queues_each_hosts_first_droplets_due(
        seed: int, knob: object, admitted: int | None) -> None:
    conn, sweep = _world(seed)
    conn.execute(f"UPDATE knob SET value = {knob} WHERE name = 'dwfm-intake-per-host'")
    expected = _ranked(conn, admitted)
    conn.execute(sweep, {"now": NOW})
    queued = conn.execute("SELECT host, droplet FROM dwfm_work ORDER BY id").fetchall()
    assert queued == expected
    assert len(queued) > 0


def test_without_the_intake_knob_the_sweep_queues_nothing() -> None:
    conn, sweep = _world(1)
    conn.execute("DELETE FROM knob WHERE name = 'dwfm-intake-per-host'")
    conn.execute(sweep, {"now": NOW})
    assert conn.execute("SELECT count(*) FROM dwfm_work").fetchone() == (0,)
