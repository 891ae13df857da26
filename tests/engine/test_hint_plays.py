"""Issue 57: `raceday check` plays what each hint teaches. A hint whose play earns nothing,
or keeps tonight's harm away only because it is keyed on tonight's numbers, is the
exercise's error at the hint's line; the bundled hints all earn what they promise."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from raceday.commands import check_paths
from raceday.engine.hint_plays import hint_play_problems
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.errors import ExerciseError
from raceday.exercise.catalog import BUNDLED_DIR

FLAGSHIP = BUNDLED_DIR / "dynamodb-dns-race"
APPLY = """\
exercise: dynamodb-dns-race
roles: [responder]
steps:
  - at: "23:05"
    as: responder
    edit:
      statement: enactor-a-apply
      sql: |
        UPDATE endpoint
        SET rollback_plan_id = active_plan_id, active_plan_id = :plan,
            updated_by = 'enactor-a', updated_at = :now_hhmm
        WHERE name = 'dynamodb.us-east-1.amazonaws.com' AND {condition}
  - end: true
"""


def _flagship_with(tmp_path: Path, play: str) -> Path:
    """A copy of the flagship whose hint recheck-at-write plays `play`."""
    folder = tmp_path / FLAGSHIP.name
    shutil.copytree(FLAGSHIP, folder)
    (folder / "scripts" / "hints" / "recheck-at-write.yaml").write_text(play, encoding="utf-8")
    return folder


def _hint_line(folder: Path, hint: str) -> int:
    lines = (folder / "exercise.yaml").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line == f"  - id: {hint}")


@pytest.mark.parametrize("name", ["dynamodb-dns-race", "lost-update-basics", "isolation-lab"])
def test_every_bundled_hint_play_earns_what_it_teaches(name: str) -> None:
    exercise = load_exercise(BUNDLED_DIR / name)
    assert [h.id for h in exercise.hints if h.play], "the exercise's hints have plays"
    assert hint_play_problems(exercise) == []


def test_a_guard_keyed_on_tonights_plan_number_is_refused_with_its_reason(
        tmp_path: Path) -> None:
    folder = _flagship_with(tmp_path, APPLY.format(condition="active_plan_id < 140"))
    problems = hint_play_problems(load_exercise(folder))
    line = _hint_line(folder, "recheck-at-write")
    assert len(problems) == 1
    assert problems[0].startswith(f'{folder / "exercise.yaml"}:{line}: hint "recheck-at-write": '
                                  f"played as scripts/hints/recheck-at-write.yaml, it earns 0 "
                                  f"guards points, as doing nothing (0)")
    assert "refused 51 good writes of the normal night (the first: enactor-a-on-time at 23:34" \
        in problems[0]


def test_a_guard_keyed_on_tonights_minute_is_named_by_the_variant_night(
        tmp_path: Path) -> None:
    folder = _flagship_with(tmp_path, APPLY.format(condition=":now_hhmm <> '23:48'"))
    problems = hint_play_problems(load_exercise(folder))
    assert len(problems) == 1
    assert re.search(r'hint "recheck-at-write": played as scripts/hints/recheck-at-write.yaml, '
                     r"it keeps empty-answer away in tonight's race but not on the variant night "
                     r"\(\d+ minutes against \d+ without it\): a guard keyed on tonight's "
                     r"numbers$", problems[0]), problems[0]


def test_a_hint_whose_play_does_nothing_is_refused_by_raceday_check(tmp_path: Path) -> None:
    folder = _flagship_with(tmp_path, "exercise: dynamodb-dns-race\nroles: [responder]\n"
                                      "steps:\n  - at: '23:05'\n    as: responder\n"
                                      "    sql: SELECT 1\n  - end: true\n")
    out = io.StringIO()
    with pytest.raises(ExerciseError) as caught:
        check_paths([folder], Console(file=out, width=200))
    assert [p for p in caught.value.problems if "recheck-at-write" in p] == [
        f'{folder / "exercise.yaml"}:{_hint_line(folder, "recheck-at-write")}: hint '
        f'"recheck-at-write": played as scripts/hints/recheck-at-write.yaml, it earns 0 guards '
        f"points, as doing nothing (0)"]
    assert "ok" not in out.getvalue()


def test_a_hint_play_that_does_not_play_names_its_file_and_line(tmp_path: Path) -> None:
    folder = _flagship_with(tmp_path, "exercise: dynamodb-dns-race\nsteps:\n  - as: nobody\n"
                                      "    sql: SELECT 1\n")
    problems = hint_play_problems(load_exercise(folder))
    assert len(problems) == 1
    assert "its play scripts/hints/recheck-at-write.yaml does not play: " in problems[0]
    assert "recheck-at-write.yaml:3:" in problems[0]


def test_a_hint_naming_no_play_script_is_the_exercises_error_at_its_line(tmp_path: Path) -> None:
    folder = _flagship_with(tmp_path, APPLY.format(condition="active_plan_id < :plan"))
    (folder / "scripts" / "hints" / "recheck-at-write.yaml").unlink()
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder)
    line = _hint_line(folder, "recheck-at-write") + 8  # its `play:` key
    assert f'exercise.yaml:{line}: hint "recheck-at-write": "play" names no play script in ' \
           f"the exercise's folder (scripts/hints/recheck-at-write.yaml)" in "\n".join(
               caught.value.problems)


def _words(sql: str) -> str:
    return " ".join(sql.replace("(", " ( ").replace(")", " ) ").replace(";", " ").split())


def test_the_onboardings_hints_play_the_sql_they_show() -> None:
    """Where a hint shows SQL, its play runs that SQL and no other: the two cannot drift."""
    exercise = load_exercise(BUNDLED_DIR / "lost-update-basics")
    for hint in (h for h in exercise.hints if h.play):
        script = load_script(BUNDLED_DIR / "lost-update-basics" / str(hint.play), exercise)
        played = [s.sql for s in script.steps if s.sql]
        assert played, hint.id
        for sql in played:
            assert _words(sql) in _words(hint.text), (hint.id, sql)


def test_no_onboarding_hint_rebuilds_a_table() -> None:
    """The README's promise: every guard is one statement, no table rebuilt."""
    exercise = load_exercise(BUNDLED_DIR / "lost-update-basics")
    for hint in exercise.hints:
        assert "DROP TABLE" not in hint.text.upper(), hint.id
        assert "RENAME TO" not in hint.text.upper(), hint.id


def test_strict_names_a_guard_hint_with_no_play(tmp_path: Path) -> None:
    from raceday.engine.strict import strict_warnings

    folder = tmp_path / "isolation-lab"
    shutil.copytree(BUNDLED_DIR / "isolation-lab", folder)
    yaml = folder / "exercise.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8").replace(
        "    play: scripts/hints/one-writer.yaml\n", ""), encoding="utf-8")
    exercise = load_exercise(folder)
    line = _hint_line(folder, "one-writer")
    assert [w for w in strict_warnings(exercise) if "hint" in w] == [
        f'{yaml}:{line}: warning: hint "one-writer" teaches the guard of task "refuse-it" but '
        f"has no play: nothing shows that doing what it says earns points"]
