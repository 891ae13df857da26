"""`raceday new`: the scaffold passes `check`, plays at once, and scores what it says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from raceday.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def made(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    code, out, err = run(capsys, "new", "checkout-flag", "--into", str(tmp_path))
    assert code == 0, err
    assert "raceday check" in out
    return tmp_path / "checkout-flag"


def play(capsys: pytest.CaptureFixture[str], folder: Path, script: Path,
         transcripts: Path) -> dict[str, object]:
    code, out, err = run(capsys, "run", str(folder), "--script", str(script), "--json",
                         "--transcripts", str(transcripts))
    assert code == 0, err
    result: dict[str, object] = json.loads(out)
    return result


def test_the_scaffold_passes_check(capsys: pytest.CaptureFixture[str], made: Path) -> None:
    code, out, err = run(capsys, "check", str(made))
    assert code == 0, err
    assert "ok (checkout-flag:" in out
    assert "__ID__" not in "".join(p.read_text() for p in made.rglob("*") if p.is_file())


def test_its_reference_play_scores_what_its_comments_say(
        capsys: pytest.CaptureFixture[str], made: Path, tmp_path: Path) -> None:
    script = made / "scripts" / "reference.yaml"
    said = re.search(r"scores (\d+) of (\d+)", script.read_text())
    assert said is not None, "the reference play's comment names its score"
    result = play(capsys, made, script, tmp_path / "t")
    assert (result["total"], result["max"]) == (int(said[1]), int(said[2]))
    assert result["exercise"] == "checkout-flag"


def test_a_repair_before_stopping_the_bot_relapses_as_the_comments_say(
        capsys: pytest.CaptureFixture[str], made: Path, tmp_path: Path) -> None:
    """The story's 10:20 line: the bot's next run undoes a hand repair made before it was
    stopped, and the score shows the relapse."""
    script = tmp_path / "hasty.yaml"
    script.write_text(
        "roles: [oncall]\nsteps:\n  - wait: \"10:12\"\n"
        "  - {as: oncall, sql: \"UPDATE flag SET enabled = 1 WHERE name = 'checkout'\"}\n"
        "  - wait: \"10:40\"\n")
    result = play(capsys, made, script, tmp_path / "t")
    recovery = result["recovery"]
    assert isinstance(recovery, dict)
    assert recovery["relapses"] == ["10:20"]
    assert not recovery["restored"]
    assert isinstance(result["total"], int) and result["total"] < 50


def test_new_refuses_a_bad_id_and_an_existing_folder(
        capsys: pytest.CaptureFixture[str], made: Path) -> None:
    code, _, err = run(capsys, "new", "checkout-flag", "--into", str(made.parent))
    assert code == 2 and "already exists" in err and len(err.splitlines()) == 1
    code, _, err = run(capsys, "new", "../escape", "--into", str(made.parent))
    assert code == 2 and "exercise id" in err
    assert not (made.parent.parent / "escape").exists()


def test_its_guards_are_judged_by_the_harm_they_keep_away(
        capsys: pytest.CaptureFixture[str], made: Path, tmp_path: Path) -> None:
    """The scaffold teaches the judge by harm: the reference play's trigger earns the minutes
    it kept checkout on in the replayed morning; freezing the flag table keeps it on too but
    refuses the normal morning's good sync, which costs as much as the guards are worth."""
    reference = play(capsys, made, made / "scripts" / "reference.yaml", tmp_path / "ref")
    guards = reference["guards"]
    assert isinstance(guards, dict) and (guards["points"], guards["max"]) == (20, 20)
    freeze = tmp_path / "freeze.yaml"
    freeze.write_text("""exercise: checkout-flag
roles: [oncall]
steps:
  - as: oncall
    sql: CREATE TRIGGER frozen BEFORE UPDATE ON flag BEGIN SELECT RAISE(ABORT, 'frozen'); END
  - wait: "10:40"
""", encoding="utf-8")
    frozen = play(capsys, made, freeze, tmp_path / "freeze")
    assert isinstance(frozen["guards"], dict) and frozen["guards"]["points"] == 0
    assert any("sync-flags-good at 10:15" in r for r in frozen["reasons"])  # type: ignore[attr-defined]
