"""How fast the TUI feels in a real terminal (tmux): start-up, and a 1,000-row result.

1. Launch `raceday play dynamodb-dns-race` in a fresh tmux session and time until the
   briefing is on screen; time a minimal Textual app the same way in the same run (runs
   alternate); print both medians and their ratio (aim: at most 1.3x).
2. In one play session, press the run key and time until a 1,000-row result is on screen
   (the status line says "1,000 rows" under a column name unique to that run); print the
   median (aim: at most 50 ms). Each run includes a simulated minute of automation, as in play.

Run: `python benchmarks/bench_tui.py [--runs N]` (needs tmux). Times are wall-clock from the
moment tmux is asked to start the program (or send the key) to the first capture that shows
the result; captures are polled every ~2 ms, so each figure includes up to that much delay.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SESSION = "raceday-bench"
SIZE = ("120", "40")
MINIMAL_APP = '''
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("MINIMAL READY")

Minimal().run()
'''


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(test: Callable[[str], bool], timeout: float = 30.0) -> float:
    """Seconds until a capture passes `test`."""
    start = time.perf_counter()
    while True:
        if test(screen()):
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"screen never matched; last capture:\n{screen()}")
        time.sleep(0.002)


def kill() -> None:
    tmux("kill-session", "-t", SESSION)


def start(command: str, cwd: Path) -> float:
    """Start `command` in tmux; return the perf_counter at which it was asked to start."""
    kill()
    began = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", SIZE[0], "-y", SIZE[1],
                    "-c", str(cwd), command], check=True)
    return began


def time_until(command: str, marker: str, cwd: Path) -> float:
    began = start(command, cwd)
    while marker not in screen():
        if time.perf_counter() - began > 30:
            raise TimeoutError(f"{marker!r} never appeared:\n{screen()}")
        time.sleep(0.002)
    elapsed = time.perf_counter() - began
    kill()
    return elapsed


def startup(runs: int, cwd: Path) -> tuple[float, float]:
    raceday = shutil.which("raceday") or f"{sys.executable} -m raceday"
    minimal = cwd / "minimal_app.py"
    minimal.write_text(MINIMAL_APP, encoding="utf-8")
    ours: list[float] = []
    base: list[float] = []
    for _ in range(runs):
        base.append(time_until(f"{sys.executable} {minimal}", "MINIMAL READY", cwd))
        ours.append(time_until(f"{raceday} play dynamodb-dns-race", "Briefing ·", cwd))
    return statistics.median(ours), statistics.median(base)


def thousand_rows(runs: int, cwd: Path) -> float:
    raceday = shutil.which("raceday") or f"{sys.executable} -m raceday"
    start(f"{raceday} play dynamodb-dns-race", cwd)
    wait_for(lambda s: "Briefing ·" in s)
    tmux("send-keys", "-t", SESSION, "Enter")
    # what the results panel says once the session is open (a key before then is lost)
    wait_for(lambda s: "F5 run" in s and "Run a statement (F5)" in s)
    times: list[float] = []
    try:
        for run in range(runs + 1):
            column = f"c{run:03d}x"
            sql = (f"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
                   f"LIMIT 1000) SELECT x AS {column}, x * 7 AS y, 'row ' || x AS label "
                   f"FROM n AS tail{run:03d}")
            tmux("send-keys", "-t", SESSION, "C-l")  # the editor's Clear
            time.sleep(0.3)  # not timed: let the editor empty
            tmux("send-keys", "-t", SESSION, "-l", sql)
            wait_for(lambda s, r=run: f"tail{r:03d}" in s)
            began = time.perf_counter()
            tmux("send-keys", "-t", SESSION, "F5")
            while True:
                shown = screen()
                if "1,000 rows" in shown and column in shown.split("1,000 rows", 1)[1]:
                    break
                if time.perf_counter() - began > 30:
                    raise TimeoutError(shown)
                time.sleep(0.002)
            if run:  # the first run warms caches
                times.append(time.perf_counter() - began)
    finally:
        kill()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", choices=["startup", "rows"], default=None,
                        help="time one of the two (default: both)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("bench_tui: tmux is not installed", file=sys.stderr)
        return 2
    os.environ.setdefault("TERM", "xterm-256color")
    with tempfile.TemporaryDirectory(prefix="raceday-bench-") as scratch:
        cwd = Path(scratch)
        if args.only in (None, "startup"):
            ours, base = startup(args.runs, cwd)
            print(f"start-up to briefing: raceday {ours * 1000:.0f} ms, minimal Textual app "
                  f"{base * 1000:.0f} ms, ratio {ours / base:.2f}x (median of {args.runs}; "
                  "aim <= 1.3x)")
        if args.only in (None, "rows"):
            rows = thousand_rows(args.runs, cwd)
            print(f"run key to 1,000-row result on screen: median {rows * 1000:.0f} ms "
                  f"(of {args.runs}; aim <= 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
