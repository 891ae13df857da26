"""The slow tests of a run, as tests/slow.txt lists them: those that took `--threshold`
seconds or more (set-up, call and tear-down together) in pytest's `--durations` report.

    .venv/bin/python -m pytest --durations=0 --durations-min=1 > run.log   # the whole suite
    .venv/bin/python -m pytest -m "not slow" --durations=0 > inner.log      # the inner loop
    python benchmarks/slow_tests.py run.log inner.log [--threshold 2] [--write]

Prints the tests at or over the threshold in any of the logs, beside those tests/slow.txt
lists already; with --write, tests/slow.txt gets the union (a test once slow stays listed
until it is taken out by hand). A function all of whose cases are slow is listed by its name;
a file all of whose tests are, by its path. The inner loop's log matters: a test that reads a
night another test plays (the reference plays) is quick where the other played it first, and
pays for the night where that other is left out.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "slow.txt"
LINE = re.compile(r"^(\d+\.\d+)s (?:setup|call|teardown)\s+(\S.*)$")


def durations(log: Path) -> dict[str, float]:
    """Each test's seconds in the log (its xdist group's `@name` cut off)."""
    took: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        found = LINE.match(line.strip())
        if found:
            took[found.group(2).split("@")[0]] += float(found.group(1))
    return took


def collected() -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-o",
                           "addopts=", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    return [line for line in done.stdout.splitlines() if "::" in line]


def listed() -> list[str]:
    if not LIST.exists():
        return []
    return [line.strip() for line in LIST.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def covers(entry: str, test: str) -> bool:
    return test == entry or test.startswith((entry + "::", entry + "["))


def collapse(slow: set[str], every: list[str]) -> list[str]:
    """The fewest entries that name exactly the slow tests among `every`."""
    def function(test: str) -> str:
        return test.split("[")[0]

    by_function: dict[str, list[str]] = defaultdict(list)
    for test in every:
        by_function[function(test)].append(test)
    entries = set()
    for name, tests in by_function.items():
        hit = [t for t in tests if t in slow]
        if hit and len(hit) == len(tests):
            entries.add(name)
        else:
            entries.update(hit)
    by_file: dict[str, list[str]] = defaultdict(list)
    for test in every:
        by_file[test.split("::")[0]].append(test)
    for path, tests in by_file.items():
        if all(any(covers(e, t) for e in entries) for t in tests):
            entries = {e for e in entries if not covers(path, e)} | {path}
    return sorted(entries)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--threshold", type=float, default=2.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    every = collected()
    old = listed()
    slow = {t for log in args.logs for t, s in durations(log).items() if s >= args.threshold}
    slow |= {t for t in every if any(covers(e, t) for e in old)}
    entries = collapse({t for t in slow if t in every}, every)
    new = [e for e in entries if e not in old]
    print(f"{len(entries)} entries ({len(slow)} tests of {len(every)}); new: {len(new)}")
    for entry in new:
        print(f"  + {entry}")
    if args.write:
        head = [line for line in (LIST.read_text(encoding="utf-8").splitlines()
                                  if LIST.exists() else []) if line.startswith("#")]
        LIST.write_text("\n".join([*head, *entries]) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
