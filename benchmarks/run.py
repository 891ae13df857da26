"""Every row of issues 16's and 32's tables, each with the ratio it is judged by and its aim.

    python benchmarks/run.py [--runs N] [--only ROW ...] [--huge]

Rows (medians; every ratio is against a baseline measured in the same run, the two taking
turns, so a machine shared with other work slows both alike):

  first-screen   `raceday play dynamodb-dns-race` to its briefing's body, and `raceday play` to
                 the launcher, in tmux 120x40, against a bare Textual app (Header, Static,
                 Footer); raceday's bytecode cached, as pip leaves an installed raceday; and
                 Enter the moment the briefing shows against Enter once it has been read
  replay         the replay step of replay-guarded.yaml in-process (first in a process with a
                 cold cache, warm beside it; then again), and in the TUI: ctrl+r to the replay
                 screen (the first press with a cold cache, a second after the screen
                 opens; later presses beside it; and a first press at once)
  end            ending a session in the TUI (confirm -> score shown), against the same night
                 headless, whole (a script with no steps); then d on the end screen to the
                 debrief, against `raceday debrief` of the headless night
  night          the whole night headless (as-it-happened.yaml, --json) against `python -c pass`,
                 and the same with the team's guards (guarded.yaml: every replayed night is
                 played on a world forked from the team's)
  postgres       the flagship night with its world on PostgreSQL (RACEDAY_TEST_PG_DSN), against
                 SQLite, psycopg's round trips counted, and the CPU raceday and (on this
                 machine) the server used
  large          the same night (and the 1k world's with its guards) on the flagship with 1k
                 and 10k more endpoints, against the
                 base world (--huge adds 100k)
  panel          the world panel's read and render at 4, 10k and 100k endpoints (onboarding
                 shows every endpoint's answer), and at 100k with the last two answers empty
                 (the worst case: the exercise's count, then a scan down to the last empty one)
  large-tui      the 10k world in the TUI: one action (F5) to the screen updated, against the
                 base world: the editor's example (its answer grows with the world up to the
                 results grid's cap), and a query with the same answer in both worlds
  list           `raceday list`, and `raceday play` to the launcher, with one 10k-endpoint
                 exercise in ./exercises against the same without it

Generated worlds are built in a scratch folder by this run (see common.large_world). The
other benchmarks (bench_*.py) measure more and are run on their own.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_replay import STEP as REPLAY_STEP  # noqa: E402  (prints wall, CPU per replay)
from common import (  # noqa: E402
    FLAGSHIP,
    PYTHON,
    ROOT,
    Tmux,
    inside,
    interleaved,
    large_world,
    raceday_command,
    wall,
)

BARE_APP = '''
from textual.app import App
from textual.widgets import Footer, Header, Static

class Bare(App):
    def compose(self):
        yield Header()
        yield Static("BARE READY")
        yield Footer()

Bare().run()
'''


PANEL = """
import sys, time
from pathlib import Path
from rich.console import Console
from raceday.engine.load import load_exercise
from raceday.engine.snapshot import WorldPlan, read_store_world
from raceday.store.sqlite_store import WorldStore
from raceday.tui.widgets.world import Alarms, render_world
exercise = load_exercise(Path(sys.argv[1]), check_sql=False)
store = WorldStore.create(Path(sys.argv[2]), exercise.world_sql, exercise.roles)
if sys.argv[3:]:  # a fault far down: the last two endpoints answer nothing
    store.app_query("UPDATE endpoint SET active_plan_id = 1 WHERE rowid IN "
                    "(SELECT rowid FROM endpoint ORDER BY rowid DESC LIMIT 2)")
plan = WorldPlan.for_exercise(exercise, store.tables(), onboarding=True)
console = Console(file=open("/dev/null", "w"), width=46, height=40)
walls, cpus = [], []
for _ in range(5):
    started, cpu = time.perf_counter(), time.process_time()
    view = read_store_world(store, plan)
    console.print(render_world(view, Alarms()))
    walls.append(time.perf_counter() - started)
    cpus.append(time.process_time() - cpu)
assert view.error is None and (view.answers_empty == 2) == bool(sys.argv[3:]), view
print(sorted(walls)[2], sorted(cpus)[2])
"""

Row = tuple[str, str, str, str]  # what, figures, ratio, aim

OPENED = "Run a statement (F5)"
"""What the play screen's results panel says once its session is open."""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def verdict(value: float, aim: float) -> str:
    return "at aim" if value <= aim else "NOT at aim"


# -- first screen ------------------------------------------------------------------------------


