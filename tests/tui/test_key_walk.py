"""Issue 59: every screen and dialog survives any key and any size.

For each screen a player reaches, a seeded random walk presses a few hundred of the keys a
person presses without thinking (paging, Home/End, ctrl+Home/End, Tab, arrows, Enter, Esc,
space, F1-F10, ctrl+r/n/s/o/y, letters, digits), some in bursts typed faster than the app
answers, and now and then resizes the terminal anywhere between 40x12 and 160x50 (too
small for raceday too, and back). After every step
no error may have escaped (the app runs, no return code, `app._exception` None), no crash
panel may show and nothing may have been logged as an error; the walk must still be on its
screen (or a dialog over it). At the end the terminal gets its first size back and the
screen draws.

Keys that quit, or that leave the walk's screen on purpose (Enter on the launcher, Escape on
the replay), are left out where they would (`Scene.leaving`, by the screen on top); a dialog
the walk closes (Escape, or its answer given) is opened again (`Scene.reopen`).

A walk is seeded by its name and a number, and waits after every step until the app is
idle (no worker running, no message waiting: one that never is fails), so it plays the same
every run: a failure prints the seed and every step up to it, as a list `drive` replays (a
regression test is that list, cut to the few steps that matter). Pilot's own waits sleep
60 ms a key; `no_idle_sleeps` drops them, so the walks take about 80 s in all on one core.
`RACEDAY_KEY_WALK=SEEDS[:STEPS]` walks further by hand (`0-9:600`: seeds 0 to 9, 600 steps).

The replay walk (seed 0) ends at its sixth step, PageUp, with KeyError in
OptionList._move_page when the fix of c4411e9 (the hidden step list kept the keys) is taken
out again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import string
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import textual.app
import textual.pilot
from textual.app import App
from textual.pilot import Pilot
from textual.screen import ModalScreen, Screen
from textual.worker import WorkerState
from tui_fixtures import MakeApp, end_play, settle, start_play, wait_until

from raceday.engine.clock import Pace
from raceday.engine.load import load_named_exercise
from raceday.exercise.model import Exercise
from raceday.team.client import Client, View
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.tui.app import MIN_SIZE
from raceday.tui.screens.briefing import BriefingScreen
from raceday.tui.screens.cast import CastScreen
from raceday.tui.screens.crash import CrashScreen
from raceday.tui.screens.dialogs import ChoiceDialog, MonitorDialog
from raceday.tui.screens.end import EndScreen
from raceday.tui.screens.help import HelpScreen, TooSmallScreen
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen
from raceday.tui.screens.replay import ReplayScreen
from raceday.tui.screens.review import DebriefScreen, ReviewApp
from raceday.tui.team.console import ConsoleScreen
from raceday.tui.team.console_app import ConsoleApp
from raceday.tui.team.seat_screen import SeatScreen
from raceday.tui.team.start_team import SeatApp, seat_settings
from raceday.tui.team.watch import WatchApp, WatchScreen

pytestmark = pytest.mark.tui

Step = str | tuple[int, int] | tuple[str, ...]
"""A key, as Pilot presses it; a terminal size (width, height); or a burst of keys typed
faster than the app answers them (each sent before the one ahead of it is handled)."""
Reopen = Callable[[Pilot[Any], list[Step]], Awaitable[Screen[Any] | None]]

NAVIGATION = ("pageup", "pagedown", "home", "end", "ctrl+home", "ctrl+end", "tab", "shift+tab",
              "up", "down", "left", "right")
ACTIONS = ("enter", "escape", "space", *(f"f{n}" for n in range(1, 11)),
           "ctrl+r", "ctrl+n", "ctrl+s", "ctrl+o", "ctrl+y")
TYPED = tuple(string.ascii_lowercase + string.digits)
QUITS = frozenset({"ctrl+q"})  # never drawn: it ends the session (after asking)

SMALLEST, LARGEST = (40, 12), (160, 50)
EDGES = ((40, 12), (160, 50), (80, 24), (79, 24), (80, 23), (109, 31), (110, 32), (139, 40),
         (140, 40), (100, 30))
"""Sizes where layouts change: raceday's minimum (80x24), the play screen's narrow layout
(110x32), the replay's step list (140 columns), and the extremes."""

