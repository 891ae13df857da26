"""`raceday serve`: the launcher in a browser (Debian's headless chromium), a statement typed
and run through the page, each browser its own session; the errors a person meets first."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from chromium import Browser, Page, available
from serving import Served, free_port

from raceday.cli import main

needs_chromium = pytest.mark.skipif(not available(), reason="no chromium (/usr/bin/chromium): "
                                    "apt-get install chromium to test raceday in a browser")
LAUNCHER = "The DNS race: us-east-1, 19-20 October 2025"  # the launcher's first exercise


def play_a_statement(page: Page, head: str, tail: str) -> str:
    """From the launcher: its briefing, the night, a statement typed and run with F5.

    The statement computes `head + tail`, so the result reaching the page proves it ran."""
    page.wait_for(LAUNCHER)
    page.focus()
    page.press("Enter")  # the briefing
    page.wait_for("Enter")
    page.settle()
    page.press("Enter")  # the night
    page.wait_for("F5 run")
    page.settle()
    since = len(page.screen_text())
    statement = f"SELECT '{head}' || '{tail}' AS checked;"
    page.type(statement)
    page.press("Enter")  # the editor's own statement moves down a line ...
    page.press("ArrowUp")  # ... and F5 runs the one under the cursor: ours
    page.settle()  # F5 is the app's own key: it would not wait for the editor's cursor
    page.press("F5")
    page.wait_for(head + tail, since=since)
    return statement


def statements_in(transcripts: Path) -> list[str]:
    """Every session's events, in each browser's own folder (transcripts/browser-ID/…)."""
    return sorted(p.read_text(encoding="utf-8")
                  for p in transcripts.glob("browser-*/*/events.jsonl"))


@needs_chromium
def test_the_browser_shows_the_launcher_and_runs_a_typed_statement(served: Served,
                                                                     tmp_path: Path) -> None:
    with Browser() as browser:
        page = browser.page(served.url)
        page.wait_for(LAUNCHER)
        page.settle()  # the frames drawn
        page.screenshot(tmp_path / "launcher.png")
        statement = play_a_statement(page, "browser", "-ok")
        page.settle()
        page.screenshot(tmp_path / "statement.png")
    keep = os.environ.get("RACEDAY_SCREENSHOTS")  # where a person wants to look at them
    if keep:
        for name in ("launcher.png", "statement.png"):
            shutil.copy(tmp_path / name, Path(keep) / name)
    assert (tmp_path / "statement.png").stat().st_size > 10_000  # a drawn page, not a blank one
    transcripts = statements_in(served.transcripts)
    assert len(transcripts) == 1
    assert statement in transcripts[0]  # the server's transcripts folder has it


@needs_chromium
def test_each_browser_plays_its_own_session(served: Served) -> None:
    with Browser() as browser:
        first, second = browser.page(served.url), browser.page(served.url)
        ours = (play_a_statement(first, "first", "-one"),
                play_a_statement(second, "second", "-two"))
        assert "first-one" not in second.screen_text()
    transcripts = statements_in(served.transcripts)
    assert len(transcripts) == 2
    for statement in ours:  # each in one session, not the other's
        assert [statement in t for t in transcripts].count(True) == 1


@needs_chromium
def test_a_browser_sees_only_its_own_sessions(served: Served) -> None:
    """A browser left mid-session finds it again (its cookie names its folder); another
    browser's launcher never lists it."""
    with Browser() as mine, Browser() as theirs:
        page = mine.page(served.url)
        play_a_statement(page, "mine", "-only")
        page.close()  # its process ends: the session is unfinished
        again = mine.page(served.url)
        again.wait_for("unfinished session (1)", timeout=90)
        other = theirs.page(served.url)
        other.wait_for(LAUNCHER)
        other.settle(quiet=2.0)
        assert "unfinished session" not in other.screen_text()
    [session] = list(served.transcripts.glob("browser-*/*/events.jsonl"))
    assert "mine" in session.read_text(encoding="utf-8")


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "raceday", "serve", "--port", str(port)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (f"raceday: cannot serve on 127.0.0.1:{port}: the port is in use "
                           "(choose another with --port)\n")
    assert done.stdout == ""


def test_without_textual_serve_it_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    assert main(["serve", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["raceday: `raceday serve` needs textual-serve, which is not "
                                "installed: pip install 'raceday[web]'"]


def test_a_bad_exercise_is_told_before_serving(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "raceday", "serve", "no-such-night", "--port",
                           str(free_port())], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "no-such-night" in done.stderr and len(done.stderr.splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_serve_loads_neither_textual_nor_textual_serve_until_it_serves() -> None:
    code = ("import sys, raceday.cli, raceday.web.browser_server, raceday.web.seat\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('textual', 'textual_serve', 'aiohttp')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_browser_of_an_unknown_night_draws_its_own() -> None:
    from raceday.web.browser_server import play_command

    command = play_command("dynamodb-dns-race", Path("t"), ("--unknown",))
    assert command[-1] == "--unknown" and "play" in command
    assert play_command("dynamodb-dns-race", Path("t"))[-2:] == ["--transcripts",
                                                                  str(Path("t").resolve())]


def test_an_unknown_night_is_the_hosts_not_a_joining_seats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--join", str(tmp_path), "--token", "t", "--unknown",
                 "--port", str(free_port())]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "raceday: --unknown goes with the host (raceday host --unknown): a seat plays the "
        "night the host drew"]