def cached_bytecode() -> str:
    """Compile raceday's modules where Python looks for them, as an installed raceday has
    them (pip compiles on install): with PYTHONDONTWRITEBYTECODE set, as in this house, an
    editable raceday is compiled again by every process (40 ms more before the briefing)."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("raceday")
    assert spec is not None and spec.submodule_search_locations
    folder = spec.submodule_search_locations[0]
    compileall.compile_dir(folder, quiet=1)
    return folder


def cpu_ms(tmux: Tmux) -> float:
    """CPU time (user + system, every thread, ended ones too) the pane's process has used so
    far, from /proc (Linux; in clock ticks, 10 ms each)."""
    pid = tmux.run("display-message", "-p", "-t", tmux.name, "#{pane_pid}").strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def first_screen(runs: int, scratch: Path) -> list[Row]:
    """Each program started in a fresh tmux pane, timed until its first screen shows its
    marker (polled every ~2 ms), then its CPU time so far is read; bytecode cached."""
    tmux = Tmux("raceday-bench-run")
    bare = scratch / "bare_app.py"
    bare.write_text(BARE_APP, encoding="utf-8")
    raceday = " ".join(raceday_command())
    cwd = scratch / "empty"
    cwd.mkdir(exist_ok=True)
    cached_bytecode()
    cpu: dict[str, list[float]] = {}

    def timed(name: str, command: str, marker: str) -> Callable[[], float]:
        def run() -> float:
            began = tmux.start(command, cwd)
            try:
                took = tmux.until(lambda s: marker in s, began)
                cpu.setdefault(name, []).append(cpu_ms(tmux))
                return took
            finally:
                tmux.kill()
        return run

    got = interleaved({
        "bare": timed("bare", f"{PYTHON} {bare}", "BARE READY"),
        "briefing": timed("briefing", f"{raceday} play dynamodb-dns-race", BODY),
        "launcher": timed("launcher", f"{raceday} play", "pick a night"),
    }, runs)
    cpus = {name: statistics.median(values) for name, values in cpu.items()}
    rows = []
    for name, label, aim in (
            ("briefing", "`raceday play dynamodb-dns-race` to its briefing's body", 1.5),
            ("launcher", "`raceday play` to the launcher", 1.3)):
        ratio = got[name] / got["bare"]
        rows.append((f"{label} (tmux 120x40) vs a bare Textual app",
                     f"{ms(got[name])} vs {ms(got['bare'])} (CPU to then {cpus[name]:.0f} "
                     f"vs {cpus['bare']:.0f} ms)", f"{ratio:.2f}x",
                     f"<= {aim}x: {verdict(ratio, aim)}"))
    return rows + enter(runs, scratch)


BODY = "The roles"
"""On the briefing's body as far as its roles table (issue 63's measure), not on the bar and
title its first frame draws before the exercise is loaded."""

SETTLED = 1.5
"""Seconds a player reads the briefing before the settled Enter."""


def enter(runs: int, scratch: Path) -> list[Row]:
    """Enter on the briefing to the play screen's session open (its results panel says so):
    pressed the moment the briefing's bar shows (the exercise still loading, its Markdown
    still rendering), against pressed SETTLED seconds after the body shows."""
    tmux = Tmux("raceday-bench-enter")
    raceday = " ".join(raceday_command())
    cwd = scratch / "tui-enter"
    cwd.mkdir(exist_ok=True)

    def press(at_once: bool) -> Callable[[], float]:
        def run() -> float:
            began = tmux.start(f"{raceday} play dynamodb-dns-race", cwd)
            try:
                if at_once:
                    tmux.until(lambda s: "Briefing ·" in s, began)
                else:
                    tmux.until(lambda s: BODY in s, began)
                    time.sleep(SETTLED)
                return tmux.until(lambda s: OPENED in s, tmux.keys("Enter"))
            finally:
                tmux.kill()
        return run

    got = interleaved({"settled": press(False), "at once": press(True)}, runs)
    ratio = got["at once"] / got["settled"]
    return [(f"TUI: Enter the moment the briefing shows -> play screen open, vs Enter "
             f"{SETTLED} s after its body", f"{ms(got['at once'])} vs {ms(got['settled'])}",
             f"{ratio:.2f}x", "no aim (1.2x retired in issue 63: measured 1.16-1.46x)")]


# -- the replay --------------------------------------------------------------------------------


def _replay_env(cache: Path, scratch: Path) -> dict[str, str]:
    """A child's environment: raceday's cache folder `cache` (a fresh one: nothing cached on
    disk), bytecode cached as installed (in the scratch folder)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(RACEDAY_CACHE_DIR=str(cache), PYTHONPYCACHEPREFIX=str(scratch / "pycache"))
    return env


