"""`raceday serve --max-sessions N`: the browser one past N gets no process of its own but a
line in its terminal saying the server is full; a place freed is taken again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import websocket
from serving import Served, start_serve, stop_serve

from raceday.cli import main


def _open(served: Served) -> websocket.WebSocket:
    return websocket.create_connection(
        f"ws://127.0.0.1:{served.port}/ws?width=80&height=24", timeout=30)


def _first_bytes(ws: websocket.WebSocket) -> bytes:
    data = ws.recv()
    return data if isinstance(data, bytes) else data.encode()


def test_one_browser_past_the_limit_is_told_the_server_is_full(tmp_path: Path) -> None:
    served = start_serve(tmp_path, "--max-sessions", "1")
    try:
        playing = _open(served)
        assert b"is full" not in _first_bytes(playing)  # the launcher's first frame
        turned = _open(served)
        told = _first_bytes(turned).decode()
        assert "raceday serve is full: 1 browser is playing" in told
        turned.settimeout(1)  # it stays open, the words on the page, and nothing more comes
        with pytest.raises(websocket.WebSocketTimeoutException):
            turned.recv()
        turned.close()
        playing.close()
        deadline = time.monotonic() + 30
        while True:  # the freed place is taken again once the first one's process is gone
            again = _open(served)
            first = _first_bytes(again)
            if b"is full" not in first:
                break
            again.close()
            assert time.monotonic() < deadline, "the place was never freed"
            time.sleep(0.2)
        again.close()
    finally:
        out = stop_serve(served)
    assert "at most 1 at once" in out
    assert "a browser was turned away: 1 playing already (--max-sessions)" in out


def test_a_negative_limit_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--max-sessions", "-1"]) == 2
    assert capsys.readouterr().err == ("raceday: --max-sessions -1: give 0 (no limit) or "
                                       "more\n")
