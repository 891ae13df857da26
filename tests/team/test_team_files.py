"""A teams file or an inject file is read only when it is one (issue 56): a teams file could
name any path as a team's script, and the script's checks echoed its lines (/etc/shadow's
`root:$6$…` as an unknown key). Now each such file is refused in one line that names it and
says what is wrong, never quoting it."""

from __future__ import annotations

from pathlib import Path

import pytest

from raceday.errors import ScriptError
from raceday.exercise.model import Exercise
from raceday.team.group_script import load_teams_file
from raceday.team.inject_file import InjectFileError, load_inject_file

SECRET = "root:$6$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
SCRIPTS = Path(__file__).parents[2] / "exercises" / "dynamodb-dns-race" / "scripts"


def _problems(flagship: Exercise, teams: Path) -> list[str]:
    with pytest.raises(ScriptError) as caught:
        load_teams_file(teams, flagship)
    problems = caught.value.problems
    assert problems and not any("SECRET" in p or "daemon" in p for p in problems), problems
    return problems


@pytest.mark.parametrize("name", ["shadow", "shadow.yaml"])
def test_a_teams_file_naming_a_file_outside_its_folder_is_refused_unread(
        flagship: Exercise, tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(SECRET)
    folder = tmp_path / "set"
    folder.mkdir()
    teams = folder / "teams.yaml"
    teams.write_text(f"teams:\n  red: {tmp_path / name}\n  blue: ../{name}\n")
    problems = _problems(flagship, teams)
    assert any(p.startswith(f"{teams}:2: team red:") and "a path from the root" in p
               for p in problems)
    assert any(p.startswith(f"{teams}:3: team blue:") and "outside" in p for p in problems)


def test_a_teams_file_naming_a_file_that_is_no_play_script_does_not_quote_it(
        flagship: Exercise, tmp_path: Path) -> None:
    (tmp_path / "shadow.yaml").write_text(SECRET)
    (tmp_path / "shadow").write_text(SECRET)
    (tmp_path / "link.yaml").symlink_to("/etc/passwd")
    teams = tmp_path / "teams.yaml"
    teams.write_text("teams:\n  red: shadow.yaml\n  blue: shadow\n  green: link.yaml\n")
    problems = _problems(flagship, teams)
    assert any("shadow.yaml: not a play script" in p for p in problems)
    assert any("shadow: a play script is a .yaml or .yml file" in p for p in problems)
    assert any(p.startswith(f"{teams}:4: team green:") and "outside" in p for p in problems)


@pytest.mark.parametrize("name, text, why", [
    ("teams.txt", "teams:\n  red: x.yaml\n", "a teams file is a .yaml or .yml file"),
    ("teams.yaml", SECRET, "not a teams file (a YAML mapping with `teams:`)"),
    ("teams.yaml", "teams: !SECRETTAG [1, 2\n", "not valid YAML"),
    ("teams.yaml", b"teams:\n  red: \xff\xfe SECRET\n", "not UTF-8"),
])
def test_a_teams_file_that_is_not_one_is_one_line_without_its_content(
        flagship: Exercise, tmp_path: Path, name: str, text: str | bytes, why: str) -> None:
    teams = tmp_path / name
    if isinstance(text, bytes):
        teams.write_bytes(text)
    else:
        teams.write_text(text)
    [problem] = _problems(flagship, teams)
    assert problem.startswith(str(teams)) and why in problem and "\n" not in problem


def test_a_teams_file_may_name_the_exercise_s_own_plays(flagship: Exercise,
                                                        tmp_path: Path) -> None:
    teams = tmp_path / "teams.yaml"
    teams.write_text(f"teams:\n  blue: {_relative(SCRIPTS / 'textbook.yaml', tmp_path)}\n")
    assert [name for name, _ in load_teams_file(teams, flagship).scripts] == ["blue"]


def _relative(path: Path, start: Path) -> str:
    import os

    return os.path.relpath(path, start)


@pytest.mark.parametrize("name, text, why", [
    ("injects", SECRET, "an inject file is a .yaml or .yml file"),
    ("injects.yaml", SECRET, "not an inject file (a YAML mapping with `injects:`)"),
    ("injects.yaml", "injects: !SECRETTAG [1, 2\n", "not valid YAML"),
])
def test_an_inject_file_that_is_not_one_is_one_line_without_its_content(
        flagship: Exercise, tmp_path: Path, name: str, text: str, why: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InjectFileError) as caught:
        load_inject_file(path, flagship)
    [problem] = caught.value.problems
    assert problem.startswith(str(path)) and why in problem
    assert "SECRET" not in problem and "daemon" not in problem


def test_a_play_script_given_directly_that_is_none_is_not_quoted(
        flagship: Exercise, tmp_path: Path) -> None:
    from raceday.engine.script import load_script

    path = tmp_path / "play.yaml"
    path.write_text(SECRET)
    with pytest.raises(ScriptError) as caught:
        load_script(path, flagship)
    assert caught.value.problems == [f"{path}:1: a play script is a mapping with `steps:`"]
