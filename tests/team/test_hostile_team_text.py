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
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(tmp_path.glob("transcripts/*/session.db")):
            time.sleep(0.2)
        time.sleep(1)
    finally:
        host.send_signal(signal.SIGINT)
        out, err = host.communicate(timeout=120)
    assert b"raceday join" in out
    assert "Evil \u241b]0;PWNED".encode() in out  # shown, not obeyed (Rich drops the BEL)
    assert not RAW.search(out + err)
