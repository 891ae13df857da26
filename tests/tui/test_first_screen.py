"""The first screen is the screen stack's base: the ways back and forward still go where they
went when it was pushed over Textual's blank screen."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from tui_fixtures import DATA, MakeApp, settle, start_play

import raceday.tui.app as app_module
from raceday import cli
from raceday.engine import load
from raceday.exercise.catalog import BUNDLED_DIR
from raceday.exercise.model import Exercise
from raceday.tui.app import RacedayApp
from raceday.tui.briefing_head import BriefingHead, load_keeping_head, read_head
from raceday.tui.prerendered import Prerendered
from raceday.tui.screens import briefing as briefing_module
from raceday.tui.screens.briefing import BriefingScreen, PendingExercise
from raceday.tui.screens.cast import CastScreen
from raceday.tui.screens.launcher import LauncherScreen
from raceday.tui.screens.play import PlayScreen

pytestmark = pytest.mark.tui


async def test_escape_from_a_briefing_the_launcher_opened_goes_back_to_it(
        make_app: MakeApp) -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        assert launcher.query_one("#exercises", DataTable).row_count > 0
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BriefingScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen_stack[-1] is launcher
        await pilot.press("enter")
        await settle(pilot)
        await start_play(pilot)
        assert isinstance(app.screen, PlayScreen)


async def test_escape_on_the_briefing_of_play_id_stays_and_enter_starts(
        make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        briefing = app.screen
        assert isinstance(briefing, BriefingScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen_stack[-1] is briefing
        await start_play(pilot)
        assert isinstance(app.screen, PlayScreen)


async def test_a_terminal_too_small_at_start_shows_one_notice_and_then_the_briefing(
        make_app: MakeApp, mini: Exercise) -> None:
    app = make_app(mini)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        assert [type(s).__name__ for s in app.screen_stack] == ["BriefingScreen",
                                                               "TooSmallScreen"]
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)


# -- `raceday play ID`: the briefing drawn first, the exercise loaded after ---------------------


def _pending(path: Path) -> PendingExercise:
    """The exercise at `path` as `raceday play` finds it once its head is kept (loaded once)."""
    load_keeping_head(path)
    head = read_head(path)
    assert head is not None
    return PendingExercise(path, head)


def _play(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[RacedayApp],
                                                                      list[list[str]]]:
    """`raceday play ...` run headless: its status, its app, and the briefing as drawn first
    and once every worker is done (then the app exits)."""
    ran: list[RacedayApp] = []
    shown: list[list[str]] = []

    def headless(app: RacedayApp) -> int:
        ran.append(app)

        async def look(pilot: Pilot[object]) -> None:
            await pilot.pause()
            shown.append(_shown(app))
            await settle(pilot)
            shown.append(_shown(app))
            app.exit(0)

        result = app.run(headless=True, size=(120, 40), auto_pilot=look)
        return result if isinstance(result, int) else 0

    monkeypatch.setattr(app_module, "run_app", headless)
    return cli.main(["play", *argv]), ran, shown


def _shown(app: RacedayApp) -> list[str]:
    """The briefing's text as drawn: its bar, the situation and the world's tables."""
    screen = app.screen
    assert isinstance(screen, BriefingScreen)
    lines = []
    for part in ("#briefing-bar", "#situation", "#schema"):
        content = screen.query_one(part, Static).content
        lines.append(str(content) if not isinstance(content, Prerendered)
                     else "".join(segment.text for segment in content.segments))
    return lines


def held(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> threading.Event:
    """`module.name` made to wait (in its worker) until the returned gate is set."""
    gate = threading.Event()
    real = getattr(module, name)

    def slow(*args: Any, **kwargs: Any) -> Any:
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, slow)
    return gate


async def test_play_id_draws_the_briefing_at_once_and_then_the_whole_exercise(
        make_app: MakeApp, mini: Exercise, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))  # no body kept yet
    app = make_app(None)
    app.pending = _pending(DATA / "mini-dns")
    gate = held(monkeypatch, load, "load_exercise")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = _shown(app)
        assert first[1] == "Mini DNS race\n\nA stale plan and a clean-up empty one " \
                           "endpoint's answer."
        assert app.exercise is None and not first[2]
        gate.set()
        await settle(pilot)
        expected = _shown(app)
        assert app.exercise is not None and app.exercise.id == "mini-dns"
    assert first[0] == expected[0]  # the bar: title, the clock's start and zone
    assert "Roles" in expected[1] and "endpoint" in expected[2]
    loaded = make_app(mini)  # the exercise given loaded draws the same briefing
    async with loaded.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert _shown(loaded) == expected


async def _start(make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, cache: Path,
                 path: Path) -> tuple[str, str]:
    """One `raceday play ID` with `cache` as its cache folder: the situation as drawn while
    the exercise is still loading, and as rendered once it has loaded."""
    app = make_app(None)
    app.pending = _pending(path)
    gate = held(monkeypatch, load, "load_exercise")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        while_loading = _shown(app)[1]
        assert app.exercise is None
        gate.set()
        await settle(pilot)
        rendered = _shown(app)[1]
    monkeypatch.undo()
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    return while_loading, rendered


async def test_the_next_start_draws_the_body_the_last_one_rendered_before_it_loads(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The second `raceday play ID` shows the situation (length, level, clock, mode, the
    briefing's text) while the exercise is still loading, and it reads as the rendering
    that replaces it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    first, rendered_first = await _start(make_app, monkeypatch, cache, DATA / "mini-dns")
    assert "· level " not in first  # nothing kept: the title and summary only
    second, rendered = await _start(make_app, monkeypatch, cache, DATA / "mini-dns")
    assert "· level " in second and "Roles" in second
    assert second.strip() == rendered.strip()
    assert rendered_first == rendered


async def test_a_long_briefings_next_start_draws_a_whole_screenful_before_it_loads(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The flagship's situation is rendered in two parts, the first ending above its roles
    table: kept as it was, the second start showed the roles only once the exercise had
    loaded (issue 63's measure ends on "The roles" at 120x40). A screenful of lines is kept,
    whatever the parts."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    flagship = BUNDLED_DIR / "dynamodb-dns-race"
    await _start(make_app, monkeypatch, cache, flagship)
    while_loading, rendered = await _start(make_app, monkeypatch, cache, flagship)
    assert "The roles" in while_loading and "responder" in while_loading
    assert rendered.startswith(while_loading.rstrip("\n"))  # the same lines, then the rest
    assert len(while_loading.splitlines()) >= 40  # at least the screen's height


async def test_enter_pressed_before_the_exercise_is_loaded_starts_play_once_it_is(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(None)
    app.pending = _pending(DATA / "mini-dns")
    gate = held(monkeypatch, load, "load_exercise")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
        gate.set()
        await settle(pilot)
        assert isinstance(app.screen, PlayScreen)


async def test_enter_pressed_before_the_first_look_starts_the_load_at_once(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    # the load waited for the frame after the first (its first look) even when Enter had
    # come: that refresh is the wait here (the first look never comes), and the load is one
    app = make_app(None)
    app.pending = _pending(DATA / "mini-dns")
    monkeypatch.setattr(BriefingScreen, "_first_look", lambda self: None)
    loads: list[Path] = []
    real = load.load_exercise

    def counted(path: Path, *args: Any, **kwargs: Any) -> Exercise:
        loads.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(load, "load_exercise", counted)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, PlayScreen)
        await pilot.press("enter")  # on the play screen now: no second load
        await settle(pilot)
    assert len(loads) == 1


def test_a_cold_cache_loads_first_and_the_next_start_draws_the_kept_head_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first start (nothing kept) loads the exercise before the briefing opens, as it
    always did, and keeps its head; the second draws that head before loading."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    folder = DATA / "mini-dns"
    assert read_head(folder) is None
    status, ran, cold = _play([str(folder)], monkeypatch)
    assert status == 0 and ran[0].pending is None
    assert cold[0][0] == cold[1][0] and "Roles" in cold[1][1] and "endpoint" in cold[1][2]
    head = BriefingHead.of(load.load_exercise(folder))
    assert read_head(folder) == head
    status, ran, warm = _play([str(folder)], monkeypatch)
    assert status == 0 and ran[0].pending == PendingExercise(folder, head)
    assert warm[0][0] == cold[1][0]  # the bar: title, the clock's start and zone
    assert warm[1] == cold[1]
    assert ran[0].exercise is not None and ran[0].exercise.id == "mini-dns"


def test_a_damaged_cache_is_a_miss_and_play_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(cache))
    _pending(DATA / "mini-dns")
    for kept in (cache / "briefing-heads").iterdir():
        kept.write_text('{"title": "An old t')
    status, ran, shown = _play([str(DATA / "mini-dns")], monkeypatch)
    assert status == 0 and ran[0].pending is None
    assert "Mini DNS race" in shown[0][0] and "Roles" in shown[1][1]
    assert read_head(DATA / "mini-dns") is not None  # kept again


def test_a_broken_exercise_still_gives_its_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An edited exercise.yaml is a miss: loaded before the screen opens, its problem is one
    line, exit 2, and no screen opened."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "mini-dns"
    shutil.copytree(DATA / "mini-dns", folder)
    _pending(folder)
    yaml_file = folder / "exercise.yaml"
    yaml_file.write_text(yaml_file.read_text().replace("level: beginner\n",
                                                       "level: beginner\nbogus_key: 1\n"))
    status, ran, _ = _play([str(folder)], monkeypatch)
    assert status == 2 and ran == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{yaml_file}:6" in err and 'unknown key "bogus_key"' in err


def test_a_problem_found_after_a_kept_first_frame_still_gives_its_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """exercise.yaml as it was (its head kept, so the screen opens) but its world.sql broken:
    the load after the first frame finds it; the screen closes and the CLI says what and
    where, exit 2."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "mini-dns"
    shutil.copytree(DATA / "mini-dns", folder)
    _pending(folder)
    world = folder / "world.sql"
    lines = world.read_text().count("\n")
    with world.open("a") as out:
        out.write("CREATE TABLE broken (\n")
    ran: list[RacedayApp] = []

    def headless(app: RacedayApp) -> int:
        ran.append(app)
        result = app.run(headless=True, size=(120, 40))
        return result if isinstance(result, int) else 0

    monkeypatch.setattr(app_module, "run_app", headless)
    assert cli.main(["play", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{world}:{lines + 1}" in err
    assert len(ran) == 1 and ran[0].pending is not None and ran[0].exercise is None


async def test_a_briefing_left_while_it_rendered_shows_all_of_it_on_return(
        make_app: MakeApp, mini: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enter before the world's tables were read (team mode: to the cast screen), then back:
    the briefing is whole again."""
    gate = held(monkeypatch, briefing_module, "read_schema")
    app = make_app(mini, mode="team")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        briefing = app.screen
        assert isinstance(briefing, BriefingScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CastScreen)
        gate.set()
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen_stack[-1] is briefing
        shown = _shown(app)
        assert "Roles" in shown[1] and "The world's tables" in shown[2]
        assert "endpoint" in shown[2]


async def test_enter_while_the_briefing_renders_stops_the_rendering_and_plays(
        make_app: MakeApp, mini: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enter pressed while the Markdown renders (in its worker) stops it within a block or
    two: left to finish, it held the interpreter while the play screen opened, and an Enter
    pressed as the briefing showed waited for it."""
    import rich.markdown
    from rich.console import Console

    gate, pulled = threading.Event(), [0]

    class Slow(rich.markdown.Markdown):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            for segment in super().__rich_console__(console, options):
                pulled[0] += 1
                if pulled[0] == 10:
                    gate.wait(10)  # the player presses Enter here
                yield segment

    whole = briefing_module.situation_markdown(mini, make_app(mini).settings)
    console = Console(width=100)
    everything = len(list(console.render(rich.markdown.Markdown(whole), console.options)))
    monkeypatch.setattr(rich.markdown, "Markdown", Slow)
    app = make_app(mini)
    async with app.run_test(size=(120, 40)) as pilot:
        while pulled[0] < 10:
            await pilot.pause(0.01)
        await pilot.press("enter")
        gate.set()
        await settle(pilot)
        assert isinstance(app.screen, PlayScreen)
    assert everything > 100 and pulled[0] <= 10 + 16 + 4  # the rest never rendered


@pytest.mark.parametrize("kept", [False, True], ids=["loaded-first", "loaded-after-the-frame"])
def test_a_bug_in_the_load_ends_as_the_clis_internal_error_whichever_load_met_it(
        kept: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A load that raises something other than an exercise's problem (a bug): the app closes
    (no crash panel left waiting for a key) and the CLI says `internal error` in its one line,
    exit 1, as it does when the load runs before the screen opens."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    folder = DATA / "mini-dns"
    if kept:
        _pending(folder)

    def broken(*args: Any, **kwargs: Any) -> Exercise:
        raise RuntimeError("a bug in the loader")

    monkeypatch.setattr(load, "load_exercise", broken)
    ran: list[RacedayApp] = []
    screens: list[list[str]] = []

    def headless(app: RacedayApp) -> int:
        ran.append(app)

        async def look(pilot: Pilot[object]) -> None:
            await settle(pilot)  # the load, and what it posted
            screens.append([type(s).__name__ for s in app.screen_stack])
            app.exit(0)  # the app did not close itself: the test's way out

        result = app.run(headless=True, size=(120, 40), auto_pilot=look)
        return result if isinstance(result, int) else 0

    monkeypatch.setattr(app_module, "run_app", headless)
    assert cli.main(["play", str(folder)]) == 1
    assert len(ran) == int(kept)  # loaded first: no screen opened at all
    assert not any("CrashScreen" in stack for stack in screens)
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "raceday: internal error: RuntimeError('a bug in the loader')"
    assert "Traceback" in err[0]  # kept for a report, as for any internal error


@pytest.mark.parametrize("start", ["first", "kept"])
async def test_with_its_first_screenful_kept_the_briefing_renders_after_the_play_screens_module(
        make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        start: str) -> None:
    """A start that draws the kept screenful has nothing to render before the play screen's
    module is imported: an Enter pressed as the briefing shows waits for that module alone,
    and no Markdown is parsed for a briefing that is going away. A first start (nothing kept)
    renders the briefing while the module imports: the player is reading it."""
    import rich.markdown

    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    if start == "kept":  # a start before this one rendered the body and kept it
        app = make_app(None)
        app.pending = _pending(DATA / "mini-dns")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
    rendered = [0]

    class Counted(rich.markdown.Markdown):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            rendered[0] += 1
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(rich.markdown, "Markdown", Counted)
    importing = threading.Event()
    gate = threading.Event()

    def slow_import() -> None:
        importing.set()
        gate.wait(10)

    monkeypatch.setattr(briefing_module, "import_play_screen", slow_import)
    app = make_app(None)
    app.pending = _pending(DATA / "mini-dns")
    async with app.run_test(size=(120, 40)) as pilot:
        while not importing.is_set():  # the exercise is loaded; the module is importing
            await pilot.pause(0.01)
        await pilot.pause(0.1)
        if start == "kept":
            assert rendered[0] == 0 and "· level " in _shown(app)[1]
            await pilot.press("enter")
            gate.set()
            await settle(pilot)
            assert isinstance(app.screen, PlayScreen)
            assert rendered[0] == 0  # nothing rendered for a briefing left at once
        else:
            assert rendered[0] >= 1  # rendered while the module imported
            gate.set()
            await settle(pilot)
            assert "Roles" in _shown(app)[1]
