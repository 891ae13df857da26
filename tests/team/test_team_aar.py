"""The after-action report holds the team's own words: the players' names and roles from a
team session, the day it was played apart from the scenario's night, the observers' tagged
notes, the judge's own findings with their evidence, and what the room writes in the hot
wash with `raceday aar`, in both renderings."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from team_fixtures import TOKENS, joined, send

from raceday.cli import main
from raceday.engine.clock import Pace
from raceday.exercise.model import Exercise
from raceday.team.host import Host
from raceday.team.seats import seats_from_roles
from raceday.transcript.debrief import load_debrief

SEATS = ("enactor-a", "enactor-b", "responder")


@pytest.fixture
def played(flagship: Exercise, tmp_path: Path) -> Path:
    host = Host(flagship, seats_from_roles(SEATS), transcripts=tmp_path / "t", pace=Pace.TURNS,
                tokens=TOKENS)
    host.start()
    ana = joined(host, "enactor-a", "Ana Ruiz")
    joined(host, "enactor-b", "Ben Okafor")
    rita = joined(host, "responder", "Rita Chen")
    host.advance_to(55)
    send(host, rita, "sql", sql="SELECT * FROM dns_answer")
    send(host, ana, "sql", sql="SELECT 1")
    host.observer_note("+ Rita read the answers before guessing")
    host.observer_note("- nobody looked for the kill switch")
    host.observer_note("the room went quiet at the alarm")
    host.end()
    host.close()
    return host.folder


def test_the_aar_names_the_players_by_role_and_dates_the_game_day(played: Path) -> None:
    text = (played / "debrief.md").read_text(encoding="utf-8")
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert (f"played on {today} (the scenario's night: 2025-10-19)") in text
    assert "played 2025-10-19" not in text
    participants = next(line for line in text.splitlines() if line.startswith("- Participants"))
    for role, name in (("enactor-a", "Ana Ruiz"), ("enactor-b", "Ben Okafor"),
                       ("responder", "Rita Chen")):
        assert f"{role} ({name})" in participants


def test_observer_notes_and_the_judges_findings_become_strengths_and_areas_for_improvement(
        played: Path) -> None:
    debrief = load_debrief(played)
    a = debrief.after_action
    assert any(re.fullmatch(r"Observed at \d\d:\d\d: Rita read the answers before guessing", x)
               for x in a.strengths)
    assert any(re.fullmatch(r"Observed at \d\d:\d\d: nobody looked for the kill switch", x)
               for x in a.improvements)
    assert not any("went quiet" in x for x in a.strengths + a.improvements)  # untagged
    notes = {o.text: o.tag for o in debrief.observations}
    assert notes["Rita read the answers before guessing"] == "strength"
    assert notes["the room went quiet at the alarm"] == ""
    checklist_gaps = [i for i in debrief.checklist
                      if i.status in ("not done", "partly done") and i.did_not]
    assert checklist_gaps, "a team that never stopped the automation missed a practice"
    gap = checklist_gaps[0]
    line = next(x for x in a.improvements if x.startswith(gap.practice))
    assert gap.did_not[0].rstrip(".") in line  # the evidence, in the team's own verdict


def test_raceday_aar_fills_in_the_hot_wash_and_both_debriefs_show_it(
        played: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["aar", str(played)]) == 0
    listing = capsys.readouterr().out
    assert "Areas for improvement" in listing and "Improvement plan" in listing
    assert main(["aar", str(played), "--analysis", "1", "The stale check was never re-read",
                 "--recommendation", "1", "Re-check the plan generation before applying",
                 "--action", "Add a version guard on endpoint writes",
                 "--note", "+ calm hand-off between enactors", "--at", "23:58",
                 "--by", "Dee", "--evaluators", "Dee (facilitator), Sam (evaluator)"]) == 0
    capsys.readouterr()
    debrief = load_debrief(played)
    rows = debrief.after_action.actions
    added = len(rows)
    assert rows[-1].action == "Add a version guard on endpoint writes"
    assert main(["aar", str(played), "--owner", str(added), "Ana Ruiz", "--due", str(added),
                 "2026-12-16", "--issue", str(added), "Stale plan applied over a newer one",
                 "--start", str(added), "2026-12-03"]) == 0
    assert (played / "aar.json").is_file()
    md = (played / "debrief.md").read_text(encoding="utf-8")
    html = (played / "debrief.html").read_text(encoding="utf-8")
    for text in (md, html):
        assert "The stale check was never re-read" in text
        assert "Re-check the plan generation before applying" in text
        assert "Ana Ruiz" in text and "2026-12-16" in text and "2026-12-03" in text
        assert "Stale plan applied over a newer one" in text
        assert "calm hand-off between enactors" in text
        assert "Dee (facilitator), Sam (evaluator)" in text
        assert "responder (Rita Chen)" in text
    assert f"| {added} | the hot wash | Stale plan applied over a newer one | Add a version " \
           "guard on endpoint writes | Ana Ruiz | 2026-12-03 | 2026-12-16 |" in md
    assert "23:58 **Dee** (strength): calm hand-off between enactors" in md
    # the edits survive a rebuild from the transcript (the session's end writes it again)
    assert main(["debrief", str(played), "--format", "md"]) == 0
    assert "The stale check was never re-read" in capsys.readouterr().out


def test_raceday_aar_says_in_one_line_what_is_wrong(played: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["aar", str(played), "--owner", "99", "Ana"]) == 2
    err = capsys.readouterr().err
    assert "--owner 99: there are" in err and "rows in the improvement plan" in err
    assert main(["aar", str(played), "--due", "1", "next week"]) == 2
    assert "--due 1 next week: not a date (YYYY-MM-DD)" in capsys.readouterr().err
    assert not (played / "aar.json").exists()


def test_the_readmes_one_call_hot_wash_works_on_a_session(
        played: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's call failed on a session with no improvement-plan rows yet (its --owner
    named a row the same call's --action adds) and dropped every other edit of the call."""
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("raceday aar transcripts/<session> --analysis")
    call = readme[start:readme.index("```", start)].replace("\\\n", " ")
    argv = shlex.split(call.replace("transcripts/<session>", str(played)))[1:]
    assert main(argv) == 0, capsys.readouterr().err
    [row] = [r for r in load_debrief(played).after_action.actions
             if r.action == "version guard on endpoint writes"]
    assert row.owner == "Ana" and row.due == "2026-12-16"
    assert main(["aar", str(played), "--owner", "new", "Bo"]) == 0  # the newest row
    assert load_debrief(played).after_action.actions[-1].owner == "Bo"
