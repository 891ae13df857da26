"""recovery-under-load's DWFM statements read each host's droplets from its own index, and
choose what the set-based forms they replaced chose:

- the sweep (`dwfm-sweep`) queues the lease attempts a limited intake admits: each host's
  first droplets due, in lease order, as a per-host ranking picks them (a collapsed night at
  20,000 droplets spent 13 of its 28 s of SQL ranking the whole fleet every minute to keep
  two droplets a host);
- a host is still re-leasing while more than 5% of its droplets hold no lease, counted to
  that 5% and no further (`dwfm-launch-done`, `netmgr-propagate`: they grouped every droplet
  without a lease by host every minute, 12 of the collapsed night's seconds).

The world is the exercise's own, built small in memory, its leases and queue marks scrambled;
the statements run as the automation runs them, and what they did is checked against the
rule worked out here in Python.
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


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_launches_start_only_on_hosts_that_hold_their_leases(seed: int) -> None:
    conn, _sweep = _world(seed)
    exercise = load_exercise(EXERCISE)
    launch_done = next(s.sql for s in exercise.statements if s.id == "dwfm-launch-done")
    rng = random.Random(seed)
    # some hosts mostly leased, some just over 5% without a lease, some far over
    for host in range(1, 5):
        late = rng.choice([0, 24, 25, 26, 27, 400])
        conn.execute("UPDATE droplet SET lease_until = CASE WHEN id IN (SELECT id FROM droplet "
                     "WHERE host = ? ORDER BY id LIMIT ?) THEN ? ELSE ? END WHERE host = ?",
                     (host, late, NOW - 1, NOW + 30, host))
    picked = rng.sample(range(1, 2001), 300)
    conn.executemany("INSERT INTO launch_request (id, asked_at, next_try, state) "
                     "VALUES (?, ?, ?, 'queued')", [(n, NOW, NOW) for n in range(1, 301)])
    conn.executemany("INSERT INTO dwfm_work (host, droplet, kind, queued_at, request, taken_at) "
                     "SELECT host, id, 'launch', ?, ?, ? FROM droplet WHERE id = ?",
                     [(NOW, n, NOW, d) for n, d in enumerate(picked, 1)])
    leases = conn.execute("SELECT id, host, lease_until FROM droplet").fetchall()
    late_by_host: dict[int, int] = {}
    for _id, host, until in leases:
        late_by_host[host] = late_by_host.get(host, 0) + (until < NOW)
    host_of = {i: h for i, h, _u in leases}
    until_of = {i: u for i, _h, u in leases}
    expected = sorted(d for d in picked
                      if until_of[d] >= NOW and late_by_host[host_of[d]] * 20 <= 500)
    conn.execute(launch_done, {"now": NOW})
    launched = sorted(r[0] for r in conn.execute("SELECT droplet FROM instance"))
    assert launched == expected
    assert 0 < len(launched) < len(picked)
