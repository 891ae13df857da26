"""Text from players and exercise files never reaches the terminal as control codes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from raceday.cli import main

ROOT = Path(__file__).resolve().parent.parent
LOST = ROOT / "exercises" / "lost-update-basics"
# ESC, BEL, CSI in 8 bits, and the rest of C0/C1 but newline and tab
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OSC_TITLE = "\x1b]0;PWNED\x07"
CLEAR = "\x1b[2J"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def evil_exercise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "exercises" / "evil"
    shutil.copytree(LOST, folder)
    shutil.copytree(LOST.parent / "shared", folder.parent / "shared")
    path = folder / "exercise.yaml"
    text = path.read_text()
    text = re.sub(r"^id: .*$", lambda _: "id: evil", text, count=1, flags=re.M)
    text = re.sub(r"^title: .*$", lambda _: 'title: "oops [/] closing \\e]0;PWNED\\a \\e[2J"',
                  text, count=1, flags=re.M)
    path.write_text(text)
    monkeypatch.chdir(tmp_path)
    return folder


def test_list_shows_a_hostile_title_inert(evil_exercise: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "oops [/] closing" in out  # markup in data is text, and does not crash
    assert "\u241b]0;PWNED" in out
    assert not RAW_CONTROL.search(out)


def test_run_and_transcript_show_hostile_sql_inert(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "play.yaml"
    script.write_text(
        "roles: [operator]\nsteps:\n"
        f'  - {{as: operator, sql: "SELECT \'{OSC_TITLE.encode("unicode_escape").decode()}\' AS x"}}\n'
        f'  - {{as: operator, sql: "SELECT * FROM \'{CLEAR.encode("unicode_escape").decode()}\'"}}\n'
        "  - end: true\n"
    )
    code, out, err = run(capsys, "run", str(LOST), "--script", str(script),
                         "--transcripts", str(tmp_path / "t"))
    assert code == 0, err
    assert not RAW_CONTROL.search(out + err)
    session = next(p for p in (tmp_path / "t").iterdir() if p.is_dir())
    code, out, err = run(capsys, "transcript", str(session))
    assert code == 0, err
    assert "\u241b]0;PWNED\u2407" in out  # the SQL shows, inert
    assert not RAW_CONTROL.search(out + err)


def test_an_error_naming_hostile_text_is_inert(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "play.yaml"
    script.write_text('roles: ["\\e]52;c;cm0gLXJm\\a"]\nsteps: []\n')
    code, out, err = run(capsys, "run", str(LOST), "--script", str(script),
                         "--transcripts", str(tmp_path / "t"))
    assert code == 2
    assert not RAW_CONTROL.search(out + err)
