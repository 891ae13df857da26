"""The one rule at the edges where text leaves raceday: printed lines, Rich output, JSON
and every debrief format show a player's controls, never send them."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import TextIO, cast

import pytest

from raceday.cli import main
from raceday.inert import InertStream, drawn, inert, json_text
from raceday.inert_console import InertConsole

ROOT = Path(__file__).resolve().parent.parent
LOST = ROOT / "exercises" / "lost-update-basics"
OSC52 = "\x1b]52;c;SGVsbG8=\x07"
OSC0 = "\x1b]0;PWNED\x07"
CSI8 = "\x9b2J"
# a raw control in what a terminal receives: ESC (but an SGR colour Rich wrote), C1 (8-bit
# CSI as UTF-8), BEL and the rest of C0 but newline, tab and carriage return
RAW = re.compile(rb"\x1b(?!\[[0-9;]*m)|\xc2[\x80-\x9f]|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


def test_json_text_escapes_c0_c1_del_bidi_and_surrogates_and_reads_back() -> None:
    value = {"name": f"a{OSC52}{CSI8}\x7f\u202e\ud800z"}
    text = json_text(value)
    assert not re.search("[\x00-\x1f\x7f-\x9f\u202e\ud800]", text)
    assert "\\u009b" in text and "\\u007f" in text and "\\u202e" in text
    assert json.loads(text) == value
    text.encode("utf-8")  # whole UTF-8, even with a lone surrogate


def test_drawn_keeps_width_and_drops_controls() -> None:
    assert drawn(f"a{OSC52}b\ud800") == "a]52;c;SGVsbG8=b\ufffd"


def test_the_printed_stream_shows_controls() -> None:
    raw = io.StringIO()
    stream = InertStream(raw)
    print(f"title {OSC0} {CSI8}", file=stream)
    assert raw.getvalue() == "title \u241b]0;PWNED\u2407 <U+009B>2J\n"


def test_the_console_keeps_its_colours_and_shows_a_players_codes() -> None:
    raw = io.StringIO()
    console = InertConsole(file=cast(TextIO, InertStream(raw)), force_terminal=True, color_system="standard",
                           width=80, highlight=False)
    console.print(f"[bold]monitor[/bold] {OSC52}")
    out = raw.getvalue()
    assert "\x1b[1m" in out  # raceday's own style reaches the terminal as a style
    assert "\u241b]52;c;SGVsbG8=" in out  # (Rich itself drops the BEL)
    assert not RAW.search(out.encode())


@pytest.fixture
def hostile_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session of an exercise titled with OSC 0/52 and U+009B, a monitor named with OSC 52,
    SQL carrying OSC 0 and an error quoting OSC 52."""
    folder = tmp_path / "exercises" / "evil"
    import shutil

    shutil.copytree(LOST, folder)
    shutil.copytree(LOST.parent / "shared", folder.parent / "shared")
    path = folder / "exercise.yaml"
    text = path.read_text()
    text = re.sub(r"^id: .*$", lambda _: "id: evil", text, count=1, flags=re.M)
    text = re.sub(r"^title: .*$",
                  lambda _: 'title: "Evil \\e]0;PWNED\\a \\e]52;c;SGVsbG8=\\a \\u009b2J"',
                  text, count=1, flags=re.M)
    path.write_text(text)
    script = tmp_path / "play.yaml"
    script.write_text(
        "roles: [operator]\nsteps:\n"
        '  - {as: operator, monitor: {name: "mon \\e]52;c;SGVsbG8=\\a \\u009b31m", '
        'sql: "SELECT 1 WHERE 0"}}\n'
        "  - {as: operator, sql: \"SELECT 'x\\e]0;T\\a' AS c\"}\n"
        '  - {as: operator, sql: "SELECT * FROM \\"\\e]52;c;QQ==\\a\\u009b\\""}\n'
        "  - end: true\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(folder), "--script", str(script), "--transcripts",
                 str(tmp_path / "t")]) == 0
    return next(p for p in (tmp_path / "t").iterdir() if p.is_dir())


def test_files_of_a_hostile_session_carry_no_raw_control(hostile_session: Path) -> None:
    events = (hostile_session / "events.jsonl").read_bytes()
    assert not RAW.search(events)
    assert b"\\u009b" in events and b"\\u001b]52" in events  # the value is kept, escaped
    debrief = (hostile_session / "debrief.md").read_bytes()
    assert not RAW.search(debrief)
    assert "52;c;SGVsbG8=\u2407 <U+009B>31m".encode() in debrief  # the monitor's name
    assert "Evil \u241b".encode() in debrief


@pytest.mark.parametrize("fmt", ["md", "html", "json", "terminal"])
def test_every_debrief_format_sends_no_raw_control(hostile_session: Path, fmt: str) -> None:
    done = subprocess.run([sys.executable, "-m", "raceday", "debrief", str(hostile_session),
                           "--format", fmt], capture_output=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "120",
                               "FORCE_COLOR": "1", "TERM": "xterm-256color"})
    assert done.returncode == 0, done.stderr
    assert not RAW.search(done.stdout + done.stderr)
    if fmt == "json":
        assert b"\\u009b" in done.stdout
    else:
        assert "\u241b".encode() in done.stdout and b"52;c;SGVsbG8=" in done.stdout


def test_printed_lines_of_list_run_and_transcript_are_inert(
        hostile_session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    for args in (["list"], ["transcript", str(hostile_session)],
                 ["run", "evil", "--json", "--script", str(hostile_session.parent.parent
                                                          / "play.yaml")]):
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 0, err
        assert not RAW.search((out + err).encode()), args
    assert sys.stdout is not None and not isinstance(sys.stdout, InertStream)  # put back


def test_inert_is_the_rule_the_edges_share() -> None:
    assert inert(OSC52) == "\u241b]52;c;SGVsbG8=\u2407"


def _screen_bytes(argv: list[str], seconds: float) -> bytes:
    """What a 120x40 terminal receives from `argv` in `seconds` (then q, then SIGTERM)."""
    import fcntl
    import os
    import pty
    import select
    import signal
    import struct
    import termios
    import time

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = bytearray()
    end = time.monotonic() + seconds
    quit_at = end - 1.5
    sent = False
    while time.monotonic() < end:
        if not sent and time.monotonic() >= quit_at:
            os.write(fd, b"q")
            sent = True
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    os.close(fd)
    return bytes(out)


def test_review_of_a_hostile_session_sends_the_terminal_no_players_control(
        hostile_session: Path) -> None:
    screen = _screen_bytes([sys.executable, "-m", "raceday", "review", str(hostile_session)], 9)
    assert len(screen) > 5000  # the screen was drawn
    assert b"\x1b]52" not in screen and b"\x1b]0;" not in screen  # no clipboard, no title
    assert b"\xc2\x9b" not in screen
    assert set(re.findall(rb"\x1b\](\d+)", screen)) <= {b"22"}  # Textual's pointer shape only
    assert b"52;c;SGVsbG8=" in screen  # the monitor's name or the title, shown
