"""`raceday check --strict`: warnings for what plays but teaches badly, each at its line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from raceday.cli import main
from raceday.engine.load import load_exercise
from raceday.engine.strict import strict_warnings
from raceday.exercise.scaffold import scaffold

COLLATERAL = "    collateral: 20             # the bot's one good sync refused: as bad as the outage\n"
STEPS = """\
    steps:                     # a step the reference play's trigger does not stop
      - id: flag-flipped
        task: sync-flags
        when: SELECT 1 FROM flag WHERE name = 'dark-mode' AND enabled = 1
"""


@pytest.fixture
def made(tmp_path: Path) -> Path:
    return scaffold("checkout-flag", tmp_path)


def edit(folder: Path, old: str, new: str) -> Path:
    path = folder / "exercise.yaml"
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return path


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_scaffold_has_no_warnings(made: Path) -> None:
    assert strict_warnings(load_exercise(made)) == []


def test_a_race_step_no_play_prevents_is_named_at_its_line(made: Path) -> None:
    path = edit(made, COLLATERAL, COLLATERAL + STEPS)
    (warning,) = strict_warnings(load_exercise(made))
    assert f"exercise.yaml:{line_of(path, 'id: flag-flipped')}: warning:" in warning
    assert 'race step "flag-flipped": no reference play prevents it' in warning


def test_a_correct_finding_no_play_declares(made: Path) -> None:
    path = edit(made, "findings:\n", "findings:\n  - id: bot-bug\n    text: The bot is buggy\n"
                "    correct: true\n    evidence: checkout-off\n")
    (warning,) = strict_warnings(load_exercise(made))
    assert f":{line_of(path, 'id: bot-bug')}: warning: finding \"bot-bug\"" in warning


def test_a_fault_the_score_cannot_see(made: Path) -> None:
    edit(made, "invariants:\n", "invariants:\n  - id: search-off\n    fault: Search is off\n"
         "    when: SELECT name FROM flag WHERE name = 'new-search' AND enabled = 0\n")
    (warning,) = strict_warnings(load_exercise(made))
    assert 'invariant "search-off"' in warning
    assert "surfacing it earns nothing" in warning


def test_detection_match_no_longer_decides_what_counts(made: Path) -> None:
    # a monitor's alert counts whatever it selects (issue 27): `match` is not a rule to warn on
    edit(made, "match: checkout ", "match: check-out ")
    assert not [w for w in strict_warnings(load_exercise(made)) if "detection.match" in w]


def test_no_reference_play_is_a_warning_and_check_still_passes(
        made: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(made / "scripts")
    code = main(["check", "--strict", str(made)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "1 warning (strict)" in out
    assert "no reference play in scripts/*.yaml" in err