LONG_LIVED = frozenset({"console", "teams", "watch", "leaderboard", "seat-follow"})
"""Worker groups that follow a session for as long as their screen is open: never idle."""

TRANSCRIPTS = Path(__file__).parents[1] / "transcript" / "fixtures"


# -- a walk ---------------------------------------------------------------------------------


@dataclass
class Scene:
    """An app, how to reach the screen walked, and what the walk may not press there."""

    app: App[Any]
    reach: Callable[[Pilot[Any]], Awaitable[Screen[Any]]]
    size: tuple[int, int] = (120, 40)
    leaving: Mapping[type[Screen[Any]], frozenset[str]] = field(default_factory=dict)
    """Keys not pressed while a screen of this class is on top: they quit or leave."""
    reopen: Reopen | None = None
    """How a dialog the walk closed is opened again (None: it cannot be any more); the
    steps it takes are the walk's too."""
    over: tuple[type[Screen[Any]], ...] = ()
    """Screens besides dialogs that may lie over the walked one (its own sub-screens)."""
    over_when: Callable[[App[Any]], bool] | None = None
    """When the walk is over before its steps are (a dialog with nothing left to offer)."""

    def barred(self, top: Screen[Any] | None) -> frozenset[str]:
        """The keys not pressed with `top` on top (None: with any screen on top, for a
        burst, whose later keys may land on a screen an earlier one opened or closed)."""
        keys = QUITS
        for kind, more in self.leaving.items():
            if top is None or isinstance(top, kind):
                keys |= more
        return keys


class WalkFailed(AssertionError):
    pass


def draw(rng: random.Random, scene: Scene, top: Screen[Any], small: bool) -> Step:
    """The next step: mostly moving and paging, then acting (Esc and Enter most), typing,
    now and then a burst of keys or a resize (soon after one too small for raceday: a
    person makes it bigger)."""
    roll = rng.random()
    if roll < (0.3 if small else 0.06):
        return a_size(rng)
    if roll < 0.14:
        barred = scene.barred(None)
        return tuple(a_key(rng, rng.random(), barred) for _ in range(rng.randint(2, 4)))
    return a_key(rng, rng.random(), scene.barred(top))


def a_key(rng: random.Random, roll: float, barred: frozenset[str]) -> str:
    pool = (NAVIGATION if roll < 0.5 else ("escape", "enter") if roll < 0.62
            else ACTIONS if roll < 0.82 else TYPED)
    keys = [k for k in pool if k not in barred] or [k for k in NAVIGATION if k not in barred]
    return rng.choice(keys)


def a_size(rng: random.Random) -> tuple[int, int]:
    roll = rng.random()
    if roll < 0.25:  # too small for raceday: its notice, then back
        if rng.random() < 0.5:
            return rng.randint(SMALLEST[0], 79), rng.randint(SMALLEST[1], LARGEST[1])
        return rng.randint(SMALLEST[0], LARGEST[0]), rng.randint(SMALLEST[1], 23)
    if roll < 0.55:
        return rng.choice(EDGES)
    return rng.randint(80, LARGEST[0]), rng.randint(24, LARGEST[1])


