"""Wall time of whole headless runs, as a ratio to `python -c pass` measured in the same run.

Usage: python benchmarks/bench_headless.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYS = [
    ("lost-update-basics", "exercises/lost-update-basics/scripts/solo-complete.yaml"),
    ("dynamodb-dns-race", "exercises/dynamodb-dns-race/scripts/as-it-happened.yaml"),
]


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    baseline = median_seconds([sys.executable, "-c", "pass"], runs)
    print(f"python -c pass: median {baseline * 1000:.0f} ms over {runs} runs")
    with tempfile.TemporaryDirectory() as tmp:
        for exercise, script in PLAYS:
            if not (ROOT / script).exists():
                print(f"{exercise}: {script} not found, skipped")
                continue
            command = [sys.executable, "-m", "raceday", "run", exercise, "--script", script,
                       "--json", "--transcripts", tmp]
            seconds = median_seconds(command, runs)
            print(f"raceday run {exercise} ({Path(script).name}): median {seconds * 1000:.0f} ms"
                  f" = {seconds / baseline:.1f}x python -c pass")


if __name__ == "__main__":
    main()
