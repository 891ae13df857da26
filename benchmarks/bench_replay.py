"""The replay step of replay-guarded.yaml, first in a process, cold and warm, A/B.

    python benchmarks/bench_replay.py [--runs N] [--against SRC] [--script NAME] [--tui]

Each run is a fresh process (bytecode cached, as installed) that plays the script up to its
replay step, then times three replays (wall and CPU). "cold": a fresh RACEDAY_CACHE_DIR,
nothing cached on disk; "warm": a cache folder shared by the runs (the normal night of the
original world is cached there by an untimed first run, as after any earlier replay of this
exercise with this code on this machine). The CPU figure counts the children too: the normal
nights are played in forked children while the race plays (`raceday.engine.aside`).
`--against /work/main/src` runs that checkout's code too, the two taking turns, so a machine
shared with other work slows both alike.
Prints medians of wall and CPU.

`--tui`: in tmux (120x40), `raceday play dynamodb-dns-race`, Enter, then ctrl+r to the replay
screen on the fresh world, three presses (Escape between): the first press, cold and warm as
above, and the later ones.
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
FLAGSHIP = ROOT / "exercises" / "dynamodb-dns-race"

STEP = """
import os, sys, time
from pathlib import Path
from raceday.engine.headless import open_session, play_step
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
exercise = load_exercise(Path(sys.argv[1]))
script = load_script(Path(sys.argv[2]), exercise)
session = open_session(exercise, script.roles, Path(sys.argv[3]))
for step in script.steps:
    if step.action == "replay":
        break
    play_step(session, step, "bench")
def cpu():  # this process's and its children's (the nights played aside), once reaped
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
figures = []
for _ in range(3):
    wall, used = time.perf_counter(), cpu()
    session.replay()
    figures += [time.perf_counter() - wall, cpu() - used]
print(*figures)
"""


def run_once(src: Path | None, script: Path, folder: Path, cache: Path,
             pycache: Path) -> list[float]:
    # bytecode cached as an installed raceday has it (in a folder of the run's own, so no
    # checkout is written to)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(RACEDAY_CACHE_DIR=str(cache), PYTHONPYCACHEPREFIX=str(pycache))
    if src is not None:
        env["PYTHONPATH"] = str(src)
    out = subprocess.run([sys.executable, "-c", STEP, str(FLAGSHIP), str(script), str(folder)],
                         check=True, capture_output=True, text=True, env=env)
    return [float(x) for x in out.stdout.strip().splitlines()[-1].split()]


def tui_once(src: Path | None, folder: Path, cache: Path, pycache: Path) -> list[float]:
    """ctrl+r to the replay screen: the first press and two more (seconds)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import Tmux

    env = [f"RACEDAY_CACHE_DIR={cache}", f"PYTHONPYCACHEPREFIX={pycache}"]
    if src is not None:
        env.append(f"PYTHONPATH={src}")
    folder.mkdir(parents=True)
    tmux = Tmux("raceday-bench-replay-tui")
    command = (f"env -u PYTHONDONTWRITEBYTECODE {' '.join(env)} {sys.executable} -m raceday "
               "play dynamodb-dns-race")
    began = tmux.start(command, folder)
    times = []
    try:
        tmux.until(lambda s: "Briefing ·" in s, began)
        tmux.until(lambda s: "Run a statement (F5)" in s, tmux.keys("Enter"))
        for _ in range(3):
            at = tmux.keys("C-r")
            times.append(tmux.until(lambda s: "The replay begins" in s, at))
            time.sleep(0.3)
            tmux.until(lambda s: "F5 run" in s and "The replay begins" not in s,
                       tmux.keys("Escape"))
            time.sleep(0.3)
    finally:
        tmux.kill()
    return times


def tui(codes: dict[str, Path | None], runs: int, scratch: Path) -> None:
    samples: dict[tuple[str, str], list[list[float]]] = {}
    for name, src in codes.items():  # untimed: fills each code's caches
        tui_once(src, scratch / f"tui-prime-{name}", scratch / f"warm-{name}",
                 scratch / f"pycache-{name}")
    for n in range(runs):
        for name, src in codes.items():
            for mode in ("cold", "warm"):
                cache = scratch / (f"cold-{name}-tui-{n}" if mode == "cold" else f"warm-{name}")
                got = tui_once(src, scratch / f"tui-{name}-{mode}-{n}", cache,
                               scratch / f"pycache-{name}")
                samples.setdefault((name, mode), []).append(got)
    for (name, mode), got in samples.items():
        first = statistics.median(r[0] for r in got) * 1000
        later = statistics.median(x for r in got for x in r[1:]) * 1000
        print(f"{name:>5} {mode}: ctrl+r first press {first:4.0f} ms, later presses "
              f"{later:4.0f} ms  [{len(got)} runs]")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout's src folder (A/B)")
    parser.add_argument("--script", default="replay-guarded.yaml")
    parser.add_argument("--tui", action="store_true", help="ctrl+r in the TUI instead")
    args = parser.parse_args()
    script = FLAGSHIP / "scripts" / args.script
    codes: dict[str, Path | None] = {"this": None}
    if args.against is not None:
        codes["other"] = args.against.resolve()
    samples: dict[tuple[str, str], list[list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="raceday-bench-replay-") as tmp:
        scratch = Path(tmp)
        if args.tui:
            tui(codes, args.runs, scratch)
            return 0
        for name, src in codes.items():  # untimed: fills each code's caches
            run_once(src, script, scratch / f"prime-{name}", scratch / f"warm-{name}",
                     scratch / f"pycache-{name}")
        for n in range(args.runs):
            for name, src in codes.items():
                for mode in ("cold", "warm"):
                    cache = scratch / (f"cold-{name}-{n}" if mode == "cold" else f"warm-{name}")
                    got = run_once(src, script, scratch / f"{name}-{mode}-{n}", cache,
                                   scratch / f"pycache-{name}")
                    samples.setdefault((name, mode), []).append(got)
    for (name, mode), runs in samples.items():
        first_wall = statistics.median(r[0] for r in runs) * 1000
        first_cpu = statistics.median(r[1] for r in runs) * 1000
        again_wall = statistics.median(x for r in runs for x in (r[2], r[4])) * 1000
        again_cpu = statistics.median(x for r in runs for x in (r[3], r[5])) * 1000
        print(f"{name:>5} {mode}: first {first_wall:4.0f} ms (cpu {first_cpu:4.0f}), "
              f"again {again_wall:3.0f} ms (cpu {again_cpu:3.0f})  [{len(runs)} runs]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
