"""A small DevTools-protocol client for Debian's headless chromium: open a page, type, press
keys, read what a textual-serve page received, take a screenshot.

Used by tests/web and benchmarks/bench_serve.py; no browser download (playwright's) needed.
The page's terminal draws on a canvas, so what it shows is read from the websocket frames it
received (a script installed before the page loads keeps them) with the escapes removed.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")

# Keep every frame the page's websocket receives, as text, for `screen_text`.
_RECORDER = """
(() => {
  const Native = window.WebSocket;
  window.__frames = [];
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") { window.__frames.push(event.data); return; }
      const blob = event.data instanceof Blob ? event.data : new Blob([event.data]);
      blob.text().then((text) => window.__frames.push(text));
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, Native);
})();
"""

KEYS = {  # key: (code, windowsVirtualKeyCode, text)
    "Enter": ("Enter", 13, "\r"),
    "F5": ("F5", 116, ""),
    "Escape": ("Escape", 27, ""),
    "ArrowUp": ("ArrowUp", 38, ""),
}


def available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


def plain(text: str) -> str:
    """Terminal output without its escapes (colours, cursor moves)."""
    return _ESCAPES.sub("", text)


class Browser:
    """One headless chromium; `page()` opens a tab."""

    def __init__(self, width: int = 1200, height: int = 800) -> None:
        self.profile = tempfile.mkdtemp(prefix="raceday-chromium-")
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--mute-audio",
             "--disable-background-networking", "--disable-renderer-backgrounding",
             "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
             f"--window-size={width},{height}", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # its singleton socket's folder (/tmp/org.chromium.Chromium.*) goes with the profile
            env={**os.environ, "TMPDIR": self.profile})
        active = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (active.exists() and active.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        self.port = int(active.read_text().split("\n")[0])

    def page(self, url: str) -> Page:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank",
                                         method="PUT")
        with urllib.request.urlopen(request, timeout=30) as response:
            target = json.load(response)
        page = Page(target["webSocketDebuggerUrl"], target["id"], self.port)
        page.open(url)
        return page

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """A tab, driven over its DevTools websocket."""

    def __init__(self, ws_url: str, target: str, port: int) -> None:
        self.socket = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
        self.target, self.port = target, port
        self._ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.addScriptToEvaluateOnNewDocument", source=_RECORDER)
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        return result.get("result", {}).get("value")

    def screen_text(self) -> str:
        """Everything the terminal was sent so far, escapes removed."""
        frames = self.evaluate("(window.__frames || []).join('')") or ""
        return plain(str(frames))

    def wait_for(self, text: str, timeout: float = 60.0, since: int = 0) -> float:
        """Seconds until `text` was sent to the terminal (after the first `since` characters)."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if text in self.screen_text()[since:]:
                return time.monotonic() - start
            time.sleep(0.1)
        failed = Path(tempfile.gettempdir()) / f"raceday-page-{self.target}.png"
        self.screenshot(failed)
        raise TimeoutError(f"{text!r} did not reach the page in {timeout:.0f} s (the page: {failed})")

    def settle(self, quiet: float = 0.3, timeout: float = 30.0) -> None:
        """Until the page has received nothing new for `quiet` seconds: the screen is drawn
        and the app waits for keys (a key sent mid-draw may reach a screen that is going)."""
        start = time.monotonic()
        seen, since = len(self.screen_text()), time.monotonic()
        while time.monotonic() - since < quiet:
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"the page kept changing for {timeout:.0f} s")
            time.sleep(0.05)
            now = len(self.screen_text())
            if now != seen:
                seen, since = now, time.monotonic()

    def focus(self) -> None:
        self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")

    def type(self, text: str) -> None:
        self.call("Input.insertText", text=text)

    def press(self, key: str) -> None:
        code, vk, text = KEYS[key]
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=code,
                      windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk,
                      **({"text": text} if text and kind == "keyDown" else {}))

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/close/{self.target}",
                                   timeout=10).close()
        except OSError:
            pass
        self.socket.close()