def replay(runs: int, scratch: Path) -> list[Row]:
    """Judged cold: each run in a fresh RACEDAY_CACHE_DIR, so the normal night of the original
    world is played too, as on a machine that never replayed this exercise with this code;
    warm (that night cached by an untimed first run) beside it."""
    script = FLAGSHIP / "scripts" / "replay-guarded.yaml"

    def step(folder: str, cache: Path) -> list[float]:
        out = subprocess.run([PYTHON, "-c", REPLAY_STEP, str(FLAGSHIP), str(script),
                              str(scratch / folder)], check=True, capture_output=True,
                             text=True, cwd=ROOT, env=_replay_env(cache, scratch))
        figures = [float(x) for x in out.stdout.strip().splitlines()[-1].split()]
        return figures[0::2]  # wall times (CPU times between them)

    step("replay-prime", scratch / "cache-warm")
    firsts, warms, agains = [], [], []
    for n in range(runs):
        cold = step(f"replay-cold-{n}", scratch / f"cache-cold-{n}")
        firsts.append(cold[0])
        agains.extend(cold[1:])
        warms.append(step(f"replay-warm-{n}", scratch / "cache-warm")[0])
    first, warm = statistics.median(firsts), statistics.median(warms)
    again = statistics.median(agains)
    rows = [("replay step of replay-guarded.yaml, in-process: first in a process (cold cache)",
             f"{ms(first)} (warm: {ms(warm)}, the original world's normal night cached)", "",
             f"<= 150 ms: {verdict(first, 0.150)}"),
            ("  ... asked again, the world unchanged (a second ctrl+r: the played night is reused)",
             ms(again), "", f"<= 150 ms: {verdict(again, 0.150)}")]
    rows.extend(ctrl_r(runs, scratch))
    return rows


READ_FIRST = 1.0
"""Seconds a player looks at the opened play screen before pressing ctrl+r (the judged press):
meanwhile the session prepares what every replay needs (the original world's normal night)."""


