"""Start and stop a `raceday serve` of a test's own, on a free port, in the test's folder.

(A module of its own, not conftest: two test folders' conftest modules share one name.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class Served:
    url: str
    port: int
    transcripts: Path
    process: subprocess.Popen[str]


def start_serve(folder: Path, *args: str, env: dict[str, str] | None = None) -> Served:
    """`raceday serve ARGS` on a free port, once it accepts connections."""
    port = free_port()
    transcripts = folder / "transcripts"
    process = subprocess.Popen(
        [sys.executable, "-m", "raceday", "serve", "--port", str(port),
         "--transcripts", str(transcripts), *args],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, **(env or {})})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"raceday serve stopped: {process.stdout.read() if process.stdout else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return Served(f"http://127.0.0.1:{port}/", port, transcripts, process)
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("raceday serve did not listen within 60 s")


def stop_serve(served: Served) -> str:
    """Ctrl-C, as a person stops it; returns what it printed."""
    served.process.send_signal(2)
    try:
        out, _ = served.process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        served.process.kill()
        out, _ = served.process.communicate()
    return out
