"""One after-action report for the room: `raceday aar GROUP` (a group folder, as `raceday
host --teams` and `raceday run --team` write it) sets every team side by side on the same
objectives, draws the harms each team's customers saw over the night, lists each team's
strengths and areas for improvement, and merges the teams' corrective actions into one
improvement plan that names each row's teams; in Markdown and in HTML."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from raceday.cli import main
from raceday.exercise.model import Exercise
from raceday.team.group import read_group
from raceday.team.group_script import load_teams_file, run_group_script
from raceday.transcript.debrief import load_debrief

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parents[1] / "transcript" / "golden" / "transcripts"

# two reference plays of every bundled exercise, one room each (their whole transcripts,
# kept as goldens by tests/transcript/test_whole_transcripts.py)
ROOMS = {
    "dynamodb-dns-race": ("textbook", "as-it-happened"),
    "isolation-lab": ("for-update", "as-it-happened"),
    "lost-update-basics": ("solo-complete", "no-guards"),
    "recovery-under-load": ("throttle-by-queue", "nothing"),
}


def room_of(exercise: str, tmp_path: Path) -> Path:
    """A group folder whose teams are two reference plays of `exercise`."""
    group = tmp_path / f"{exercise}-teams"
    teams = []
    for team, play in zip(("red", "blue"), ROOMS[exercise], strict=True):
        folder = group / team / f"20261207T000000Z-{exercise}"
        folder.mkdir(parents=True)
        source = GOLDEN / f"{exercise}-scripts-{play}.jsonl.gz"
        (folder / "events.jsonl").write_bytes(gzip.decompress(source.read_bytes()))
        teams.append({"name": team, "folder": f"{team}/{folder.name}"})
    (group / "teams.json").write_text(json.dumps({"exercise": exercise, "title": exercise,
                                                  "teams": teams}), encoding="utf-8")
    return group


@pytest.mark.parametrize("exercise", sorted(ROOMS))
def test_the_room_s_aar_of_every_bundled_exercise(exercise: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    group = room_of(exercise, tmp_path)
    assert main(["aar", str(group)]) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    assert f"The room's after-action report for 2 teams: {group / 'aar.md'}" in said
    md = (group / "aar.md").read_text(encoding="utf-8")
    html = (group / "aar.html").read_text(encoding="utf-8")
    info = read_group(group)
    debriefs = {team: load_debrief(folder) for team, folder in info.teams}
    # the same objectives, side by side: one column per team, each cell that team's points
    assert "|  | red | blue |" in md
    for objective in debriefs["red"].objectives:
        cells = [next(f"{o.points}/{o.max} {o.rating}" for o in d.objectives
                      if o.name == objective.name) for d in debriefs.values()]
        assert f"| {objective.name} | {cells[0]} | {cells[1]} |" in md
        assert objective.name in html
    # each team's strengths and areas for improvement, from its own AAR
    for team, d in debriefs.items():
        assert f"### Team {team} ({d.score.total}/{d.score.max})" in md  # type: ignore[union-attr]
        for line in d.after_action.strengths[:2] + d.after_action.improvements[:2]:
            assert " ".join(line.split())[:50] in md.replace("\\", "")
    # one improvement plan, each row naming the teams whose AAR has it
    actions = {a.action for d in debriefs.values() for a in d.after_action.actions}
    plan = md[md.index("## 5. Improvement plan for the room"):].replace("\\", "")  # unescaped
    for action in actions:
        row = next(line for line in plan.splitlines() if action[:40] in line)
        owners = [t for t, d in debriefs.items()
                  if action in {a.action for a in d.after_action.actions}]
        assert all(f"{t} (" in row for t in owners), row
    # harms over time, one strip per team on the night's clock
    assert "## 3. Harms over time" in md
    # a page that stands alone: no script, no link out, nothing fetched
    assert "<script" not in html and "://" not in html and 'src="' not in html
    assert '<meta name="viewport"' in html


def test_a_group_played_headless_gets_one_report_with_every_team(
        flagship: Exercise, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    group = run_group_script(flagship, load_teams_file(DATA / "three-teams.yaml", flagship),
                             tmp_path / "t").folder
    assert group is not None
    # the room wrote into red's AAR in the hot wash: the room's report shows it
    red = read_group(group).team_folder("red")
    assert main(["aar", str(red), "--owner", "1", "Ana Ruiz", "--due", "1", "2026-12-16"]) == 0
    capsys.readouterr()
    assert main(["aar", str(group)]) == 0
    md = (group / "aar.md").read_text(encoding="utf-8")
    assert "|  | red | blue | green | that night |" in md  # the score's figures
    assert re.search(r"\| detection \| 30/30 P \| 30/30 P \| \d+/30 [SMU] \|", md), md
    harms = md[md.index("## 3. Harms over time"):md.index("## 4.")]
    assert "### An endpoint's DNS answer is empty" in harms
    for team in ("red", "blue", "green"):
        assert re.search(rf"^{team} +[·█ ]+  \d+ min: \d\d:\d\d-\d\d:\d\d", harms, re.M), harms
    green = next(line for line in harms.splitlines() if line.startswith("green"))
    assert "157 min: 23:48-02:25" in green  # what AWS did that night, for green's customers
    plan = md[md.index("## 5. Improvement plan for the room"):]
    assert "owner: Ana Ruiz; due: 2026-12-16" in plan
    row = next(line for line in plan.splitlines() if "owner: Ana Ruiz" in line)
    assert "red (" in row and "green (" in row  # both teams' AARs have it: one row
    html = (group / "aar.html").read_text(encoding="utf-8")
    assert "Ana Ruiz" in html and html.count('class="bar"') == 3


def test_edits_on_a_group_say_which_session_takes_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    group = room_of("lost-update-basics", tmp_path)
    assert main(["aar", str(group), "--owner", "1", "Ana"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--owner: a group's AAR is built from its teams' own" in err
    assert str(group / "red") in err
    assert not (group / "aar.md").exists()


def test_a_team_whose_transcript_is_gone_is_named_and_the_others_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    group = room_of("lost-update-basics", tmp_path)
    blue = read_group(group).team_folder("blue")
    (blue / "events.jsonl").unlink()
    assert main(["aar", str(group)]) == 0
    said = capsys.readouterr().out
    assert "blue: cannot be read" in said
    md = (group / "aar.md").read_text(encoding="utf-8")
    assert "### Team red (" in md and "Its transcript cannot be read" in md