async def _yield_only(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
    """Pilot's wait for an idle process, without its 20 ms sleeps: `quiet` waits instead."""
    for _ in range(3):
        await asyncio.sleep(0)


@pytest.fixture(autouse=True)
def no_idle_sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot sleeps at least 60 ms a key to see the process idle (a walk's 300 keys: 18 s
    of sleeping); `quiet` waits for the messages and workers themselves."""
    monkeypatch.setattr(textual.pilot, "wait_for_idle", _yield_only)
    monkeypatch.setattr(textual.app, "wait_for_idle", _yield_only)


async def quiet(pilot: Pilot[Any], timeout: float = 60.0) -> None:
    """Wait until the app is idle: every worker done (but those that follow a session for
    good) and no message waiting, twice in a row, so a walk plays the same every time. An
    app that never gets there (messages that answer each other for good) fails the walk."""
    app = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    calm = 0
    for _ in range(200):
        await pilot.pause()
        busy = [w for w in app.workers if w.group not in LONG_LIVED and not w.is_finished]
        started = [w for w in busy if w.state is not WorkerState.PENDING]
        if started:
            await asyncio.wait_for(asyncio.gather(*(w.wait() for w in started),
                                                  return_exceptions=True),
                                   max(0.1, deadline - loop.time()))
        if busy or waiting(app):
            calm = 0
            continue
        calm += 1
        if calm == 2:
            return
    raise WalkFailed(f"the app never became idle: {waiting(app) or 'no'} messages waiting, "
                     f"{len(busy)} workers busy (messages that answer each other for good?)")


def waiting(app: App[Any]) -> int:
    """Messages waiting for the app and the screen on top (and its widgets)."""
    if not app.is_running or not app.screen_stack:
        return 0
    return sum(p.message_queue_size for p in (app, *app.screen.walk_children(with_self=True)))


async def step(pilot: Pilot[Any], move: Step) -> None:
    if isinstance(move, str):
        await pilot.press(move)
    elif isinstance(move[0], int) and isinstance(move[1], int):
        await pilot.resize_terminal(move[0], move[1])
    else:
        await pilot.press(*(str(key) for key in move))
    await quiet(pilot)


class ErrorLog(logging.Handler):
    """What raceday logged as an error (the crash panel's backstop logs there too)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def trouble(app: App[Any], errors: ErrorLog) -> str | None:
    """What went wrong, if anything: an error that escaped, a crash panel, an error logged."""
    if app._exception is not None:
        return f"{type(app._exception).__name__}: {app._exception}"
    if app.return_code is not None:
        return f"the app ended with return code {app.return_code}"
    if not app.is_running:
        return "the app is not running"
    for screen in app.screen_stack:
        if isinstance(screen, CrashScreen):
            return f"a crash panel: {screen.what}: {screen.error}\n{screen.trace}"
    if errors.records:
        record = errors.records[0]
        return f"logged as an error: {record.getMessage()}\n{errors.format(record)}"
    return None


def too_small(app: App[Any]) -> bool:
    return app.size.width < MIN_SIZE[0] or app.size.height < MIN_SIZE[1]


def placed(app: App[Any], target: Screen[Any], scene: Scene) -> bool:
    """The walked screen is on top, or only dialogs (and its own sub-screens) are over it."""
    stack = app.screen_stack
    if target not in stack:
        return False
    return all(isinstance(s, (ModalScreen, TooSmallScreen, *scene.over))
               for s in stack[stack.index(target) + 1:])


async def walk(pilot: Pilot[Any], scene: Scene, rng: random.Random, count: int,
               steps: list[Step], errors: ErrorLog, seen: dict[str, int]) -> None:
    """`count` steps drawn by `rng` (each appended to `steps` before it is taken); `seen`
    counts the screens each step was taken on."""
    app = pilot.app
    target = await scene.reach(pilot)
    await quiet(pilot)
    if (problem := trouble(app, errors)) is not None:
        raise WalkFailed(f"before the walk: {problem}")
    for _ in range(count):
        seen[type(app.screen).__name__] = seen.get(type(app.screen).__name__, 0) + 1
        move = draw(rng, scene, app.screen, too_small(app))
        steps.append(move)
        await step(pilot, move)
        if (problem := trouble(app, errors)) is not None:
            raise WalkFailed(problem)
        if not placed(app, target, scene):
            again = await scene.reopen(pilot, steps) if scene.reopen is not None else None
            if again is None and scene.over_when is not None and scene.over_when(app):
                target = app.screen  # what the dialog was over
                break
            if again is None:
                raise WalkFailed(f"the walk left {type(target).__name__} for "
                                 f"{type(app.screen).__name__}: bar the key that left "
                                 "(Scene.leaving) or open it again (Scene.reopen)")
            target = again
    steps.append(scene.size)  # and back
    await step(pilot, scene.size)
    if (problem := trouble(app, errors)) is not None:
        raise WalkFailed(problem)
    top = app.screen
    assert placed(app, target, scene) and top.is_attached and not isinstance(top, TooSmallScreen)
    assert app.export_screenshot()  # it draws


def report(name: str, seed: int, steps: list[Step], problem: str) -> str:
    lines = [f"key walk {name!r}, seed {seed}: step {len(steps)} of the walk went wrong:",
             problem.rstrip(), "", f"the steps, as `drive` replays them ({len(steps)}):",
             "steps = ["]
    lines += [f"    {s!r}," for s in steps]
    lines.append("]")
    return "\n".join(lines)


async def drive(pilot: Pilot[Any], steps: list[Step]) -> None:
    """Replay the steps a walk printed (for a regression test)."""
    for move in steps:
        await step(pilot, move)


# -- the scenes -----------------------------------------------------------------------------


async def top_is(pilot: Pilot[Any], kind: type[Screen[Any]], timeout: float = 30) -> Screen[Any]:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, kind), timeout=timeout)
    await quiet(pilot)
    return pilot.app.screen


