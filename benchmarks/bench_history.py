"""What the history costs: indexing one session at its end, and `raceday history` reading it.

- index at end: `record_session` on the flagship's textbook play (its events in memory, as
  `Session.end` passes them), into an existing history.db; the ratio is to the whole
  headless run of that play measured here once (so the share of a session's end it takes);
- rebuild N: `rebuild` of a transcripts folder of N copies of that session (every transcript
  read and validated again, as after history.db was deleted);
- history: `print_history` over those N sessions (sync finds nothing new, then the charts).

Usage: python benchmarks/bench_history.py [--runs N] [--sessions N]
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.history.index import rebuild, record_session
from raceday.history.report import print_history
from raceday.transcript.log import read_events

ROOT = Path(__file__).resolve().parent.parent
FLAGSHIP = ROOT / "exercises" / "dynamodb-dns-race"


def median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sessions", type=int, default=50)
    args = parser.parse_args()
    exercise = load_exercise(FLAGSHIP)
    script = load_script(FLAGSHIP / "scripts" / "textbook.yaml", exercise)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t"
        start = time.perf_counter()
        session, _ = run_script(exercise, script, root)
        whole = (time.perf_counter() - start) * 1000
        events = read_events(session.folder).events
        index = median_ms(lambda: record_session(session.folder, events), args.runs)
        print(f"index at end   {index:8.1f} ms median  ({index / whole:.3f} of the whole "
              f"headless run, {whole:.0f} ms)")
        for n in range(1, args.sessions):
            shutil.copytree(session.folder, root / f"{session.folder.name}-{n:03d}")
        again = median_ms(lambda: rebuild(root), max(3, args.runs // 5))
        print(f"rebuild {args.sessions:<6} {again:8.1f} ms median  "
              f"({again / args.sessions:.1f} ms a session)")
        out = Console(file=io.StringIO(), width=120)
        shown = median_ms(lambda: print_history(root, out), args.runs)
        print(f"history {args.sessions:<6} {shown:8.1f} ms median")


if __name__ == "__main__":
    main()