def ctrl_r(runs: int, scratch: Path) -> list[Row]:
    """In the TUI, on the fresh world: ctrl+r to the replay screen. The first press of a
    process with a cold cache (a fresh RACEDAY_CACHE_DIR each run) is judged, made once the
    player has had the screen a second (READ_FIRST); the later presses beside it; and, not
    judged, a first press the instant the session opens (it waits for the preparing)."""
    tmux = Tmux("raceday-bench-replay")
    raceday = " ".join(raceday_command())
    got: dict[str, list[float]] = {"first": [], "later": [], "instant": []}
    for n in range(max(2, runs // 2) * 2):
        instant = n % 2 == 1  # the two kinds take turns
        cwd = scratch / f"tui-replay-{n}"
        cwd.mkdir(exist_ok=True)
        env = " ".join(f"{k}={v}" for k, v in _replay_env(scratch / f"cache-tui-{n}",
                                                           scratch).items()
                       if k in ("RACEDAY_CACHE_DIR", "PYTHONPYCACHEPREFIX"))
        began = tmux.start(f"env -u PYTHONDONTWRITEBYTECODE {env} {raceday} play "
                           "dynamodb-dns-race", cwd)
        times = []
        try:
            tmux.until(lambda s: "Briefing ·" in s, began)
            # the play screen shows "F5 run" before its session is open (a ctrl+r then is
            # kept and done once it opens): the press timed is one made after the opening
            tmux.until(lambda s: OPENED in s, tmux.keys("Enter"))
            if not instant:
                time.sleep(READ_FIRST)
            for _ in range(1 if instant else 3):
                at = tmux.keys("C-r")
                times.append(tmux.until(lambda s: "The replay begins" in s, at))
                time.sleep(0.3)
                tmux.until(lambda s: "F5 run" in s and "The replay begins" not in s,
                           tmux.keys("Escape"))
                time.sleep(0.3)
        finally:
            tmux.kill()
        if instant:
            got["instant"].append(times[0])
        else:
            got["first"].append(times[0])
            got["later"].extend(times[1:])
    first, later, at_once = (statistics.median(got[k]) for k in ("first", "later", "instant"))
    return [("TUI: ctrl+r to the replay screen (fresh world): first press (cold cache, "
             f"{READ_FIRST:.0f} s after the screen opens)",
             f"{ms(first)} (later presses {ms(later)})", "",
             f"<= 250 ms: {verdict(max(first, later), 0.250)}"),
            ("  ... the first press the instant the session opens (waits for the preparing of "
             "the normal night)", ms(at_once), "", "(not judged)")]


# -- the end of a session ----------------------------------------------------------------------

NOTHING_DONE = "exercise: dynamodb-dns-race\nsteps: []\n"
"""The night the TUI row ends at once: nobody acts, the rest plays itself out."""


def ending(runs: int, scratch: Path) -> list[Row]:
    """In the TUI: the play screen opened, ctrl+q, then the judged press: Enter on "End and
    score" until the end screen shows the score (the rest of the night played by the
    automation, the final replay, the debrief). Against the same night headless, whole: a
    script with no steps, from launch to exit.

    Then d on that end screen until the debrief shows, against `raceday debrief` of the
    headless night's folder (the same debrief from its transcript, to a file, whole)."""
    tmux = Tmux("raceday-bench-end")
    raceday = raceday_command()
    script = scratch / "nothing-done.yaml"
    script.write_text(NOTHING_DONE, encoding="utf-8")
    cached_bytecode()
    debriefs: list[float] = []

    def tui() -> float:
        cwd = scratch / "tui-end"
        cwd.mkdir(exist_ok=True)
        began = tmux.start(f"{' '.join(raceday)} play dynamodb-dns-race", cwd)
        try:
            tmux.until(lambda s: "Briefing ·" in s, began)
            tmux.until(lambda s: OPENED in s, tmux.keys("Enter"))
            time.sleep(1.5)  # what the session prepares ahead is ready, as after any play
            tmux.until(lambda s: "End and score" in s, tmux.keys("C-q"))
            time.sleep(0.3)
            took = tmux.until(lambda s: "The end · d:" in s and "Score" in s,
                              tmux.keys("Enter"))
            time.sleep(0.5)  # the player reads the score
            debriefs.append(tmux.until(lambda s: "Debrief: The DNS race" in s,  # its text
                                       tmux.keys("d")))
            return took
        finally:
            tmux.kill()

    headless = scratch / "end-headless"

    def debrief_cli() -> float:
        newest = max((p for p in headless.iterdir() if p.is_dir()),  # the last night played
                     key=lambda p: p.name)
        return wall([*raceday, "debrief", str(newest), "-o", str(scratch / "debrief.md")])

    got = interleaved({
        "headless": lambda: wall([*raceday, "run", "dynamodb-dns-race", "--script",
                                  str(script), "--json", "--transcripts", str(headless)]),
        "tui": tui,
        "debrief": debrief_cli,
    }, runs)
    ratio = got["tui"] / got["headless"]
    d = statistics.median(debriefs)
    d_ratio = d / got["debrief"]
    return [("TUI: ending a session (confirm -> score shown) vs the same night headless, whole",
             f"{ms(got['tui'])} vs {ms(got['headless'])}", f"{ratio:.2f}x",
             f"<= 1.0x: {verdict(ratio, 1.0)}"),
            ("TUI: d on the end screen -> debrief shown vs `raceday debrief` of that night",
             f"{ms(d)} vs {ms(got['debrief'])}", f"{d_ratio:.2f}x",
             f"<= 1.0x: {verdict(d_ratio, 1.0)}")]


# -- the whole night ---------------------------------------------------------------------------


def fresh_cache(scratch: Path, name: str) -> None:
    """raceday's cache folder for the runs that follow: a new one, so the first run is a
    first session (nothing kept for this code and exercise) and the rest are later ones."""
    folder = scratch / f"cache-{name}"
    folder.mkdir()
    os.environ["RACEDAY_CACHE_DIR"] = str(folder)


def night(runs: int, scratch: Path) -> list[Row]:
    raceday = raceday_command()
    cached_bytecode()
    script = FLAGSHIP / "scripts" / "as-it-happened.yaml"

    def play() -> float:
        return wall([*raceday, "run", "dynamodb-dns-race", "--script", str(script), "--json",
                     "--transcripts", str(scratch / "night")])

    def guarded() -> float:  # the common night: a team that built the exercise's guards
        return wall([*raceday, "run", "dynamodb-dns-race", "--script",
                     str(FLAGSHIP / "scripts" / "guarded.yaml"), "--json",
                     "--transcripts", str(scratch / "night-guarded")])

    fresh_cache(scratch, "night")
    first = play()  # what it keeps (its practice baselines, the normal nights) serves the rest
    first_guarded = guarded()
    got = interleaved({"pass": lambda: wall([PYTHON, "-c", "pass"]), "night": play,
                       "guarded": guarded}, runs)
    ratio = got["night"] / got["pass"]
    guarded_ratio = got["guarded"] / got["pass"]
    return [("whole night headless (as-it-happened, --json) vs `python -c pass`",
             f"{ms(got['night'])} vs {ms(got['pass'])} (a first session: {ms(first)}, "
             f"{first / got['pass']:.1f}x)", f"{ratio:.1f}x", f"<= 25x: {verdict(ratio, 25)}"),
            ("  the same night with the team's guards (guarded.yaml) vs `python -c pass`",
             f"{ms(got['guarded'])} vs {ms(got['pass'])} (a first session: "
             f"{ms(first_guarded)})", f"{guarded_ratio:.1f}x",
             f"<= 25x: {verdict(guarded_ratio, 25)}")]


# -- a night on PostgreSQL ---------------------------------------------------------------------

COUNTED = """
import sys, threading, time
import psycopg
counts = {"exchanges": 0, "connections": 0}
lock = threading.Lock()
from psycopg import _pipeline_base
wait, connect = psycopg.Connection.wait, psycopg.Connection.connect.__func__
sync = _pipeline_base.BasePipeline._enqueue_sync
def counted_wait(self, *args, **kwargs):  # one request sent and its answer read: a round trip
    if self._pipeline is None:  # in a pipeline, psycopg waits for every message it queues
        with lock:
            counts["exchanges"] += 1
    return wait(self, *args, **kwargs)
def counted_sync(self):  # a pipeline's messages sent, its answers read: a round trip
    with lock:
        counts["exchanges"] += 1
    return sync(self)
_pipeline_base.BasePipeline._enqueue_sync = counted_sync
def counted_connect(cls, *args, **kwargs):
    with lock:
        counts["connections"] += 1
    return connect(cls, *args, **kwargs)
psycopg.Connection.wait = counted_wait
psycopg.Connection.connect = classmethod(counted_connect)
from raceday.cli import main
started = time.perf_counter()
status = main(sys.argv[1:])
print(time.perf_counter() - started, counts["exchanges"], counts["connections"])
sys.exit(status)
"""
"""`raceday run` with psycopg's round trips counted: every exchange a connection waits for
(a statement, a fetch of a server-side cursor, a commit; a pipeline's messages, up to its
sync) and every connection opened."""


def server_cpu(dsn: str) -> Callable[[], float] | None:
    """The CPU seconds the server's ended processes have used so far (its postmaster's reaped
    children: every backend a run connected, once it has gone), read from /proc; None when
    the server is not on this machine or /proc cannot say."""
    import psycopg

    try:
        with psycopg.connect(dsn) as conn:
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()
        if backend is None:
            return None
        parent = int(Path(f"/proc/{backend[0]}/stat").read_text().rsplit(")", 1)[1].split()[1])
        stat = Path(f"/proc/{parent}/stat")
        ticks = os.sysconf("SC_CLK_TCK")

        def used() -> float:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            return (int(fields[13]) + int(fields[14])) / ticks  # cutime, cstime

        used()
        return used
    except (OSError, ValueError, IndexError, TypeError, psycopg.Error):
        return None


def postgres_night(runs: int, scratch: Path) -> list[Row]:
    """The flagship night (as-it-happened, --json, the final replay included) with its world on
    PostgreSQL (RACEDAY_TEST_PG_DSN), against the same night on SQLite, whole processes;
    round trips counted in the PostgreSQL runs, and the CPU each side used (raceday's
    process and its children; the server's, when it runs on this machine)."""
    import resource
    dsn = os.environ.get("RACEDAY_TEST_PG_DSN")
    if not dsn:
        return [("a flagship night on PostgreSQL vs SQLite", "no RACEDAY_TEST_PG_DSN: skipped",
                 "", "(not measured)")]
    raceday = raceday_command()
    script = FLAGSHIP / "scripts" / "as-it-happened.yaml"
    night_args = ["run", "dynamodb-dns-race", "--script", str(script), "--json"]
    trips: list[tuple[int, int]] = []
    cpu: list[tuple[float, float | None]] = []
    server = server_cpu(dsn)

    def on_postgres() -> float:
        mine = resource.getrusage(resource.RUSAGE_CHILDREN)
        theirs = server() if server is not None else None
        started = time.perf_counter()
        out = subprocess.run([PYTHON, "-c", COUNTED, *night_args, "--transcripts",
                              str(scratch / "pg-night"), "--db", dsn], check=True,
                             capture_output=True, text=True, cwd=ROOT)
        took = time.perf_counter() - started
        figures = out.stdout.strip().splitlines()[-1].split()
        trips.append((int(figures[1]), int(figures[2])))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        time.sleep(0.3)  # the run's backends reaped
        cpu.append((after.ru_utime + after.ru_stime - mine.ru_utime - mine.ru_stime,
                    server() - theirs if server is not None and theirs is not None else None))
        return took

    def on_sqlite() -> float:
        return wall([*raceday, *night_args, "--transcripts", str(scratch / "sqlite-night")])

    fresh_cache(scratch, "postgres")
    first = on_postgres(), on_sqlite()  # a first session each: what they keep serves the rest
    del trips[:], cpu[:]
    got = interleaved({"sqlite": on_sqlite, "postgres": on_postgres}, max(2, runs // 3))
    ratio = got["postgres"] / got["sqlite"]
    exchanges = statistics.median(t[0] for t in trips)
    connections = statistics.median(t[1] for t in trips)
    client = statistics.median(c[0] for c in cpu)
    served = [c[1] for c in cpu if c[1] is not None]
    on_server = (f", the server's {statistics.median(served):.1f} s" if served
                 else " (the server's not measured: not on this machine)")
    rows = [("a flagship night on PostgreSQL (as-it-happened, final replay included) vs SQLite",
             f"{ms(got['postgres'])} vs {ms(got['sqlite'])}; {exchanges:,.0f} round trips on "
             f"{connections:.0f} connections; CPU: raceday's {client:.1f} s{on_server} (a "
             f"first session: {ms(first[0])} vs {ms(first[1])})",
             f"{ratio:.1f}x", f"<= 5x: {verdict(ratio, 5)}")]
    return rows + guarded_postgres_night(dsn, scratch)


def guarded_postgres_night(dsn: str, scratch: Path) -> list[Row]:
    """The same night with the team's guards (guarded.yaml, its PostgreSQL twin on the
    server): a team that changed its schema has every night of the final replay played on
    worlds forked from it (the race, the variant's, the practice and normal nights), the wait
    a team that did the exercise's work has at the end. No aim of its own: shown beside the
    row above, which a team that changed nothing meets."""
    raceday = raceday_command()
    base = ["run", "dynamodb-dns-race", "--json"]

    def on(db: list[str], script: Path, folder: str) -> Callable[[], float]:
        return lambda: wall([*raceday, *base, "--script", str(script), "--transcripts",
                             str(scratch / folder), *db])

    runs = {"sqlite": on([], FLAGSHIP / "scripts" / "guarded.yaml", "sqlite-guarded"),
            "postgres": on(["--db", dsn], FLAGSHIP / "scripts" / "postgres" / "guarded.yaml",
                           "pg-guarded")}
    for run in runs.values():
        run()  # a first session each: the baselines kept serve the rest
    got = interleaved(runs, 3)
    ratio = got["postgres"] / got["sqlite"]
    return [("  the same with the team's guards (guarded.yaml)",
             f"{ms(got['postgres'])} vs {ms(got['sqlite'])}", f"{ratio:.1f}x",
             f"<= 5x: {verdict(ratio, 5)}")]


# -- large worlds ------------------------------------------------------------------------------


def large(runs: int, scratch: Path, huge: bool) -> list[Row]:
    """The headless night on the flagship with 1k and 10k more endpoints (--huge: 100k): 1k
    within 3 s (a later session's, against the base world in the same loop), and the growth
    linear (first sessions: 10x the endpoints within about 10x the time)."""
    raceday = raceday_command()
    rows: list[Row] = []
    sizes = [1_000, 10_000, 100_000] if huge else [1_000, 10_000]
    first: dict[int, float] = {}  # a first session's, the linearity's measure
    fresh_cache(scratch, "large")
    for extra in sizes:
        parent = scratch / f"world-{extra}"
        parent.mkdir(exist_ok=True)
        folder = large_world(parent, extra)

        def headless(exercise: Path, name: str,
                     play: str = "as-it-happened") -> Callable[[], float]:
            script = exercise / "scripts" / f"{play}.yaml"
            return lambda: wall([*raceday, "run", str(exercise), "--script", str(script),
                                 "--json", "--transcripts", str(scratch / name)])

        # the first session of the world (nothing kept), then later ones (its practice
        # baselines and normal nights kept): 1k's aim is a later session's, 10k's linearity
        # compares first sessions (a later 10k session would take minutes more to measure)
        first[extra] = headless(folder, f"large-{extra}")()
        if extra == 1_000:
            guarded = headless(folder, f"large-{extra}-guarded", "guarded")
            first_guarded = guarded()  # a first session of the guarded world
            got = interleaved({"base": headless(FLAGSHIP, "base"),
                               "large": headless(folder, f"large-{extra}"),
                               "guarded": guarded}, max(3, runs // 2))
            rows.append((f"headless night, flagship + {extra:,} endpoints vs the base world",
                         f"{ms(got['large'])} vs {ms(got['base'])} (a first session: "
                         f"{ms(first[extra])})", f"{got['large'] / got['base']:.1f}x",
                         f"<= 3 s: {verdict(got['large'], 3.0)}"))
            rows.append(("  the same with the team's guards (guarded.yaml)",
                         f"{ms(got['guarded'])} (a first session: {ms(first_guarded)})",
                         f"{got['guarded'] / got['base']:.1f}x",
                         f"<= 3 s: {verdict(got['guarded'], 3.0)}"))
        else:
            growth = first[extra] / first[1_000]
            rows.append((f"headless night, flagship + {extra:,} endpoints: a first session, vs "
                         "the 1k world's", f"{ms(first[extra])} vs {ms(first[1_000])}",
                         f"{growth:.1f}x",
                         f"linear (<= 12x the 1k world's): {verdict(growth, 12.0)}"))
    return rows


def panel(scratch: Path) -> list[Row]:
    """The world panel's read and render (onboarding shows every endpoint's answer): healthy
    worlds of 4, 10k and 100k endpoints, and the 100k world with its last two answers empty."""
    rows: list[Row] = []
    took: dict[tuple[int, bool], list[float]] = {}
    for extra, fault in ((0, False), (10_000, False), (100_000, False), (100_000, True)):
        if extra:
            parent = scratch / f"world-{extra}"
            parent.mkdir(exist_ok=True)
            folder = large_world(parent, extra)
        else:
            folder = FLAGSHIP
        db = scratch / f"panel-{extra}.db"
        db.unlink(missing_ok=True)
        took[extra, fault] = inside([PYTHON, "-c", PANEL, str(folder), str(db),
                                     *(["fault"] if fault else [])])
        db.unlink(missing_ok=True)
    base_wall, base_cpu = took[0, False]
    for extra, fault in ((10_000, False), (100_000, False), (100_000, True)):
        wall_s, cpu_s = took[extra, fault]
        what = "its last two answers empty" if fault else "healthy"
        rows.append((f"world panel read + render (onboarding), {extra // 1000}k more endpoints, "
                     f"{what}",
                     f"{ms(wall_s)} (CPU {ms(cpu_s)}) vs {ms(base_wall)} (CPU {ms(base_cpu)}, "
                     "base)", f"{wall_s / base_wall:.1f}x",
                     f"<= 50 ms, flat: {verdict(wall_s, 0.050)}"))
    return rows


BOUNDED = "SELECT name, active_plan_id FROM endpoint ORDER BY name LIMIT 5"
"""An action whose answer is the same size in every world: what is left is the world's cost."""


def large_tui(runs: int, scratch: Path) -> list[Row]:
    """One action (F5) to the clock moving on the screen, in the 10k world against the base
    world: the editor's example first (the responder's: every endpoint, so the 10k world's
    answer is the 1,000 rows the results grid is capped at, the base world's 4), then a
    query with the same 5 rows in both worlds (the editor cleared with ctrl+l, the query
    typed), which leaves the world's own cost: the engine's minute and the panel."""
    raceday = " ".join(raceday_command())
    parent = scratch / "world-10000"
    parent.mkdir(exist_ok=True)
    folder = large_world(parent, 10_000)
    got: dict[tuple[str, str], list[float]] = {}
    for name, exercise in (("base", FLAGSHIP), ("large", folder)):
        tmux = Tmux(f"raceday-bench-{name}")
        cwd = scratch / f"tui-{name}"
        cwd.mkdir(exist_ok=True)
        began = tmux.start(f"{raceday} play {exercise} --mode onboarding", cwd)
        minute = 0
        try:
            tmux.until(lambda s: "Briefing ·" in s, began)
            tmux.until(lambda s: OPENED in s, tmux.keys("Enter"))
            time.sleep(1.0)
            for action in ("example", "bounded"):
                if action == "bounded":
                    tmux.keys("C-l")
                    tmux.keys("-l", BOUNDED)
                    time.sleep(0.5)
                for _ in range(runs):
                    minute += 1
                    face = f"{23 + minute // 60:02d}:{minute % 60:02d} PDT"
                    at = tmux.keys("F5")
                    got.setdefault((name, action), []).append(
                        tmux.until(lambda s, f=face: f in s.splitlines()[0], at))
                    time.sleep(0.2)
        finally:
            tmux.kill()
    rows: list[Row] = []
    for action, what in (("example", "the editor's example (10k: 1,000 rows shown, base: 4)"),
                         ("bounded", "a 5-row query (the same answer size in both worlds)")):
        base = statistics.median(got["base", action])
        big = statistics.median(got["large", action])
        rows.append((f"TUI, flagship + 10k endpoints: one action (F5) to the screen updated: "
                     f"{what}", f"{ms(big)} (max {ms(max(got['large', action]))}) vs "
                     f"{ms(base)} (base)", f"{big / base:.1f}x",
                     f"<= 50 ms, flat: {verdict(big, 0.050)}"))
    return rows


# -- list and launcher -------------------------------------------------------------------------


def listing(runs: int, scratch: Path) -> list[Row]:
    raceday = raceday_command()
    with_large = scratch / "list-with"
    with_large.mkdir(exist_ok=True)
    large_world(with_large, 10_000)
    without = scratch / "list-without"
    without.mkdir(exist_ok=True)
    wall([*raceday, "list"], with_large)  # the first look at a new exercise is not timed
    got = interleaved({
        "without": lambda: wall([*raceday, "list"], without),
        "with": lambda: wall([*raceday, "list"], with_large),
    }, runs)
    tmux = Tmux("raceday-bench-list")
    command = " ".join(raceday) + " play"

    def launcher(cwd: Path) -> Callable[[], float]:
        # both until the exercises are listed (the first one's detail shown): the title
        # line alone is on screen before they are found
        listed = "dns-race-10k" if cwd == with_large else "dynamodb-dns-race  (bundled)"

        def run() -> float:
            began = tmux.start(command, cwd)
            try:
                return tmux.until(lambda s: "pick a night" in s and listed in s, began)
            finally:
                tmux.kill()
        return run

    tui = interleaved({"without": launcher(without), "with": launcher(with_large)}, runs)
    rows = []
    for name, figures in (("`raceday list`", got), ("`raceday play` to the launcher", tui)):
        ratio = figures["with"] / figures["without"]
        rows.append((f"{name} with a 10k-endpoint exercise present vs without",
                     f"{ms(figures['with'])} vs {ms(figures['without'])}", f"{ratio:.2f}x",
                     f"no slower (<= 1.1x): {verdict(ratio, 1.1)}"))
    return rows


ROWS = ("end", "first-screen", "replay", "night", "postgres", "large", "panel", "large-tui", "list")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", nargs="*", choices=ROWS, default=list(ROWS))
    parser.add_argument("--huge", action="store_true",
                        help="also play the headless night on 100k more endpoints (minutes)")
    args = parser.parse_args()
    tui_rows = {"end", "first-screen", "large-tui", "list"} | ({"replay"})
    if tui_rows & set(args.only) and shutil.which("tmux") is None:
        print("benchmarks/run.py: the TUI rows need tmux", file=sys.stderr)
        return 2
    os.environ.setdefault("TERM", "xterm-256color")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="raceday-bench-") as tmp:
        scratch = Path(tmp)
        for name in ROWS:
            if name not in args.only:
                continue
            started = time.perf_counter()
            if name == "end":
                got = ending(args.runs, scratch)
            elif name == "first-screen":
                got = first_screen(args.runs, scratch)
            elif name == "replay":
                got = replay(args.runs, scratch)
            elif name == "night":
                got = night(args.runs, scratch)
            elif name == "postgres":
                got = postgres_night(args.runs, scratch)
            elif name == "large":
                got = large(args.runs, scratch, args.huge)
            elif name == "panel":
                got = panel(scratch)
            elif name == "large-tui":
                got = large_tui(args.runs, scratch)
            else:
                got = listing(args.runs, scratch)
            for row in got:
                print(f"{row[0]}\n    {row[1]}  {row[2]}  aim {row[3]}", flush=True)
            print(f"    ({name}: {time.perf_counter() - started:.0f} s)", flush=True)
            rows.extend(got)
    print(f"\n{'what':<92} {'ratio':>7}  aim")
    for what, figures, ratio, aim in rows:
        print(f"{what[:92]:<92} {ratio:>7}  {aim}\n    {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
