"""Helpers for the debrief tests: fixtures, reference plays and golden files.

Golden files live in `tests/transcript/golden/`. After an intended change to the debrief (or to
an exercise a reference play runs), rewrite them with

    RACEDAY_UPDATE_GOLDEN=1 python -m pytest tests/transcript

and read the diff before committing it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
EXERCISES = ROOT / "exercises"
UPDATE = os.environ.get("RACEDAY_UPDATE_GOLDEN") == "1"

_WALL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)")
_FOLDER = re.compile(r"\b\d{8}T\d{6}Z-[a-z0-9-]+\b")
_PLAYED = re.compile(r"played on \d{4}-\d\d-\d\d")  # the day the test ran


def normalise(text: str, session: Path) -> str:
    """Golden-stable text: no wall times, no folder names that change from run to run."""
    text = text.replace(str(session), "<session>")
    text = _WALL.sub("<wall-time>", text)
    text = _PLAYED.sub("played on <date>", text)
    return _FOLDER.sub("<session-folder>", text)


def reference_plays() -> list[tuple[str, Path]]:
    """(exercise id, script) for every reference play in the repository."""
    return [(script.parent.parent.name, script)
            for script in sorted(EXERCISES.glob("*/scripts/*.yaml"))]


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            raise AssertionError(f"{path} did not exist and was written: check it, commit it")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (
        f"the debrief no longer matches {path.relative_to(ROOT)}; if the change is intended, "
        "rewrite the golden files with RACEDAY_UPDATE_GOLDEN=1 and read the diff")
