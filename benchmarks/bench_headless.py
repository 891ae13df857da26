"""Wall time of whole headless runs, as a ratio to `python -c pass` measured in the same run,
and (--phases) where one night's time goes.

Usage: python benchmarks/bench_headless.py [--runs N] [--phases]

The runs take turns with `python -c pass` (a busy machine slows both alike), after one
untimed run of each that writes the bytecode an installed raceday has
(PYTHONDONTWRITEBYTECODE is dropped from the children's environment).
"""

from __future__ import annotations

import argparse
import os
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
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# One night in-process, each phase's CPU time (process_time: less shaken by other work).
PHASES = """
import sys, time
from pathlib import Path
c0 = time.process_time()
import raceday.cli
from raceday.commands import load_named_exercise
from raceday.engine.headless import run_script
from raceday.engine.script import load_script
import raceday.engine.session as S
c1 = time.process_time()
exercise = load_named_exercise(sys.argv[1])
script = load_script(Path(sys.argv[2]), exercise)
spent = {}
def timed(name, f):
    def g(*a, **k):
        c = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[name] = spent.get(name, 0) + time.process_time() - c
    return g
S.Session.end = timed("end", S.Session.end)
S.Session.replay = timed("replay", S.Session.replay)
S._add_to_history = timed("history", S._add_to_history)
c2 = time.process_time()
session, _ = run_script(exercise, script, Path(sys.argv[3]))
c3 = time.process_time()
try:  # as `raceday run` does: from the events the session holds (older code: read back)
    raceday.cli._write_debrief(session.folder, session.events)
except TypeError:
    raceday.cli._write_debrief(session.folder)
c4 = time.process_time()
ms = lambda s: f"{s * 1000:.0f}"
print(ms(c1 - c0), ms(c2 - c1), ms(c3 - c2 - spent["end"]), ms(spent.get("replay", 0)),
      ms(spent.get("history", 0)), ms(spent["end"] - spent.get("replay", 0) - spent.get("history", 0)),
      ms(c4 - c3))
"""
PHASE_NAMES = ("imports", "load", "night", "final replay", "history", "rest of end", "debrief")


def wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--phases", action="store_true",
                        help="also: CPU ms per phase of the flagship night (medians)")
    args = parser.parse_args()
    runs = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        commands = {"pass": [sys.executable, "-c", "pass"]}
        for exercise, script in PLAYS:
            if not (ROOT / script).exists():
                print(f"{exercise}: {script} not found, skipped")
                continue
            commands[exercise] = [sys.executable, "-m", "raceday", "run", exercise, "--script",
                                  script, "--json", "--transcripts", tmp]
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():
            wall(command)  # untimed: bytecode written, caches warm
        for _ in range(runs):
            for name, command in commands.items():
                samples[name].append(wall(command))
        baseline = statistics.median(samples["pass"])
        print(f"python -c pass: median {baseline * 1000:.0f} ms over {runs} runs")
        for exercise, script in PLAYS:
            if exercise in samples:
                seconds = statistics.median(samples[exercise])
                print(f"raceday run {exercise} ({Path(script).name}): median "
                      f"{seconds * 1000:.0f} ms = {seconds / baseline:.1f}x python -c pass")
        if args.phases:
            rows = []
            for n in range(runs):
                out = subprocess.run(
                    [sys.executable, "-c", PHASES, "dynamodb-dns-race", PLAYS[1][1],
                     str(Path(tmp) / f"phases-{n}")],
                    check=True, capture_output=True, text=True, cwd=ROOT, env=ENV)
                rows.append([float(x) for x in out.stdout.split()])
            medians = [statistics.median(col) for col in zip(*rows, strict=True)]
            print("as-it-happened, CPU ms per phase (medians): " + ", ".join(
                f"{name} {value:.0f}" for name, value in zip(PHASE_NAMES, medians, strict=True)))


if __name__ == "__main__":
    main()
