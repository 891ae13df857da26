"""How fast raceday starts: the CLI's cheap commands, importing the CLI, loading exercises.

Every figure is the median over fresh processes, printed with its ratio to `python -c pass`
measured in the same run (the commands take turns, so a busy machine slows all alike):

- `raceday --version`, `raceday list`: wall time of the whole process;
- import raceday.cli: wall time of `python -c "import raceday.cli"`; import
  raceday.commands likewise (what `raceday play` imports before loading the exercise);
- load EXERCISE: `load_exercise(folder)` timed inside a fresh process whose imports are
  done, so the figure is the load alone (YAML, checks, the world built in memory and every
  statement compiled against it), as the first load of a `raceday play` does it.

Python caches compiled modules in __pycache__ unless PYTHONDONTWRITEBYTECODE is set; when it
is, every raceday module is compiled again in every process, and the figures include that.

Usage: python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOAD_ONE = """
import sys, time
from pathlib import Path
from raceday.engine.load import load_exercise
started = time.perf_counter()
load_exercise(Path(sys.argv[1]))
print(time.perf_counter() - started)
"""


def raceday_command() -> list[str]:
    script = Path(sys.executable).with_name("raceday")
    return [str(script)] if script.exists() else [sys.executable, "-m", "raceday"]


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - started


def in_process(command: list[str]) -> float:
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def bundled_exercises() -> list[Path]:
    folder = ROOT / "src" / "raceday" / "bundled"
    return sorted(p for p in folder.iterdir() if (p / "exercise.yaml").is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    raceday = raceday_command()
    python = sys.executable

    timed: dict[str, tuple[bool, list[str]]] = {  # name: (timed inside the process, command)
        "python -c pass": (False, [python, "-c", "pass"]),
        "raceday --version": (False, [*raceday, "--version"]),
        "raceday list": (False, [*raceday, "list"]),
        "import raceday.cli": (False, [python, "-c", "import raceday.cli"]),
        "import raceday.commands": (False, [python, "-c", "import raceday.commands"]),
    }
    for folder in bundled_exercises():
        timed[f"load {folder.name} (in-process)"] = (True, [python, "-c", LOAD_ONE, str(folder)])

    samples: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(runs):
        for name, (inside, command) in timed.items():
            samples[name].append(in_process(command) if inside else wall(command))

    base = statistics.median(samples["python -c pass"])
    bytecode = "off" if sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"median of {runs} runs; ratio to python -c pass ({base * 1000:.1f} ms); "
          f"bytecode cache {bytecode}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:<40} {median * 1000:7.1f} ms  {median / base:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
