"""The simpler spellings: each loads, the old one still loads to the same exercise, giving
both is an error, and `check --strict` says where each old key is and where it moved."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from raceday.cli import main
from raceday.engine.load import load_exercise
from raceday.errors import ExerciseError
from raceday.exercise.scaffold import scaffold

NEW_TO_OLD = [
    # (new spelling in the scaffold, the same thing in the old spelling, the key that moved)
    ("    when: SELECT name, updated_by", "    sql: SELECT name, updated_by", "`sql` moved to `when`"),
    ("  recovery:                    # 20 + 15 + 15 = 50 points\n",
     "  recovery:\n    points: 50\n", None),
]
EXTRA_NEW = """\
milestones:
  - id: bot-stopped
    label: The bot is stopped
    when: SELECT 1 FROM automation WHERE name = 'deploy-bot' AND enabled = 0
phases:
  - id: detection
    label: Detection
    team: detected
"""
EXTRA_OLD = """\
milestones:
  - id: bot-stopped
    label: The bot is stopped
    sql: SELECT 1 FROM automation WHERE name = 'deploy-bot' AND enabled = 0
debrief:
  phases:
    - id: detection
      label: Detection
      team: detected
"""


def plain(value: Any) -> Any:
    """The model without where things were written (lines, old spellings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in ("line", "moved", "path"):
            if name in changes:
                changes[name] = None if name == "path" else type(getattr(value, name))()
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


def make(root: Path, spelling: str) -> Path:
    folder = scaffold("checkout-flag", root / spelling)
    path = folder / "exercise.yaml"
    text = path.read_text()
    if spelling == "old":
        for new, old, _ in NEW_TO_OLD:
            assert text.count(new) == 1, new
            text = text.replace(new, old)
    path.write_text(text + (EXTRA_OLD if spelling == "old" else EXTRA_NEW))
    return folder


def test_old_and_new_spellings_load_to_the_same_exercise(tmp_path: Path) -> None:
    new = load_exercise(make(tmp_path, "new"))
    old = load_exercise(make(tmp_path, "old"))
    assert new.moved == ()
    assert plain(old) == plain(new)
    assert new.scoring.recovery is not None and new.scoring.recovery.points == 50  # computed
    assert [p.id for p in new.debrief.phases] == ["detection"]


def test_check_strict_explains_each_key_that_moved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path, "old")
    lines = (folder / "exercise.yaml").read_text().splitlines()
    assert main(["check", "--strict", str(folder)]) == 0
    err = capsys.readouterr().err
    expected = {
        next(n for n, line in enumerate(lines, 1) if line.startswith("    sql: SELECT name, upd")):
            'invariant "checkout-off": `sql` moved to `when`',
        next(n for n, line in enumerate(lines, 1) if "sql: SELECT 1 FROM automation" in line):
            'milestone "bot-stopped": `sql` moved to `when`',
        next(n for n, line in enumerate(lines, 1) if line == "  phases:"):
            "`debrief.phases` moved to `phases`",
    }
    for line, words in expected.items():
        assert any(f"exercise.yaml:{line}: warning: " in w and words in w
                   for w in err.splitlines()), (line, words, err)
    assert main(["check", str(folder)]) == 0  # without --strict the old spelling is quiet
    assert "moved" not in capsys.readouterr().err


def test_a_task_hint_and_a_hint_shown_with_its_task_are_one_thing(tmp_path: Path) -> None:
    folder = scaffold("checkout-flag", tmp_path)
    path = folder / "exercise.yaml"
    base = path.read_text()
    task = "    when: SELECT 1 FROM automation WHERE name = 'deploy-bot' AND enabled = 1\n"
    path.write_text(base.replace(task, task + "    hint: The bot runs every 10 minutes.\n"))
    old = load_exercise(folder)
    path.write_text(base.replace("hints:\n", "hints:\n  - id: bot-nudge\n    task: sync-flags\n"
                                 "    shown: with-task\n    text: The bot runs every 10 minutes.\n"))
    new = load_exercise(folder)
    assert new.tasks[0].hint == old.tasks[0].hint == "The bot runs every 10 minutes."
    assert [h.id for h in new.hints] == [h.id for h in old.hints] == ["who-changed-it"]
    assert "`hint` moved to `hints`" in old.moved[0][1]


@pytest.mark.parametrize(("old", "new", "message"), [
    ("    when: SELECT name, updated_by", "    sql: SELECT 1\n    when: SELECT name, updated_by",
     '"sql" moved to "when"; give only "when"'),
    ("    when: SELECT name, updated_by", "    what: SELECT name, updated_by",
     'invariant "checkout-off" is missing required key "when"'),
    ("hints:\n", "hints:\n  - {id: x, task: sync-flags, shown: with-task, cost: 1, text: t}\n",
     "a hint shown with its task names the \"task\" and is free"),
])
def test_a_wrong_spelling_is_one_line_at_its_place(
        tmp_path: Path, old: str, new: str, message: str) -> None:
    folder = scaffold("checkout-flag", tmp_path)
    path = folder / "exercise.yaml"
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder)
    assert any(message in p and "exercise.yaml:" in p for p in caught.value.problems), \
        caught.value.problems