def opened_by(key: str, kind: type[Screen[Any]]) -> Reopen:
    """A dialog of `kind` the play screen opens with `key` (None once it opens none)."""

    async def reopen(pilot: Pilot[Any], steps: list[Step]) -> Screen[Any] | None:
        app = pilot.app
        while isinstance(app.screen, ModalScreen | TooSmallScreen):  # help over it, say
            if isinstance(app.screen, kind):
                return app.screen
            move: Step = "escape" if isinstance(app.screen, ModalScreen) else (120, 40)
            steps.append(move)
            await step(pilot, move)
        if not isinstance(app.screen, PlayScreen):
            return None
        steps.append(key)
        await step(pilot, key)
        return app.screen if isinstance(app.screen, kind) else None

    return reopen


async def reach_play(pilot: Pilot[Any]) -> Screen[Any]:
    await start_play(pilot)
    return await top_is(pilot, PlayScreen)


def playing(scene_app: App[Any], **more: Any) -> Scene:
    return Scene(scene_app, reach_play, leaving={PlayScreen: frozenset({"f4", "ctrl+r"})},
                 **more)


def a_dialog(scene_app: App[Any], key: str, kind: type[Screen[Any]],
             over_when: Callable[[App[Any]], bool] | None = None) -> Scene:
    reopen = opened_by(key, kind)

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await reach_play(pilot)
        dialog = await reopen(pilot, [])
        assert dialog is not None, f"{key} opened no {kind.__name__}"
        return dialog

    return Scene(scene_app, reach, leaving={PlayScreen: frozenset({"f4", "ctrl+r"})},
                 reopen=reopen, over_when=over_when)


SceneMaker = Callable[[pytest.FixtureRequest, ExitStack], Scene]


