"""One player action in turns pace, in-process: what the TUI's worker does per F5.

A statement (the responder's example query) through `Session.execute`, which moves the clock
one simulated minute (the automation's writes, the world's checks, the monitors), then the
world panel's read (`take_snapshot`, onboarding's panel), timed apart. The flagship world and
the same with 10k more endpoints (common.large_world) are played side by side, the two taking
turns action by action, over the first `--minutes` minutes of the night (each minute is one
action; odd minutes the Planner writes a generation, even ones the Enactors apply and clean up).

    python benchmarks/bench_minute.py [--minutes N] [--extra N] [--stopped] [--profile FILE]

`--stopped`: the responder first switches the automation off (the kill switch), so that
nothing writes the world but the players: then an action should cost what the player's own
query costs, whatever the world's size (the checks and the panel are answered as they were).

Prints the median and the max per action of each (wall clock; `cpu` is the thread's CPU
time, steadier on a busy machine), and their ratio. `--profile FILE` writes a
cProfile of the large world's actions (pstats) and prints its top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import FLAGSHIP, large_world  # noqa: E402

from raceday.engine.headless import open_session  # noqa: E402
from raceday.engine.load import load_exercise  # noqa: E402
from raceday.engine.session import Session  # noqa: E402
from raceday.engine.snapshot import WorldPlan, take_snapshot  # noqa: E402

ROLE = "responder"


def opened(folder: Path, transcripts: Path, stopped: bool) -> tuple[Session, WorldPlan, str]:
    exercise = load_exercise(folder)
    session = open_session(exercise, [ROLE], transcripts, time_limit_s=5.0)
    if stopped:
        session.execute(ROLE, "UPDATE automation SET enabled = 0")
    plan = WorldPlan.for_exercise(session.exercise, session.store.tables(), onboarding=True)
    take_snapshot(session, plan, tables=True)
    example = exercise.role(ROLE).example.strip()
    return session, plan, example


def one_action(session: Session, plan: WorldPlan, sql: str) -> tuple[float, float, float]:
    """(seconds in execute, seconds in the snapshot, CPU seconds of both) of one F5."""
    cpu = time.thread_time()
    began = time.perf_counter()
    session.execute(ROLE, sql)
    ran = time.perf_counter()
    take_snapshot(session, plan)
    return ran - began, time.perf_counter() - ran, time.thread_time() - cpu


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=int, default=20)
    parser.add_argument("--extra", type=int, default=10_000)
    parser.add_argument("--stopped", action="store_true")
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="raceday-minute-") as scratch_name:
        scratch = Path(scratch_name)
        large = large_world(scratch / "worlds", args.extra)
        worlds = {"base": FLAGSHIP, "large": large}
        sessions = {name: opened(folder, scratch / f"t-{name}", args.stopped)
                    for name, folder in worlds.items()}
        got: dict[str, dict[str, list[float]]] = {
            name: {"execute": [], "snapshot": [], "action": [], "cpu": []} for name in worlds}
        profiler = cProfile.Profile() if args.profile else None
        for _ in range(args.minutes):
            for name, (session, plan, sql) in sessions.items():
                if profiler is not None and name == "large":
                    profiler.enable()
                run, snap, cpu = one_action(session, plan, sql)
                if profiler is not None and name == "large":
                    profiler.disable()
                got[name]["execute"].append(run)
                got[name]["snapshot"].append(snap)
                got[name]["action"].append(run + snap)
                got[name]["cpu"].append(cpu)
        for session, _plan, _sql in sessions.values():
            session.close()
    for name in worlds:
        parts = ", ".join(f"{part} {ms(statistics.median(v))} (max {ms(max(v))})"
                          for part, v in got[name].items())
        print(f"{name:5}  {parts}")
    base = statistics.median(got["base"]["action"])
    big = statistics.median(got["large"]["action"])
    cpu_base = statistics.median(got["base"]["cpu"])
    cpu_big = statistics.median(got["large"]["cpu"])
    print(f"one action, {args.extra} more endpoints vs base: {ms(big)} vs {ms(base)}, "
          f"{big / base:.2f}x (CPU {ms(cpu_big)} vs {ms(cpu_base)})")
    if profiler is not None:
        profiler.dump_stats(str(args.profile))
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
