"""`raceday serve` with many browsers: what each browser's session costs the server.

Starts `raceday serve` (the launcher) on a free port, then opens N sessions at once the way a
workshop does when everyone follows the link: each is a websocket client speaking
textual-serve's protocol (`/ws?width=120&height=40`, the frames the page's terminal would
draw), so the figures are the server's, not a browser's. For each session: the time from
its connection to the launcher's text on its socket (first screen); once all are up, the
memory of the processes it spawned (RSS, and PSS, which shares the pages the processes
share fairly). The aim (issue 14) is at most 60 MB per session.

A few real browser tabs (Debian's headless chromium, one after another, with the N sessions
still open) give the time to first screen as a person sees it: from navigating to the page
to the launcher's text reaching the page's terminal.

Usage: python benchmarks/bench_serve.py [--sessions 20 100] [--tabs 3] [--width 120]
       [--height 40]
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "web"))

from chromium import Browser, available, plain  # noqa: E402

AIM_MB = 60.0
FIRST_SCREEN = "pick a night to relive"  # the launcher's title line
IN_NIGHT = "F5 run"  # the night's editor: a world built, the clock at 23:00


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Session:
    """One websocket client: reads every frame (answering pings) until told to stop."""

    url: str
    started: float = 0.0
    first_screen: float | None = None
    error: str | None = None
    in_night: float | None = None
    received: bytearray = field(default_factory=bytearray)
    stop: threading.Event = field(default_factory=threading.Event)
    ws: Any = None

    def run(self) -> None:
        import websocket

        self.started = time.monotonic()
        try:
            ws = websocket.create_connection(self.url, timeout=300, suppress_origin=True)
        except Exception as exc:  # a refused session is a figure, not a crash
            self.error = repr(exc)
            return
        ws.settimeout(1.0)
        self.ws = ws
        try:
            while not self.stop.is_set():
                try:
                    data = ws.recv()
                except websocket.WebSocketTimeoutException:
                    continue
                except websocket.WebSocketConnectionClosedException:
                    self.error = self.error or "closed by the server"
                    return
                if self.in_night is None:
                    self.received += data if isinstance(data, bytes) else data.encode()
                    seen = plain(self.received.decode("utf-8", "ignore"))
                    if self.first_screen is None and FIRST_SCREEN in seen:
                        self.first_screen = time.monotonic() - self.started
                        self.received.clear()
                    elif self.first_screen is not None and IN_NIGHT in seen:
                        self.in_night = time.monotonic() - self.started
                        self.received.clear()
        finally:
            ws.close()


def children(pid: int) -> dict[int, int]:
    """Every process under `pid`: its id and its parent's."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    under: dict[int, int] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in under:
                under[child] = parent
                frontier.append(child)
    return under


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process, in kB (0, 0 when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    values = {line.split(":")[0]: int(line.split()[1]) for line in text.splitlines()[1:]
              if line.split()[-1] == "kB"}
    return values.get("Rss", 0), values.get("Pss", 0)


def per_session(server: int) -> tuple[list[float], list[float], float]:
    """Each session's RSS and PSS in MB (its process and the ones it started), and the
    server's own RSS."""
    tree = children(server)
    tops = [pid for pid, parent in tree.items() if parent == server]
    rss, pss = [], []
    for top in tops:
        mine = [top, *(pid for pid in tree if _under(pid, top, tree))]
        sizes = [memory_kb(pid) for pid in mine]
        rss.append(sum(r for r, _ in sizes) / 1024)
        pss.append(sum(p for _, p in sizes) / 1024)
    return rss, pss, memory_kb(server)[0] / 1024


def _under(pid: int, top: int, tree: dict[int, int]) -> bool:
    while pid in tree:
        pid = tree[pid]
        if pid == top:
            return True
    return False


def available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(count: int, tabs: int, width: int, height: int, play: bool) -> None:
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    command = [sys.executable, "-m", "raceday", "serve", "--port", str(port),
               "--transcripts", str(folder / "transcripts"),
               "--max-sessions", "0"]  # every session asked for: no limit here
    server = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    _SERVER[:] = [server.pid]
    try:
        _wait_listening(port)
        print(f"\n{count} sessions: {shlex.join(command[1:])}  (MemAvailable "
              f"{available_mb():.0f} MB, {os.cpu_count()} CPUs)")
        url = f"ws://127.0.0.1:{port}/ws?width={width}&height={height}"
        sessions = [Session(url) for _ in range(count)]
        threads = [threading.Thread(target=s.run, daemon=True) for s in sessions]
        began = time.monotonic()
        for thread in threads:  # everyone follows the link at once
            thread.start()
        deadline = began + 60 + 6 * count
        while time.monotonic() < deadline and any(
                s.first_screen is None and s.error is None for s in sessions):
            time.sleep(0.2)
        all_up = time.monotonic() - began
        time.sleep(3)  # settled: each app idle on its launcher
        rss, pss, server_rss = per_session(server.pid)
        night = _into_the_night(sessions, count) if play else None
        firsts = sorted(s.first_screen for s in sessions if s.first_screen is not None)
        failed = [s.error or "no first screen" for s in sessions if s.first_screen is None]
        print(f"  sessions up: {len(firsts)}/{count} in {all_up:.1f} s"
              + (f"; {len(failed)} failed: {sorted(set(failed))[:3]}" if failed else ""))
        if firsts:
            print(f"  time to first screen (websocket, all at once): median {_median(firsts):.2f} s,"
                  f" p95 {firsts[int(0.95 * (len(firsts) - 1))]:.2f} s, max {firsts[-1]:.2f} s")
        if rss:
            print(f"  memory per session: median RSS {_median(rss):.1f} MB, median PSS "
                  f"{_median(pss):.1f} MB (aim <= {AIM_MB:.0f} MB: "
                  f"{'met' if _median(pss) <= AIM_MB else 'missed'} by PSS, "
                  f"{'met' if _median(rss) <= AIM_MB else 'missed'} by RSS); "
                  f"{len(rss)} session processes, total PSS {sum(pss):.0f} MB")
            print(f"  the server itself (aiohttp, textual-serve): RSS {server_rss:.1f} MB")
        if night:
            print(f"  in the night (each session: Enter, Enter; {night[0]} of {count} reached "
                  f"its editor): median RSS {_median(night[1]):.1f} MB, median PSS "
                  f"{_median(night[2]):.1f} MB (aim <= {AIM_MB:.0f} MB: "
                  f"{'met' if _median(night[2]) <= AIM_MB else 'missed'} by PSS, "
                  f"{'met' if _median(night[1]) <= AIM_MB else 'missed'} by RSS)")
        if tabs and available():
            _browser_tabs(port, tabs)
        for s in sessions:
            s.stop.set()
        for thread in threads:
            thread.join(5)
    finally:
        server.send_signal(2)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


def _into_the_night(sessions: list[Session], count: int) -> tuple[int, list[float], list[float]]:
    """Each session to its briefing and into the night (a world of its own), then memory."""
    for key in ('["stdin", "\\r"]', '["stdin", "\\r"]'):
        for s in sessions:
            if s.ws is not None and s.first_screen is not None:
                try:
                    s.ws.send(key)
                except Exception:
                    pass
        time.sleep(2 + count * 0.05)
    deadline = time.monotonic() + 60 + 3 * count
    while time.monotonic() < deadline and any(
            s.in_night is None and s.first_screen is not None and s.error is None for s in sessions):
        time.sleep(0.2)
    time.sleep(3)
    rss, pss, _ = per_session(_SERVER[0])
    return sum(s.in_night is not None for s in sessions), rss, pss


_SERVER: list[int] = []


def _browser_tabs(port: int, tabs: int) -> None:
    """Headless chromium, one tab at a time, while the sessions above stay open."""
    times = []
    with Browser() as browser:
        for _ in range(tabs):
            started = time.monotonic()
            page = browser.page(f"http://127.0.0.1:{port}/")
            page.wait_for(FIRST_SCREEN, timeout=120)
            times.append(time.monotonic() - started)
            page.close()
    print(f"  time to first screen in headless chromium ({tabs} tab{'' if tabs == 1 else 's'}, "
          f"one at a time, the sessions above open): median {_median(times):.2f} s, max {max(times):.2f} s")


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("raceday serve did not listen within 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--tabs", type=int, default=3,
                        help="headless chromium tabs timed to first screen (0: none)")
    parser.add_argument("--width", type=int, default=120)
    parser.add_argument("--height", type=int, default=40)
    parser.add_argument("--launcher-only", action="store_true",
                        help="measure on the launcher only, not again in a night")
    args = parser.parse_args()
    if args.tabs and not available():
        print("no chromium: the headless-browser row is left out")
    for count in args.sessions:
        measure(count, args.tabs, args.width, args.height, not args.launcher_only)


if __name__ == "__main__":
    main()
