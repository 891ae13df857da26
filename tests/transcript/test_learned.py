"""Issue 62: the debrief opens with what the session taught, in three lines read from the
checklist (so they credit nothing the checklist does not), and what to do next."""

from __future__ import annotations

from pathlib import Path

import pytest

from raceday.engine.headless import run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.script import load_script
from raceday.transcript.debrief import build_debrief, render_markdown
from raceday.transcript.debrief.html import render_html
from raceday.transcript.debrief.learned import learned_lines
from raceday.transcript.debrief.model import ChecklistItem
from raceday.transcript.events import PracticeInfo

ROOT = Path(__file__).resolve().parents[2]


def _debrief(exercise_id: str, script: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    exercise = load_named_exercise(exercise_id)
    path = ROOT / "exercises" / exercise_id / "scripts" / script
    session, _ = run_script(exercise, load_script(path, exercise), tmp_path)
    return build_debrief(session.events)


def test_the_onboardings_debrief_says_what_was_learned_what_is_left_and_what_next(
        tmp_path: Path) -> None:
    d = _debrief("lost-update-basics", "solo-complete.yaml", tmp_path)
    done = [i.practice for i in d.checklist if i.status == "done"]
    left = [i for i in d.checklist if i.status != "done"]
    assert d.learned[0] == "You practised: " + "; ".join(done) + "."
    assert d.learned[1] == "Still to practise: " + "; ".join(i.practice for i in left) + "."
    assert d.learned[2].startswith("Next: play it again (raceday play lost-update-basics) and ")
    md = render_markdown(d)
    assert md.index("## What you learned") < md.index("## Score")
    assert "What you learned</h2><ul><li>You practised: " in render_html(d)


def test_a_team_that_did_nothing_practised_nothing(tmp_path: Path) -> None:
    d = _debrief("dynamodb-dns-race", "nothing.yaml", tmp_path)
    assert d.learned[0] == "You practised none of this exercise's practices yet."
    assert all(i.status != "done" for i in d.checklist)


def _item(ident: str, status: str) -> ChecklistItem:
    return ChecklistItem(ident, ident.title(), status, (), ())


@pytest.mark.parametrize(("statuses", "lines"), [
    ({"a": "done", "b": "done"},
     ("You practised: A; B.", "Still to practise: nothing here; all 2 practices are done.",
      "Next: raceday opens the launcher on the exercise to play next.")),
    ({"a": "partly done", "b": "not done"},
     ("You practised partly: A.", "Still to practise: A; B.",
      "Next: play it again (raceday play x) and add the version.")),
    ({"a": "practised in other", "b": "done"},
     ("You practised: B.", "Still to practise: nothing here; all 1 practices are done.",
      "Next: raceday opens the launcher on the exercise to play next.")),
    ({"a": "practised in other"}, ()),
])
def test_the_three_lines_follow_the_checklist(statuses: dict[str, str],
                                              lines: tuple[str, ...]) -> None:
    items = [_item(k, v) for k, v in statuses.items()]
    practices = [PracticeInfo(id="a", title="A", text="", action="Add the version")]
    assert learned_lines("x", items, practices) == lines
