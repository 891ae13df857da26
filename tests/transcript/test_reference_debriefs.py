"""Golden debriefs of the reference plays: each play is run headless with the CLI (once for
the whole run: `reference_play`), then debriefed; wall times and folder names are normalised
away."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from debrief_support import EXERCISES, check_golden, normalise, reference_plays
from reference_plays import ReferencePlays
from rich.console import Console

from raceday.cli import main
from raceday.transcript.debrief import debrief_command, load_debrief
from raceday.transcript.debrief.html import render_html

PLAYS = reference_plays()


def play(exercise: str, script: Path, transcripts: Path,
         capsys: pytest.CaptureFixture[str]) -> Path:
    status = main(["run", str(EXERCISES / exercise), "--script", str(script),
                   "--transcripts", str(transcripts)])
    capsys.readouterr()
    assert status == 0, f"{script} did not play"
    (folder,) = [p for p in transcripts.iterdir() if p.is_dir()]
    return folder


@pytest.mark.skipif(not PLAYS, reason="no reference plays in exercises/*/scripts yet")
@pytest.mark.parametrize(("exercise", "script"), PLAYS,
                         ids=[f"{e}/{s.stem}" for e, s in PLAYS])
def test_the_debrief_of_a_reference_play_matches_its_golden_file(
        exercise: str, script: Path, reference_play: ReferencePlays) -> None:
    folder = reference_play(exercise, script).folder
    out = io.StringIO()
    assert debrief_command(folder, "md", None, Console(file=out)) == 0
    check_golden(f"play-{exercise}-{script.stem}.md", normalise(out.getvalue(), folder))
    # what `run` wrote from the events it held is what the transcript read back gives
    assert (folder / "debrief.md").read_text(encoding="utf-8") == out.getvalue()
    html = render_html(load_debrief(folder))
    assert "http" not in html.lower() and "src=" not in html and "href=" not in html


def _cli_has(command: str, capsys: pytest.CaptureFixture[str]) -> bool:
    with pytest.raises(SystemExit):
        main(["--help"])
    return command in capsys.readouterr().out


@pytest.mark.skipif(not PLAYS, reason="no reference plays in exercises/*/scripts yet")
def test_raceday_debrief_on_the_command_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    if not _cli_has("debrief", capsys):
        pytest.skip("`raceday debrief` is not wired into the CLI yet")
    exercise, script = PLAYS[0]
    folder = play(exercise, script, tmp_path / "transcripts", capsys)
    assert main(["debrief", str(folder)]) == 0
    assert capsys.readouterr().out.startswith("# Debrief: ")
    target = tmp_path / "debrief.html"
    assert main(["debrief", str(folder), "--format", "html", "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    first = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (folder / "events.jsonl").write_text(f'{first}\nnot json\n{{"seq": 3, "kind": "wait"}}\n',
                                         encoding="utf-8")
    assert main(["debrief", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "events.jsonl:2: not a valid event" in err and "Traceback" not in err