def launcher(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await settle(pilot)
        return await top_is(pilot, LauncherScreen)

    return Scene(make_app(None), reach,
                 leaving={LauncherScreen: frozenset({"q", "escape", "enter"})})


def briefing(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")
    flagship: Exercise = request.getfixturevalue("flagship")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await settle(pilot)
        return await top_is(pilot, BriefingScreen)

    return Scene(make_app(flagship), reach, leaving={BriefingScreen: frozenset({"enter"})})


def cast(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")
    flagship: Exercise = request.getfixturevalue("flagship")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await settle(pilot)
        await pilot.press("enter")
        return await top_is(pilot, CastScreen)

    # Enter after the last name, and space on the Start button, start the night
    return Scene(make_app(flagship, mode="team"), reach,
                 leaving={CastScreen: frozenset({"enter", "space", "ctrl+s", "escape"})})


def play_flagship(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")
    return playing(make_app(request.getfixturevalue("flagship")))


def play_recovery(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    """Onboarding: the guide and the world panel's fuller view are walked too."""
    make_app: MakeApp = request.getfixturevalue("make_app")
    return playing(make_app(load_named_exercise("recovery-under-load"), mode="onboarding"))


def play_hot_seat(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    """Two players at one keyboard (F2 passes it), cast on the way in."""
    make_app: MakeApp = request.getfixturevalue("make_app")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await settle(pilot)
        await pilot.press("enter")
        await top_is(pilot, CastScreen)
        await pilot.press("A", "n", "a", "enter", "B", "o", "ctrl+s")
        await settle(pilot)
        return await top_is(pilot, PlayScreen)

    return Scene(make_app(request.getfixturevalue("flagship"), mode="team"), reach,
                 leaving={PlayScreen: frozenset({"f4", "ctrl+r"})})


def replay(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await reach_play(pilot)
        await pilot.press("ctrl+r")
        screen = await top_is(pilot, ReplayScreen)
        assert isinstance(screen, ReplayScreen)
        await wait_until(pilot, lambda: screen.walk is not None, timeout=60)
        await quiet(pilot)
        return screen

    return Scene(make_app(request.getfixturevalue("flagship")), reach,
                 leaving={ReplayScreen: frozenset({"escape", "q"})})


def end(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await reach_play(pilot)
        return await end_play(pilot)

    # d opens the debrief over it (Esc, q or d closes it); q and Esc ask launcher-or-quit
    return Scene(make_app(request.getfixturevalue("mini")), reach, over=(DebriefScreen,),
                 leaving={EndScreen: frozenset({"l", "n", "q", "escape"})})


def review(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    app = ReviewApp.from_folder(TRANSCRIPTS / "night")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await quiet(pilot)
        return app.screen_stack[0]

    # q quits (on the debrief too: it closes it, but one key barred everywhere is simpler)
    return Scene(app, reach, over=(DebriefScreen,), leaving={Screen: frozenset({"q"})})


def help_screen(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await reach_play(pilot)
        await pilot.press("f1")
        return await top_is(pilot, HelpScreen)

    return Scene(make_app(request.getfixturevalue("flagship")), reach,
                 leaving={HelpScreen: frozenset({"escape", "f1", "q"})})


def monitor_dialog(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")
    return a_dialog(make_app(request.getfixturevalue("flagship")), "f7", MonitorDialog)


def declare_dialog(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")
    return a_dialog(make_app(request.getfixturevalue("flagship")), "f8", ChoiceDialog)


def hint_dialog(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    make_app: MakeApp = request.getfixturevalue("make_app")
    return a_dialog(make_app(request.getfixturevalue("flagship")), "f9", ChoiceDialog,
                    over_when=every_hint_taken)


def every_hint_taken(app: App[Any]) -> bool:
    """F9 opens nothing once every hint is taken: it says so."""
    return any("No hint left" in str(n.message) for n in app._notifications)


def harden(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    from raceday.tui.screens.harden import HardenScreen

    make_app: MakeApp = request.getfixturevalue("make_app")

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await reach_play(pilot)
        await pilot.press("f4")
        return await top_is(pilot, HardenScreen)

    return Scene(make_app(request.getfixturevalue("flagship")), reach,
                 leaving={HardenScreen: frozenset({"escape", "f4", "ctrl+r"})})


TEAM_TOKENS = {"enactor-a": "token-a", "enactor-b": "token-b", "responder": "token-r"}


def a_host(request: pytest.FixtureRequest, stack: ExitStack) -> Host:
    """A team session of the flagship, its host pumping in a thread (as `raceday host`)."""
    host = Host(request.getfixturevalue("flagship"), seats_from_roles(tuple(TEAM_TOKENS)),
                transcripts=Path("transcripts"), pace=Pace.TURNS, tokens=TEAM_TOKENS)
    host.start()
    stack.callback(host.close)
    stop = threading.Event()
    thread = threading.Thread(target=host.run, args=(stop,), daemon=True)
    thread.start()
    stack.callback(thread.join, 5)
    stack.callback(stop.set)
    return host


def console(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    host = a_host(request, stack)
    rita = Client(host.folder, TEAM_TOKENS["responder"], "Rita")
    rita.wait(rita.join())

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        return await top_is(pilot, ConsoleScreen)

    # e asks to end the night for everyone (y, a letter, says yes)
    return Scene(ConsoleApp(host, run_host=False), reach, size=(140, 44),
                 leaving={ConsoleScreen: frozenset({"e"})})


def seat(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    host = a_host(request, stack)
    client = Client(host.folder, TEAM_TOKENS["responder"], "Rita")
    app = SeatApp(client, seat_settings(client), live_ticks=False)

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        await wait_until(pilot, lambda: isinstance(app.screen, SeatScreen)
                         and app.screen.snapshot is not None, timeout=30)
        await quiet(pilot)
        return app.screen

    return Scene(app, reach, size=(130, 42), leaving={PlayScreen: frozenset({"f4", "ctrl+r"})})


def watch(request: pytest.FixtureRequest, stack: ExitStack) -> Scene:
    host = a_host(request, stack)

    async def reach(pilot: Pilot[Any]) -> Screen[Any]:
        return await top_is(pilot, WatchScreen)

    return Scene(WatchApp(View(host.folder)), reach, leaving={WatchScreen: frozenset({"q"})})


SCENES: dict[str, tuple[SceneMaker, int, int]] = {
    # name: (the scene, seeds, steps per seed): about 85 s in all on one core
    "launcher": (launcher, 1, 300),
    "briefing": (briefing, 1, 200),
    "cast": (cast, 1, 150),
    "play-flagship": (play_flagship, 1, 200),
    "play-recovery-under-load": (play_recovery, 1, 120),
    "play-hot-seat": (play_hot_seat, 1, 150),
    "replay": (replay, 1, 300),
    "end": (end, 1, 200),
    "review": (review, 1, 200),
    "help": (help_screen, 1, 150),
    "f7-monitor": (monitor_dialog, 1, 150),
    "f8-declare": (declare_dialog, 1, 150),
    "f9-hint": (hint_dialog, 1, 200),
    "harden": (harden, 1, 150),
    "team-console": (console, 1, 200),
    "team-seat": (seat, 1, 200),
    "team-watch": (watch, 1, 100),
}


def _walks() -> Iterator[Any]:
    """Each scene with its seeds; RACEDAY_KEY_WALK=0-9:600 walks seeds 0 to 9, 600 steps."""
    wanted = os.environ.get("RACEDAY_KEY_WALK", "")
    for name, (_, seeds, count) in SCENES.items():
        if wanted:
            span, _, steps = wanted.partition(":")
            first, _, last = span.partition("-")
            numbers = range(int(first), int(last or first) + 1)
            count = int(steps) if steps else count
        else:
            numbers = range(seeds)
        for seed in numbers:
            yield pytest.param(name, seed, count, id=f"{name}-{seed}")


@pytest.mark.parametrize("name, seed, count", _walks())
async def test_a_screen_survives_a_walk_of_keys_and_sizes(
        name: str, seed: int, count: int, request: pytest.FixtureRequest) -> None:
    maker = SCENES[name][0]
    errors = ErrorLog()
    errors.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger = logging.getLogger("raceday")
    steps: list[Step] = []
    seen: dict[str, int] = {}
    with ExitStack() as stack:
        scene = maker(request, stack)
        logger.addHandler(errors)
        stack.callback(logger.removeHandler, errors)
        scene.app.animation_level = "none"  # as make_app does: no scroll waits a second
        rng = random.Random(f"{name}:{seed}")
        try:
            async with scene.app.run_test(size=scene.size) as pilot:
                await walk(pilot, scene, rng, count, steps, errors, seen)
        except Exception as exc:  # the app's own error (run_test raises it) or the walk's
            problem = str(exc) if isinstance(exc, WalkFailed) else \
                f"{type(exc).__name__}: {exc}"
            pytest.fail(report(name, seed, steps, problem))
    print(f"{name}, seed {seed}: {sum(seen.values())} steps on", ", ".join(
        f"{screen} {n}" for screen, n in sorted(seen.items(), key=lambda kv: -kv[1])))


# -- what the walks found -------------------------------------------------------------------


async def test_review_a_away_from_the_first_event_stays_on_the_event_in_hand() -> None:
    """The review walk: End, then a (every event listed) sent the review back and forth
    between the first event and the last for good (the table's highlights of its clearing
    and filling were taken for the reader's moves), and closing it raised NoMatches."""
    app = ReviewApp.from_folder(TRANSCRIPTS / "night")
    async with app.run_test(size=(120, 40)) as pilot:
        await quiet(pilot)
        await drive(pilot, ["end", "a"])  # quiet fails if it never settles
        assert app.index == len(app.events) - 1 and len(app.rows) == len(app.events)
        await drive(pilot, ["a", "home", "end"])
        assert app.index == len(app.events) - 1
    # and it closes without an error (run_test raises the app's own)
