"""An exercise titled with OSC 0/52 and U+009B: the join text `raceday host --headless`
prints, and what a seat's client publishes, reach no terminal raw."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOST = ROOT / "exercises" / "lost-update-basics"
RAW = re.compile(rb"\x1b|\xc2[\x80-\x9f]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _evil(folder: Path) -> Path:
    target = folder / "exercises" / "evil"
    shutil.copytree(LOST, target)
    shutil.copytree(LOST.parent / "shared", target.parent / "shared")
    path = target / "exercise.yaml"
    text = path.read_text()
    text = re.sub(r"^id: .*$", lambda _: "id: evil", text, count=1, flags=re.M)
    text = re.sub(r"^title: .*$",
                  lambda _: 'title: "Evil \\e]0;PWNED\\a \\e]52;c;SGVsbG8=\\a \\u009b2J"',
                  text, count=1, flags=re.M)
    path.write_text(text)
    return target


def test_the_join_text_of_a_hostile_title_is_inert(tmp_path: Path) -> None:
    _evil(tmp_path)
    host = subprocess.Popen(
        [sys.executable, "-m", "raceday", "host", "evil", "--seats", "operator", "--headless",
         "--pace", "turns"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"})
    try:
        # the join lines are said, then kept in join.txt: once it is there, they were said
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(tmp_path.glob("transcripts/*/join.txt")):
            time.sleep(0.2)
    finally:
        host.send_signal(signal.SIGINT)
        out, err = host.communicate(timeout=120)
    assert b"raceday join" in out
    assert "Evil \u241b]0;PWNED".encode() in out  # shown, not obeyed (Rich drops the BEL)
    assert not RAW.search(out + err)


def _screen_bytes(argv: list[str], seconds: float, cwd: Path) -> bytes:
    """What a 120x40 terminal receives from `argv` in `seconds` (then SIGTERM)."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = bytearray()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)
    os.close(fd)
    return bytes(out)


def test_the_projector_shows_a_monitor_named_with_osc_52_inert(tmp_path: Path) -> None:
    from raceday.team.client import Client

    _evil(tmp_path)
    host = subprocess.Popen(
        [sys.executable, "-m", "raceday", "host", "evil", "--seats", "operator", "--headless",
         "--pace", "turns"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "300"})
    try:
        assert host.stdout is not None
        line = ""
        while "--token" not in line:
            line = host.stdout.readline().decode()
            assert line, "the host printed no join line"
        words = line.split()
        folder, token = tmp_path / words[2], words[words.index("--token") + 1]
        client = Client(folder, token, "Olga")
        client.wait(client.join())
        name = "mon \x1b]52;c;SGVsbG8=\x07 \x9b31m"
        done = client.wait(client.submit("monitor", {"name": name, "sql": "SELECT 1"}))
        assert done.status == "done", done.error
        screen = _screen_bytes([sys.executable, "-m", "raceday", "watch", str(folder)], 10,
                               tmp_path)
        client.close()
    finally:
        host.send_signal(signal.SIGINT)
        host.communicate(timeout=120)
    assert len(screen) > 5000  # the projector drew
    assert b"\x1b]52" not in screen and b"\x1b]0;" not in screen and b"\xc2\x9b" not in screen
    assert set(re.findall(rb"\x1b\](\d+)", screen)) <= {b"22"}  # Textual's pointer shape only
    assert re.search(rb"mon (\xe2\x90\x9b)?\]52;c;SGVsbG8=", screen)  # the monitor, shown
