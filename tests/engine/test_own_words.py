"""A finding in the player's own words: a script declares it, the judge leaves it to the
facilitator (unruled, it neither counts nor costs), bad words are a one-line refusal, and
`raceday resume` declares it again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from raceday.engine.actions import Declare
from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.resume import resume_session
from raceday.engine.script import load_script
from raceday.errors import ScriptError
from raceday.exercise.model import OWN_WORDS, Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import EVENTS_FILE
from raceday.transcript.render import describe

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
WORDS = "The clean-up deleted the plan the endpoint was still using"

_PLAY = """\
exercise: dynamodb-dns-race
roles: [responder]
steps:
  - as: responder
    monitor:
      name: empty-endpoints
      sql: |
        SELECT e.name FROM endpoint AS e
        WHERE NOT EXISTS (SELECT 1 FROM dns_answer AS d WHERE d.endpoint = e.name)
  - at: "23:55"
    as: responder
    sql: SELECT name, active_plan_id FROM endpoint
{extra}  - wait: "01:00"
"""


@pytest.fixture(scope="module")
def flagship() -> Exercise:
    return load_exercise(FLAGSHIP)


def _script(tmp_path: Path, name: str, extra: str) -> Path:
    path = tmp_path / name
    path.write_text(_PLAY.format(extra=extra), encoding="utf-8")
    return path


def test_a_scripted_finding_in_own_words_unruled_scores_as_without_it(
        tmp_path: Path, flagship: Exercise) -> None:
    plain = _script(tmp_path, "plain.yaml", "")
    worded = _script(tmp_path, "worded.yaml",
                     f'  - as: responder\n    declare: {{text: "{WORDS}"}}\n')
    _, without = run_script(flagship, load_script(plain, flagship), tmp_path / "a")
    session, with_words = run_script(flagship, load_script(worded, flagship), tmp_path / "b")
    [declared] = [e for e in session.events if isinstance(e, ev.Declaration)]
    assert (declared.finding, declared.text, declared.verdict) == (OWN_WORDS, WORDS, "to_rule")
    assert "counts once ruled right, and costs nothing unless ruled wrong" in declared.why
    assert with_words["total"] == without["total"]
    assert with_words["detection"]["points"] == without["detection"]["points"] > 0
    assert f"detection: '{WORDS}' (own words, 23:56) was not ruled: it neither counts nor " \
           "costs" in with_words["reasons"]
    assert [r for r in with_words["reasons"] if "own words" not in r] == without["reasons"]


def test_a_script_refuses_empty_words_with_its_line(tmp_path: Path, flagship: Exercise) -> None:
    bad = _script(tmp_path, "bad.yaml", '  - as: responder\n    declare: {text: "  "}\n')
    with pytest.raises(ScriptError) as raised:
        load_script(bad, flagship)
    assert raised.value.problems == [
        f"{bad}:14: declare in your own words must be {{text: \"...\"}} with words"]


def test_an_unknown_finding_in_a_script_points_to_own_words(tmp_path: Path,
                                                            flagship: Exercise) -> None:
    bad = _script(tmp_path, "bad.yaml", "  - as: responder\n    declare: aliens\n")
    with pytest.raises(ScriptError) as raised:
        load_script(bad, flagship)
    [problem] = raised.value.problems
    assert problem.startswith(f"{bad}:14: unknown finding 'aliens' (findings are ")
    assert problem.endswith('; or {text: "..."} in your own words)')


def test_bad_words_are_a_one_line_refusal_and_play_goes_on(tmp_path: Path,
                                                         flagship: Exercise) -> None:
    from raceday.engine.headless import open_session
    session = open_session(flagship, ("responder",), tmp_path)
    empty = session.perform(Declare(role="responder", finding=OWN_WORDS, text=" \t "))
    long = session.perform(Declare(role="responder", finding=OWN_WORDS, text="x" * 250))
    controls = session.perform(Declare(role="responder", finding=OWN_WORDS,
                                       text="rm\x1b[2J the screen"))
    assert [(e.action, e.error) for e in (empty, long, controls)
            if isinstance(e, ev.Refused)] == [
        ("declare", "a finding in your own words needs words"),
        ("declare", "a finding in your own words is at most 200 characters, not 250"),
        ("declare", "a finding in your own words is one line of printable characters")]
    fine = session.perform(Declare(role="responder", finding=OWN_WORDS, text=f"  {WORDS} "))
    assert isinstance(fine, ev.Declaration) and fine.text == WORDS
    assert describe(fine) == f"responder declared in their own words: {WORDS}"
    assert session.facts.own_words == [(fine.minute, WORDS)]
    assert session.facts.declarations == []  # not the judge's to count
    session.end()


def test_resume_declares_the_own_words_again(tmp_path: Path, flagship: Exercise) -> None:
    from raceday.engine.headless import open_session
    session = open_session(flagship, ("responder",), tmp_path)
    session.wait(session.minute + 50)
    minute = session.perform(Declare(role="responder", finding=OWN_WORDS, text=WORDS)).minute
    cut = tmp_path / "crashed"  # what a kill -9 leaves: the events so far
    cut.mkdir()
    shutil.copy(session.folder / EVENTS_FILE, cut / EVENTS_FILE)
    session.end()
    again = resume_session(cut, flagship).session
    assert again.facts.own_words == [(minute, WORDS)]
    [declared] = [e for e in again.events if isinstance(e, ev.Declaration)]
    assert (declared.finding, declared.text, declared.verdict) == (OWN_WORDS, WORDS, "to_rule")
    again.end()
