"""A team session under load: a host and 8 scripted seats, each its own process, each
running a statement every few seconds for a simulated hour at live pace (60x: one real
minute). Reports p50/p95 from a statement's submission to its result at the issuing seat,
and to its event at every other seat, and the host's CPU time and peak memory.

Each seat follows the session the way `raceday join` does: a `PRAGMA data_version` every
10 ms, then the new events and its commands' outcomes, and beats every 2 s. With `--teams T`
one facilitator's host runs T teams of `--seats` seats each on one clock (in one thread);
"every other seat" is then every other seat of the same team.

Usage: python benchmarks/bench_team.py [--seats 8] [--teams 1] [--seconds 60] [--every 3]
       [--speed 60]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEAT_ROLES = ("responder", "enactor-a", "enactor-b", "responder", "enactor-c", "responder",
              "planner", "responder", "responder", "responder")
QUERIES = {
    "responder": "SELECT endpoint, count(*) FROM dns_answer GROUP BY endpoint",
    "enactor-a": "SELECT name, active_plan_id FROM endpoint",
    "enactor-b": "SELECT max(id) AS plan FROM plan",
    "enactor-c": "SELECT max(id) AS plan FROM plan",
    "planner": "SELECT count(*) FROM plan_record",
}
FOLLOW_SECONDS = 0.01


def host_process(seats: list[tuple[str, str]], teams: int, speed: float, seconds: float,
                 folder_out: Any, tokens_out: Any, stats_out: Any, transcripts: str) -> None:
    from raceday.commands import load_named_exercise
    from raceday.engine.clock import Pace
    from raceday.team.group import Teams, TeamSpec
    from raceday.team.host import Host
    from raceday.team.seats import SeatSpec

    exercise = load_named_exercise("dynamodb-dns-race")
    specs = tuple(SeatSpec(n, r) for n, r in seats)
    runner: Host | Teams
    if teams == 1:  # one team, as `raceday host` without --teams
        host = Host(exercise, specs, transcripts=Path(transcripts), pace=Pace.LIVE, speed=speed)
        host.start()
        hosts = {"team1": host}
        runner = host
    else:
        group = Teams(exercise, [TeamSpec(f"team{t + 1}", specs) for t in range(teams)],
                      transcripts=Path(transcripts), pace=Pace.LIVE, speed=speed)
        group.start()
        hosts = group.hosts
        runner = group
    tokens_out.put({f"{t}/{s.name}": s.token for t, h in hosts.items() for s in h.seats.values()})
    folder_out.put({t: str(h.folder) for t, h in hosts.items()})
    stop = threading.Event()
    thread = threading.Thread(target=runner.run, args=(stop,), daemon=True)
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    thread.start()
    time.sleep(seconds + 3)  # the seats' last answers, then stop
    stop.set()
    thread.join()
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    first = next(iter(hosts.values()))
    stats_out.put({"cpu_s": cpu, "wall_s": elapsed, "maxrss_mb": after.ru_maxrss / 1024,
                   "commands": sum(h.commands_done for h in hosts.values()),
                   "minute": first.need().minute})
    for host in hosts.values():
        host.end("benchmark over")
        host.close()


def seat_process(team: str, folder: str, seat: str, role: str, token: str, seconds: float,
                 every: float, start_at: float, out: Any) -> None:
    from raceday.team.client import BEAT_SECONDS, Client, Heartbeat
    from raceday.transcript import events as ev

    client = Client(Path(folder), token, seat)
    client.wait(client.join(beat=BEAT_SECONDS))
    heartbeat = Heartbeat(client).start()
    client.new_events()
    rng = random.Random(seat)
    issued: dict[int, tuple[str, float]] = {}
    submitted: dict[str, float] = {}
    to_result: list[float] = []
    seen: dict[str, float] = {}
    next_at = start_at + rng.uniform(0, every)
    n = 0
    while time.time() < start_at + seconds or issued:
        now = time.time()
        if now >= next_at and now < start_at + seconds:
            n += 1
            tag = f"{team}-{seat}-{n}"
            sql = f"{QUERIES[role]} /* {tag} */"
            sent = time.time()
            issued[client.submit("sql", {"sql": sql})] = (tag, sent)
            submitted[tag] = sent
            next_at = now + every * rng.uniform(0.5, 1.5)
        if client.changed():
            got = time.time()
            for event in client.new_events():
                if isinstance(event, ev.Statement) and "/* " in event.sql:
                    seen.setdefault(event.sql.rsplit("/* ", 1)[1].rstrip(" */"), got)
            for command_id, (_tag, sent) in list(issued.items()):
                row = client.outcome(command_id)
                if row is not None:
                    to_result.append(got - sent)
                    del issued[command_id]
        elif time.time() > start_at + seconds + 10:
            break  # the host is gone: give up on what is left
        time.sleep(FOLLOW_SECONDS)
    heartbeat.stop()
    client.close()
    out.put({"team": team, "seat": seat, "to_result": to_result, "seen": seen, "submitted": submitted})


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--teams", type=int, default=1,
                        help="teams of --seats seats each, one host for all")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="real seconds to run (60 at 60x is a simulated hour)")
    parser.add_argument("--every", type=float, default=3.0,
                        help="mean real seconds between one seat's statements")
    parser.add_argument("--speed", type=float, default=60.0)
    args, _ = parser.parse_known_args()
    seats = [(f"seat{i + 1}", SEAT_ROLES[i % len(SEAT_ROLES)]) for i in range(args.seats)]
    ctx = mp.get_context("spawn")
    folder_q: Any = ctx.Queue()
    tokens_q: Any = ctx.Queue()
    stats_q: Any = ctx.Queue()
    results_q: Any = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        host = ctx.Process(target=host_process, args=(seats, args.teams, args.speed,
                                                      args.seconds + 2, folder_q, tokens_q,
                                                      stats_q, tmp))
        host.start()
        tokens = tokens_q.get(timeout=60)
        folders = folder_q.get(timeout=60)
        start_at = time.time() + 2
        clients = [ctx.Process(target=seat_process,
                               args=(team, folder, name, role, tokens[f"{team}/{name}"],
                                     args.seconds, args.every, start_at, results_q))
                   for team, folder in folders.items() for name, role in seats]
        for client in clients:
            client.start()
        results = [results_q.get(timeout=args.seconds + 120) for _ in clients]
        stats = stats_q.get(timeout=120)
        for process in (*clients, host):
            process.join(timeout=30)
    submitted = {tag: t for r in results for tag, t in r["submitted"].items()}
    to_result = [x for r in results for x in r["to_result"]]
    to_event = [got - submitted[tag] for r in results for tag, got in r["seen"].items()
                if tag in submitted and tag not in r["submitted"]]
    n_seats = args.seats * args.teams
    print(f"{args.teams} team(s) of {args.seats} seats, beating every 2 s")
    print(f"{n_seats} seats, {stats['commands'] - n_seats} statements in {args.seconds:g} s real at "
          f"{args.speed:g}x (the clock reached minute {stats['minute']}); one statement per "
          f"seat every ~{args.every:g} s")
    print(f"submission -> result at the issuing seat: p50 {pct(to_result, .5) * 1000:.0f} ms, "
          f"p95 {pct(to_result, .95) * 1000:.0f} ms (n={len(to_result)})")
    print(f"submission -> event at every other seat: p50 {pct(to_event, .5) * 1000:.0f} ms, "
          f"p95 {pct(to_event, .95) * 1000:.0f} ms (n={len(to_event)})")
    print(f"host: {stats['cpu_s']:.1f} s CPU over {stats['wall_s']:.0f} s "
          f"({100 * stats['cpu_s'] / stats['wall_s']:.0f}% of a core), peak RSS "
          f"{stats['maxrss_mb']:.0f} MB")
    if to_result:
        print(f"mean submission -> result {statistics.mean(to_result) * 1000:.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
