"""`raceday serve --join`: each browser takes the next free seat of a team session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from chromium import Browser, Page, available
from serving import Served, start_serve, stop_serve

from raceday.team.client import HOST_SILENT_S
from raceday.web.seat import claim


def ended(page: Page) -> bool:
    return bool(page.evaluate("document.body.classList.contains('-closed')"))


def seats_running(served: Served) -> bool:
    """Whether the server still has a seat's process (its last line not yet written)."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"PPid:\t{served.process.pid}\n" in status.read_text():
                return True
        except OSError:
            continue
    return False


def take_seat(page: Page, name: str = "") -> None:
    """The browser asks its player's name first; Enter alone keeps the seat's own."""
    page.wait_for("Your name, for seat", timeout=90)
    page.focus()
    page.settle()
    if name:
        page.type(name)
    page.press("Enter")
    page.wait_for(f"({name or 'browser-1'})", timeout=90)  # the seat's status bar: role (name)


def wait_until(done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not within {seconds:.0f} s"
        time.sleep(0.1)


def test_each_claim_takes_the_next_free_seat_and_a_gone_process_frees_its_own(
        tmp_path: Path) -> None:
    assert [claim(tmp_path, 2), claim(tmp_path, 2), claim(tmp_path, 2)] == [0, 1, None]
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (tmp_path / "1").write_text(gone.stdout.strip())  # seat 1's browser closed: its process ended
    assert claim(tmp_path, 2) == 1
    assert (tmp_path / "1").read_text() == str(os.getpid())


def test_join_needs_tokens(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "raceday", "serve", "--join", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "RACEDAY_TOKENS"})
    assert done.returncode == 2
    assert done.stderr.startswith("raceday: --join needs the seats' tokens: --token T")


needs_chromium = pytest.mark.skipif(not available(), reason="no chromium (/usr/bin/chromium): "
                                    "apt-get install chromium to test raceday in a browser")


def start_host(folder: Path) -> tuple[subprocess.Popen[str], str, str]:
    """`raceday host --headless` of the lost update: the host, its session and its one token."""
    host = subprocess.Popen(
        [sys.executable, "-m", "raceday", "host", "lost-update-basics", "--headless", "--pace",
         "turns", "--transcripts", str(folder / "hosted")],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert host.stdout is not None
    lines = [host.stdout.readline() for _ in range(4)]
    joins = [m for line in lines if (m := re.search(r"raceday join (\S+) .*--token (\S+)", line))]
    assert len(joins) == 1, lines  # the exercise's one player seat
    session, token = joins[0].groups()
    return host, session, token


@needs_chromium
def test_a_browser_on_a_session_that_is_over_is_shown_it_ended(tmp_path: Path) -> None:
    host, session, token = start_host(tmp_path)
    host.send_signal(2)  # the facilitator ends it: scored, over
    host.communicate(timeout=60)
    served = start_serve(tmp_path, "--join", session, f"--token={token}")  # a token may start with -
    try:
        with Browser() as browser:
            page = browser.page(served.url)
            wait_until(lambda: ended(page), 90)  # "Session ended.", not a page that never draws
    finally:
        printed = stop_serve(served)
    assert "is over" in printed


@needs_chromium
def test_a_browser_takes_the_seat_and_the_next_is_told_every_seat_is_taken(
        tmp_path: Path) -> None:
    host, session, token = start_host(tmp_path)
    try:
        served = start_serve(tmp_path, "--join", session, f"--token={token}")  # a token may start with -
        try:
            with Browser() as browser:
                seated = browser.page(served.url)
                take_seat(seated, "Ana Ruiz")
                wait_until(lambda: any(  # her name, in the transcript
                    '"seat_joined"' in line and '"Ana Ruiz"' in line for line in
                    (Path(session) / "events.jsonl").read_text(encoding="utf-8").splitlines()),
                    30)
                assert "The lost update" in seated.screen_text()
                second = browser.page(served.url)  # a second browser: no seat left
                second.wait_for("raceday: every seat of", timeout=90)
                told = "".join(second.screen_text().split())  # the line wraps on the page
                assert "istaken(1seats):askthehostforanothertoken" in told
                assert not ended(second)
                second.focus()
                second.type("q")  # closes it: the page's "Session ended." dialog
                wait_until(lambda: ended(second), 30)
        finally:
            stop_serve(served)
    finally:
        host.send_signal(2)
        host.communicate(timeout=60)


@needs_chromium
def test_a_seat_whose_host_is_gone_is_told_and_its_page_closes(tmp_path: Path) -> None:
    """The host's process killed mid-session (no score, nobody to end it): the browser's seat
    notices its beats go unanswered, says so on the server, and its page says the session
    ended, instead of a screen that waits for a host that is not coming back."""
    host, session, token = start_host(tmp_path)
    served = start_serve(tmp_path, "--join", session, f"--token={token}")
    try:
        with Browser() as browser:
            page = browser.page(served.url)
            take_seat(page)
            host.kill()
            host.communicate(timeout=60)
            gone = time.monotonic()
            wait_until(lambda: ended(page), 30)
            assert time.monotonic() - gone < 3 * HOST_SILENT_S  # was: open for good
            wait_until(lambda: not seats_running(served), 30)
    finally:
        printed = stop_serve(served)
    assert "the host has not answered for" in printed and "this browser's seat is closed" \
        in printed, printed


@needs_chromium
def test_a_seat_whose_host_never_answers_its_join_is_told_and_its_page_closes(
        tmp_path: Path) -> None:
    """The host gone before the browser came (killed, the session not over): the seat's join
    is never answered. It is told as a silent host is, not after the join's 30 s wait, and
    its page says the session ended."""
    host, session, token = start_host(tmp_path)
    host.kill()
    host.communicate(timeout=60)
    served = start_serve(tmp_path, "--join", session, f"--token={token}")
    try:
        with Browser() as browser:
            page = browser.page(served.url)
            take_seat(page)  # the seat's screen, waiting for the host
            asked = time.monotonic()
            wait_until(lambda: ended(page), 60)
            assert time.monotonic() - asked < 3 * HOST_SILENT_S  # was: an error after 30 s, open
            wait_until(lambda: not seats_running(served), 30)
    finally:
        printed = stop_serve(served)
    assert "the host has not answered for" in printed and "this browser's seat is closed" \
        in printed, printed
