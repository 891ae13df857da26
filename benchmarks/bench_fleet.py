"""What one simulated minute of recovery-under-load costs as the fleet grows, and the whole
exercise headless at its default size.

Each size is measured in a fresh process (so its peak memory is its own): the world is
built, the session opened with every role automated, and then simulated minutes are timed
one by one through the ordinary session path (store, transcript, checks), in two states of
the fleet: the first minutes of the collapse (every droplet queued, nothing leased) and,
after a restart with a queue-size admission guard, the recovery (leases coming back,
launches, Network Manager, NLB). Prints the median time per minute, the peak memory, and
ratios against the smallest size: linear growth means the time ratio follows the size ratio
(or grows slower).

Usage: python benchmarks/bench_fleet.py [--sizes 10000,100000,1000000] [--minutes 5]
                                         [--whole-runs 1] [--no-whole]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "recovery-under-load"
DEFAULT_SIZE = "SELECT 20000 AS size"
GUARD = """
CREATE TRIGGER admit_by_queue BEFORE INSERT ON dwfm_work
WHEN NEW.kind = 'lease'
 AND (SELECT count(*) FROM dwfm_work WHERE host = NEW.host AND taken_at IS NULL) >= 60
BEGIN SELECT RAISE(IGNORE); END;
UPDATE dwfm_host SET restart = 1;
"""


def measure(size: int, minutes: int) -> dict[str, float]:
    """In this process: build a fleet of `size` droplets and time simulated minutes."""
    from raceday.engine.headless import open_session
    from raceday.engine.load import load_exercise

    exercise = load_exercise(EXERCISE)
    exercise = dataclasses.replace(
        exercise, world_sql=exercise.world_sql.replace(DEFAULT_SIZE, f"SELECT {size} AS size"))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        session = open_session(exercise, ["responder"], Path(tmp), time_limit_s=600.0)
        build = time.perf_counter() - start

        def tick() -> float:
            began = time.perf_counter()
            session.advance_to(session.minute + 1)
            return time.perf_counter() - began

        collapse = [tick() for _ in range(minutes)]
        session.execute("responder", GUARD)  # the restart happens at the next minute
        recovery = [tick() for _ in range(minutes)]
        session.end("aborted")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"size": size, "build_s": build, "collapse_ms": statistics.median(collapse) * 1000,
            "recovery_ms": statistics.median(recovery) * 1000, "peak_mib": peak_kib / 1024}


def whole(runs: int) -> float:
    """Median wall time of the whole exercise headless (as-it-happened), default size."""
    script = EXERCISE / "scripts" / "as-it-happened.yaml"
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-m", "raceday", "run", str(EXERCISE), "--script",
                            str(script), "--json", "--transcripts", tmp],
                           check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
            times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--minutes", type=int, default=5)
    parser.add_argument("--whole-runs", type=int, default=1)
    parser.add_argument("--no-whole", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.minutes)))
        return
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--one", str(size), "--minutes",
                              str(args.minutes)], check=True, capture_output=True, text=True,
                             cwd=ROOT)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]
    print(f"one simulated minute of recovery-under-load, median of {args.minutes} minutes each")
    print(f"{'droplets':>10} {'build s':>8} {'collapse ms':>12} {'recovery ms':>12} "
          f"{'peak MiB':>9}   ratios to {base['size']:,}: size, collapse, recovery, memory")
    for row in rows:
        print(f"{row['size']:>10,} {row['build_s']:>8.1f} {row['collapse_ms']:>12.1f} "
              f"{row['recovery_ms']:>12.1f} {row['peak_mib']:>9.0f}   "
              f"{row['size'] / base['size']:.0f}x, {row['collapse_ms'] / base['collapse_ms']:.1f}x,"
              f" {row['recovery_ms'] / base['recovery_ms']:.1f}x,"
              f" {row['peak_mib'] / base['peak_mib']:.1f}x")
    if not args.no_whole:
        seconds = whole(args.whole_runs)
        print(f"whole exercise headless (as-it-happened, 20,000 droplets, with the final "
              f"replay): median {seconds:.1f} s over {args.whole_runs} run(s)")


if __name__ == "__main__":
    main()
