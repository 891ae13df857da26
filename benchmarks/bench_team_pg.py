"""Team play across machines under load: one host meeting 20 scripted seats in PostgreSQL
(`raceday host --db`: the world and the meeting both on the server), each seat its own
process joined by the session's address, woken by LISTEN/NOTIFY.

Two phases. Live pace (60x): each seat runs a statement every few seconds, beats every 2 s;
reports p50/p95 from a statement's submission to its event at every other seat (the aim:
p95 <= 200 ms) and to its result at the issuing seat. Then a flood: every seat sends its next
statement as soon as its last one is answered; reports the statements per second the host
sustains. bench_team.py is the same on SQLite (one machine, session.db).

Usage: python benchmarks/bench_team_pg.py [--db postgresql://...] [--seats 20]
       [--seconds 40] [--every 3] [--flood 15] [--speed 60] [--world postgres|sqlite]
(default DSN: RACEDAY_TEST_PG_DSN). Without a server it says so and exits 0.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_team import QUERIES, SEAT_ROLES, pct  # noqa: E402

AIM_P95_MS = 200.0


def host_process(dsn: str, world: str, seats: list[tuple[str, str]], speed: float,
                 seconds: float, info_out: Any, stats_out: Any, transcripts: str,
                 done: Any) -> None:
    from raceday.commands import load_named_exercise
    from raceday.engine.clock import Pace
    from raceday.store import DB_VARIABLE
    from raceday.team.host import Host
    from raceday.team.seats import SeatSpec

    if world == "postgres":
        os.environ[DB_VARIABLE] = dsn  # the world on PostgreSQL too, as `raceday host --db`
    else:
        os.environ.pop(DB_VARIABLE, None)  # the meeting alone on PostgreSQL: its own cost
    exercise = load_named_exercise("dynamodb-dns-race")
    host = Host(exercise, tuple(SeatSpec(n, r) for n, r in seats), transcripts=Path(transcripts),
                pace=Pace.LIVE, speed=speed, meeting=dsn, time_limit_s=5.0)
    host.start()
    info_out.put({"address": host.where, "folder": str(host.folder),
                  "tokens": {s.name: s.token for s in host.seats.values()}})
    stop = threading.Event()
    thread = threading.Thread(target=host.run, args=(stop,), daemon=True)
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    thread.start()
    done.wait(seconds)  # every seat has reported (or the time is up)
    stop.set()
    thread.join()
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats_out.put({"cpu_s": cpu, "wall_s": elapsed, "maxrss_mb": after.ru_maxrss / 1024,
                   "commands": host.commands_done, "minute": host.need().minute})
    host.end("benchmark over")
    host.close()


def seat_process(address: str, seat: str, role: str, token: str, seconds: float, every: float,
                 flood: float, start_at: float, out: Any) -> None:
    from raceday.team.client import BEAT_SECONDS, Client, Heartbeat
    from raceday.transcript import events as ev

    client = Client(address, token, seat)
    client.wait(client.join(beat=BEAT_SECONDS), timeout=120)
    heartbeat = Heartbeat(client).start()
    client.new_events()
    rng = random.Random(seat)
    issued: dict[int, tuple[str, float]] = {}
    submitted: dict[str, float] = {}
    to_result: list[float] = []
    seen: dict[str, float] = {}
    live_end = start_at + seconds
    flood_end = live_end + flood
    flooded = 0
    next_at = start_at + rng.uniform(0, every)
    n = 0

    def send(now: float) -> None:
        nonlocal n
        n += 1
        tag = f"{seat}-{n}"
        sent = time.time()
        issued[client.submit("sql", {"sql": f"{QUERIES[role]} /* {tag} */"})] = (tag, sent)
        if now < live_end:
            submitted[tag] = sent

    while True:
        now = time.time()
        if now < live_end and now >= next_at and now >= start_at:
            send(now)
            next_at = now + every * rng.uniform(0.5, 1.5)
        elif live_end <= now < flood_end and not issued:
            send(now)  # the flood: the next statement as soon as the last is answered
        if client.changed():
            got = time.time()
            for event in client.new_events():
                if isinstance(event, ev.Statement) and "/* " in event.sql:
                    seen.setdefault(event.sql.rsplit("/* ", 1)[1].rstrip(" */"), got)
            for command_id, (tag, sent) in list(issued.items()):
                if client.outcome(command_id) is not None:
                    del issued[command_id]
                    if tag in submitted:
                        to_result.append(got - sent)
                    elif got <= flood_end:
                        flooded += 1
        elif now >= flood_end and (not issued or now > flood_end + 20):
            break
        elif not (live_end <= now < flood_end and not issued):
            client.idle(0.25)  # until the host's NOTIFY (a statement due waits for it too)
    heartbeat.stop()
    client.close()
    out.put({"seat": seat, "to_result": to_result, "seen": seen, "submitted": submitted,
             "flooded": flooded})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=os.environ.get("RACEDAY_TEST_PG_DSN"))
    parser.add_argument("--seats", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=40.0,
                        help="real seconds at live pace")
    parser.add_argument("--every", type=float, default=3.0,
                        help="mean real seconds between one seat's statements at live pace")
    parser.add_argument("--flood", type=float, default=15.0,
                        help="real seconds of back-to-back statements (the host's rate)")
    parser.add_argument("--speed", type=float, default=60.0)
    parser.add_argument("--world", choices=["postgres", "sqlite"], default="postgres",
                        help="where the host's world is (the meeting is on PostgreSQL either "
                             "way); sqlite shows what LISTEN/NOTIFY alone costs")
    args, _ = parser.parse_known_args()
    if not args.db:
        print("no PostgreSQL: pass --db postgresql://... or set RACEDAY_TEST_PG_DSN; skipped")
        return 0
    seats = [(f"seat{i + 1}", SEAT_ROLES[i % len(SEAT_ROLES)]) for i in range(args.seats)]
    ctx = mp.get_context("spawn")
    info_q: Any = ctx.Queue()
    stats_q: Any = ctx.Queue()
    results_q: Any = ctx.Queue()
    done = ctx.Event()
    run_for = args.seconds + args.flood + 40
    with tempfile.TemporaryDirectory() as tmp:
        host = ctx.Process(target=host_process, args=(args.db, args.world, seats, args.speed,
                                                      run_for, info_q, stats_q, tmp, done))
        host.start()
        info = info_q.get(timeout=120)
        start_at = time.time() + 20  # every seat started, joined and listening
        clients = [ctx.Process(target=seat_process,
                               args=(info["address"], name, role, info["tokens"][name],
                                     args.seconds, args.every, args.flood, start_at, results_q))
                   for name, role in seats]
        for client in clients:
            client.start()
        results = [results_q.get(timeout=run_for + 120) for _ in clients]
        done.set()
        stats = stats_q.get(timeout=120)
        for process in (*clients, host):
            process.join(timeout=300)  # the host scores the night before its world goes
        _drop(args.db, info["address"], Path(info["folder"]))
    submitted = {tag: t for r in results for tag, t in r["submitted"].items()}
    to_result = [x for r in results for x in r["to_result"]]
    to_event = [got - submitted[tag] for r in results for tag, got in r["seen"].items()
                if tag in submitted and tag not in r["submitted"]]
    flooded = sum(r["flooded"] for r in results)
    p50, p95 = pct(to_event, .5) * 1000, pct(to_event, .95) * 1000
    where = "world and meeting" if args.world == "postgres" else "meeting; the world in SQLite"
    print(f"{args.seats} seats on PostgreSQL ({where}), beating every 2 s, woken by "
          "LISTEN/NOTIFY")
    print(f"live pace: {len(submitted)} statements in {args.seconds:g} s real at "
          f"{args.speed:g}x, one per seat every ~{args.every:g} s")
    print(f"submission -> result at the issuing seat: p50 {pct(to_result, .5) * 1000:.0f} ms, "
          f"p95 {pct(to_result, .95) * 1000:.0f} ms (n={len(to_result)})")
    print(f"submission -> event at every other seat: p50 {p50:.0f} ms, p95 {p95:.0f} ms "
          f"(n={len(to_event)}; aim p95 <= {AIM_P95_MS:.0f} ms: "
          f"{'met' if p95 <= AIM_P95_MS else 'NOT met'})")
    print(f"flood: {flooded} statements answered in {args.flood:g} s = "
          f"{flooded / args.flood:.1f} statements/s sustained by the host")
    print(f"host: {stats['cpu_s']:.1f} s CPU over {stats['wall_s']:.0f} s "
          f"({100 * stats['cpu_s'] / stats['wall_s']:.0f}% of a core), peak RSS "
          f"{stats['maxrss_mb']:.0f} MB, {stats['commands']} commands")
    if to_event:
        print(f"median submission -> event {statistics.median(to_event) * 1000:.0f} ms")
    return 0


def _drop(dsn: str, address: str, folder: Path) -> None:
    """The benchmark's schemas off the server: the meeting and the world."""
    from raceday.store.postgres.session_db import PgSessionDb
    from raceday.store.postgres.store import drop_world

    PgSessionDb.open(address).drop()
    marker = folder / "world.postgres"
    if marker.is_file():
        drop_world(dsn, marker.read_text(encoding="utf-8").strip())


if __name__ == "__main__":
    sys.exit(main())
