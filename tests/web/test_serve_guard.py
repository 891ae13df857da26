"""`raceday serve` keeps its processes in hand: bounded messages and screens, malformed
input in one line, no listing of /static/, and every child ends with its browser and with
the server."""

from __future__ import annotations

import json
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import websocket
from serving import Served, start_serve, stop_serve

from raceday.web import guard


def _children(parent: int) -> set[int]:
    """The processes `parent` started (each browser's `raceday play`)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("PPid:") and int(line.split()[1]) == parent:
                found.add(int(status.parent.name))
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def _open(served: Served, size: str = "width=80&height=24") -> websocket.WebSocket:
    ws = websocket.create_connection(f"ws://127.0.0.1:{served.port}/ws?{size}", timeout=60)
    ws.recv()  # its first frame: the child is up
    return ws


def _gone_within(pids: set[int], seconds: float) -> float:
    started = time.monotonic()
    while _alive(pids):
        assert time.monotonic() - started < seconds, f"still running: {_alive(pids)}"
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.fixture
def served(tmp_path: Path) -> Served:
    return start_serve(tmp_path)


def test_a_3_mb_message_ends_that_browser_and_its_process(served: Served) -> None:
    try:
        ws = _open(served)
        [child] = _children(served.process.pid)
        ws.send(json.dumps(["stdin", "x" * 3_000_000]))
        with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError)):
            while True:  # the server closes the socket; nothing is played
                ws.recv()
        _gone_within({child}, 10)
        again = _open(served)  # its place is free, the server goes on
        again.close()
    finally:
        out = stop_serve(served)
    assert "it sent a message of more than 65536 bytes" in out
    assert "Traceback" not in out


def test_a_huge_resize_is_bounded_and_bad_json_is_one_line(served: Served) -> None:
    try:
        ws = _open(served)
        ws.send(json.dumps(["resize", {"width": 10000, "height": 10000}]))
        received = 0
        ws.settimeout(0.5)
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            try:
                received += len(ws.recv())
            except websocket.WebSocketTimeoutException:
                pass
        assert received < 5_000_000  # was 402 MB
        ws.settimeout(10)
        ws.send("{not json")
        with pytest.raises((websocket.WebSocketConnectionClosedException, ConnectionError)):
            while True:
                ws.recv()
    finally:
        out = stop_serve(served)
    assert "it sent a message that is not JSON" in out
    assert "Traceback" not in out


def test_static_lists_no_folder(served: Served) -> None:
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(served.url + "static/", timeout=10)
        assert refused.value.code in (403, 404)
    finally:
        stop_serve(served)


def test_ctrl_c_ends_the_server_and_every_child_within_seconds(served: Served) -> None:
    sockets = [_open(served) for _ in range(2)]
    children = _children(served.process.pid)
    assert len(children) == 2
    started = time.monotonic()
    stop_serve(served)
    assert time.monotonic() - started < 8
    assert served.process.returncode == 0
    _gone_within(children, 3)
    for ws in sockets:
        ws.close()


def test_kill_9_of_the_server_ends_every_child_within_seconds(served: Served) -> None:
    sockets = [_open(served) for _ in range(2)]
    children = _children(served.process.pid)
    assert len(children) == 2
    served.process.send_signal(signal.SIGKILL)  # no handler runs: the kernel ends them
    served.process.wait(timeout=10)
    _gone_within(children, 5)
    for ws in sockets:
        ws.close()


@pytest.mark.parametrize("text, why", [
    ("[]", "not one the page sends"),
    ('["exec", "rm"]', "not one the page sends"),
    ('["stdin", 5]', "keys that are not text"),
    ('["resize", 3]', "a resize without a size"),
    ("x" * 70_000, "a message of 70000 characters"),
])
def test_messages_no_page_sends_are_refused(text: str, why: str) -> None:
    with pytest.raises(guard.Refused, match=why):
        guard.envelope(text)


def test_screens_are_bounded() -> None:
    assert guard.screen_size(10000, 10000) == (guard.MAX_COLUMNS, guard.MAX_ROWS)
    assert guard.screen_size("x", -5) == (80, 1)
    assert guard.screen_size(120, 40) == (120, 40)


def test_the_page_loads_nothing_from_another_server(served: Served) -> None:
    """The page opens its session once its stylesheets are in: a font from the internet kept
    it blank until that request failed (offline, 5 s here; a game day behind a firewall
    longer). Everything it loads comes from `raceday serve` itself, Roboto Mono included."""
    import re

    try:
        with urllib.request.urlopen(served.url, timeout=10) as response:
            page = response.read().decode("utf-8")
        loaded = re.findall(r'(?:href|src)="([^"]+)"|url\("([^"]+)"\)', page)
        urls = [a or b for a, b in loaded]
        assert any(u.endswith("RobotoMono-VariableFont_wght.ttf") for u in urls)
        assert urls and all(u.startswith(served.url) for u in urls), urls
        with urllib.request.urlopen(served.url + "static/fonts/RobotoMono-VariableFont_wght.ttf",
                                    timeout=10) as font:
            assert len(font.read()) > 100_000
    finally:
        stop_serve(served)


def test_the_page_is_textual_serves_but_for_its_font() -> None:
    """raceday's page is textual-serve's own, its font aside: a textual-serve that changes its
    page is noticed here, not by a browser that no longer connects."""
    import textual_serve

    from raceday.web.browser_server import PAGE_TEMPLATES

    theirs = (Path(textual_serve.__file__).parent / "templates" / "app_index.html").read_text()
    ours = (PAGE_TEMPLATES / "app_index.html").read_text()
    google = theirs.index('    <link\n      rel="stylesheet"\n      href="https://fonts.googleapis')
    after = theirs.index("/>\n", google) + 3
    assert ours.startswith(theirs[:google]) and ours.endswith(theirs[after:])
    assert "googleapis" not in ours and "@font-face" in ours


def _printed_by_a_served_child(service_class: type[Any], last_line: str, wait: float) -> str:
    """Serve one child that starts, closes its screen's stream, waits `wait` seconds and
    writes `last_line` on stderr as it ends; what the server printed."""
    import asyncio
    import contextlib
    import io
    import shlex
    import sys

    from textual_serve.download_manager import DownloadManager

    from raceday.web.browser_server import _guarded

    child = ("import os, sys, time; sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush(); "
             f"os.close(1); time.sleep({wait}); sys.stderr.write({last_line!r} + '\\n')")

    async def nothing(*_: object) -> None:
        return None

    async def serve_one() -> None:
        service = _guarded(service_class)(
            f"{shlex.quote(sys.executable)} -c {shlex.quote(child)}", write_bytes=nothing,
            write_str=nothing, close=nothing, download_manager=DownloadManager())
        await service.start(80, 24)
        assert service._task is not None
        await asyncio.wait_for(service._task, 30)

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        asyncio.run(serve_one())
    return printed.getvalue()


def test_what_a_child_writes_as_it_ends_is_printed() -> None:
    """A child that writes its last line after its screen is gone (a browser's seat closed
    with its host says why on the server): textual-serve stops reading the child's errors
    when its screen's stream ends, so the line was lost whenever the child got there first
    (and a seat's app took over 2 s to shut down on a loaded machine)."""
    from textual_serve.app_service import AppService

    printed = _printed_by_a_served_child(AppService, "seat 1: the host has gone", 2.5)
    assert "seat 1: the host has gone" in printed


def test_a_stderr_reader_cancelled_before_it_ran_still_prints_the_last_line() -> None:
    """textual-serve cancels its stderr reader when the screen's stream ends; cancelled before
    it first ran (a loaded machine: CI saw it), awaiting it raised CancelledError out of the
    service, though nobody had cancelled the service, and the child's last line was lost."""
    import asyncio

    from textual_serve.app_service import AppService

    class Racy(AppService):  # the race, made certain
        async def run(self) -> None:
            await super().run()
            raise asyncio.CancelledError

    printed = _printed_by_a_served_child(Racy, "seat 2: the host has gone", 0.5)
    assert "seat 2: the host has gone" in printed
