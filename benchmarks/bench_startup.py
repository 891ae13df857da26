"""How fast raceday starts: the CLI's cheap commands, loading exercises, importing the CLI.

Each figure is a median over fresh processes, printed next to its ratio to `python -c pass`
measured in the same run (runs alternate, so a busy machine slows all of them alike):

- `raceday --version` and `raceday list`: wall time of the whole process;
- import of raceday.cli: wall time of `python -c "import raceday.cli"`;
- loading each bundled exercise: `load_exercise(folder)` timed inside a fresh process (so
  the figure is the load alone, imports excluded), once with an empty SQL-check cache
  ("cold": every statement is compiled against the world) and once with the cache filled
  by the previous run ("warm").

Usage: python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOAD_ONE = """
import json, sys, time
from pathlib import Path
import raceday.exercise.loader as loader
started = time.perf_counter()
loader.load_exercise(Path(sys.argv[1]))
print(json.dumps(time.perf_counter() - started))
"""


def raceday_command() -> list[str]:
    script = Path(sys.executable).with_name("raceday")
    return [str(script)] if script.exists() else [sys.executable, "-m", "raceday"]


def wall(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=env)
    return time.perf_counter() - started


def in_process(command: list[str], env: dict[str, str]) -> float:
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT, env=env)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def bundled_exercises() -> list[Path]:
    folder = ROOT / "src" / "raceday" / "bundled"
    return sorted(p for p in folder.iterdir() if (p / "exercise.yaml").is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    raceday = raceday_command()
    exercises = bundled_exercises()

    with tempfile.TemporaryDirectory(prefix="raceday-bench-") as scratch:
        cold_env = dict(os.environ, RACEDAY_CACHE_DIR=str(Path(scratch) / "cold"))
        warm_env = dict(os.environ, RACEDAY_CACHE_DIR=str(Path(scratch) / "warm"))
        for folder in exercises:  # fill the warm cache once
            in_process([sys.executable, "-c", LOAD_ONE, str(folder)], warm_env)

        timed: dict[str, tuple[str, list[str], dict[str, str]]] = {
            "python -c pass": ("wall", [sys.executable, "-c", "pass"], cold_env),
            "raceday --version": ("wall", [*raceday, "--version"], warm_env),
            "raceday list": ("wall", [*raceday, "list"], warm_env),
            "import raceday.cli": ("wall", [sys.executable, "-c", "import raceday.cli"], cold_env),
        }
        for folder in exercises:
            command = [sys.executable, "-c", LOAD_ONE, str(folder)]
            timed[f"load {folder.name} (cold)"] = ("in", command, cold_env)
            timed[f"load {folder.name} (warm)"] = ("in", command, warm_env)

        samples: dict[str, list[float]] = {name: [] for name in timed}
        for _ in range(runs):
            for name, (how, command, env) in timed.items():
                if name.endswith("(cold)"):
                    _empty(Path(env["RACEDAY_CACHE_DIR"]))
                measure = wall if how == "wall" else in_process
                samples[name].append(measure(command, env))

    base = statistics.median(samples["python -c pass"])
    print(f"median of {runs} runs each; ratios are to python -c pass ({base * 1000:.1f} ms)")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:<38} {median * 1000:7.1f} ms  {median / base:6.2f}x")
    return 0


def _empty(folder: Path) -> None:
    if folder.is_dir():
        for child in sorted(folder.rglob("*"), reverse=True):
            if child.is_dir():
                child.rmdir()
            else:
                child.unlink()


if __name__ == "__main__":
    raise SystemExit(main())
