"""`raceday resume`: a session cut short at any event goes on as if nothing happened.

A crash is made by copying an uninterrupted session's transcript up to a random event (and,
sometimes, half of the next line, as a killed write leaves it) into a fresh folder beside
the world.db of the moment. The resumed session then plays the rest of the script; its
transcript must equal the uninterrupted one event for event (timings aside), with one
`session_resumed` event at the seam.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from raceday.engine.headless import open_session, play_step
from raceday.engine.load import load_exercise
from raceday.engine.resume import (
    CRASHED_WORLD,
    ResumeError,
    exercise_of,
    resume_session,
    unfinished_sessions,
)
from raceday.engine.script import Script, load_script
from raceday.engine.session import Session
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.events import to_record
from raceday.transcript.log import EVENTS_FILE, read_events

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"
FLAGSHIP = EXERCISES / "dynamodb-dns-race"


@pytest.fixture(scope="module")
def flagship() -> Exercise:
    return load_exercise(FLAGSHIP)


def _comparable(event: ev.Event) -> dict[str, Any]:
    record = to_record(event)
    for volatile in ("wall_time", "elapsed_ms", "folder"):
        record.pop(volatile, None)
    return record


def _play(exercise: Exercise, script: Script, root: Path,
          stop_after: int | None = None) -> tuple[Session, list[int]]:
    """Play `script`; return the session and, for each step, how many events were written
    before its action. Stops (without ending) once `stop_after` events are written."""
    session = open_session(exercise, script.roles, root)
    before: list[int] = []
    for step in script.steps:
        before.append(len(session.events))
        if step.action == "end":
            break
        play_step(session, step, f"{script.path}:{step.line}")
    return session, before


def _crash_copy(source: Path, dest: Path, cut: int, torn: bool) -> None:
    """What a kill -9 after `cut` events leaves: the lines so far (maybe half the next one)."""
    dest.mkdir(parents=True)
    lines = (source / EVENTS_FILE).read_bytes().splitlines(keepends=True)
    data = b"".join(lines[:cut])
    if torn and cut < len(lines):
        data += lines[cut][: len(lines[cut]) // 2]
    (dest / EVENTS_FILE).write_bytes(data)


@pytest.mark.parametrize("script_name", ["textbook.yaml", "guarded.yaml"])
def test_a_session_cut_at_random_events_resumes_to_the_same_transcript(
        tmp_path: Path, flagship: Exercise, script_name: str) -> None:
    script = load_script(FLAGSHIP / "scripts" / script_name, flagship)
    whole, before = _play(flagship, script, tmp_path / "whole")
    whole.end()
    recorded = read_events(whole.folder).events
    rng = random.Random(f"resume-{script_name}")
    cuts = sorted(rng.sample(range(2, len(recorded) - 40), 6))
    for n, cut in enumerate(cuts):
        folder = tmp_path / f"crash-{n}" / "session"
        _crash_copy(whole.folder, folder, cut, torn=n % 2 == 0)
        resumed = resume_session(folder, flagship)
        session = resumed.session
        # the steps whose action the crash recorded are done; play the rest
        acted = [i for i, b in enumerate(before) if b < cut]
        start = acted[-1] + 1 if acted else 0
        if acted and _action_recorded(recorded, before, acted[-1], cut) is False:
            start = acted[-1]
        for step in script.steps[start:]:
            if step.action == "end":
                break
            play_step(session, step, f"{script.path}:{step.line}")
        session.end()
        again = read_events(folder).events
        seam = [e for e in again if isinstance(e, ev.SessionResumed)]
        assert len(seam) == 1, f"cut {cut}"
        assert [e.seq for e in again] == list(range(1, len(again) + 1))
        without = [e for e in again if not isinstance(e, ev.SessionResumed)]
        assert [_comparable(e) | {"seq": 0} for e in without] == \
            [_comparable(e) | {"seq": 0} for e in recorded], f"cut {cut}"
        score = again[-1]
        assert isinstance(score, ev.ScoreEvent)
        assert score.score == recorded[-1].score  # type: ignore[attr-defined]


def _action_recorded(recorded: tuple[ev.Event, ...], before: list[int], step: int,
                     cut: int) -> bool:
    """Did the crash record anything the step's own action emitted (not only its `at`)?"""
    for event in recorded[before[step]:cut]:
        if not getattr(event, "automated", True) or isinstance(
                event, (ev.MonitorSaved, ev.Declaration, ev.Edit, ev.Hint, ev.Wait, ev.Refused)):
            return True
    return False


def test_a_finished_session_refuses_to_resume_in_one_line(tmp_path: Path,
                                                          flagship: Exercise) -> None:
    script = load_script(FLAGSHIP / "scripts" / "nothing.yaml", flagship)
    session, _ = _play(flagship, script, tmp_path)
    session.end()
    with pytest.raises(ResumeError) as caught:
        resume_session(session.folder, flagship)
    assert "is finished" in str(caught.value) and "\n" not in str(caught.value)
    assert unfinished_sessions(tmp_path) == []


def test_a_live_session_is_not_resumed_beside_itself(tmp_path: Path, flagship: Exercise) -> None:
    session = open_session(flagship, ("responder",), tmp_path)
    session.execute("responder", "SELECT 1")
    with pytest.raises(ResumeError, match="still running"):
        resume_session(session.folder, flagship)
    assert unfinished_sessions(tmp_path) == []  # the launcher does not offer it either
    session.end()


def test_the_world_the_crash_left_is_checked_and_kept_when_it_differs(
        tmp_path: Path, flagship: Exercise) -> None:
    session = open_session(flagship, ("responder",), tmp_path)
    session.execute("responder", "UPDATE automation SET enabled = 0")
    session.store.execute("responder", "UPDATE automation SET enabled = 1")  # never recorded
    session.store.close()
    session.log.close()  # as a kill leaves it: no score
    [found] = unfinished_sessions(tmp_path)
    assert found.folder == session.folder and found.exercise == flagship.id
    assert exercise_of(session.folder) == flagship.id
    resumed = resume_session(session.folder, flagship)
    assert "automation" in resumed.note and CRASHED_WORLD in resumed.note
    assert (session.folder / CRASHED_WORLD).exists()
    rows = resumed.session.store.app_query("SELECT enabled FROM automation")[1]
    assert {r[0] for r in rows} == {0}  # the world as the transcript says it was
    resumed.session.end()


def test_a_resumed_session_keeps_its_monitors_hints_and_clock(tmp_path: Path,
                                                               flagship: Exercise) -> None:
    session = open_session(flagship, ("responder",), tmp_path)
    session.save_monitor("responder", "empty", "SELECT name FROM endpoint WHERE 0")
    session.reveal_hint()
    session.wait(session.minute + 30)
    session.declare("responder", flagship.findings[0].id)
    minute, facts = session.minute, session.facts
    session.store.close()
    session.log.close()
    shutil.rmtree(session.folder / "replay", ignore_errors=True)
    (session.folder / "world.db").unlink()  # even with the world gone
    resumed = resume_session(session.folder, flagship)
    again = resumed.session
    assert "world.db was missing" in resumed.note
    assert again.minute == minute
    assert set(again.monitors) == {"empty"}
    assert again.facts.hints == facts.hints
    assert again.facts.declarations == facts.declarations
    again.end()


def test_a_transcript_from_another_exercise_says_so(tmp_path: Path, flagship: Exercise) -> None:
    other = load_exercise(EXERCISES / "lost-update-basics")
    session = open_session(other, None, tmp_path)
    session.store.close()
    session.log.close()
    with pytest.raises(ResumeError, match="lost-update-basics"):
        resume_session(session.folder, flagship)


def test_the_command_line_resumes_headless_and_refuses_a_finished_session(
        tmp_path: Path, flagship: Exercise, capsys: pytest.CaptureFixture[str]) -> None:
    from raceday.cli import main

    session = open_session(flagship, ("responder",), tmp_path)
    session.execute("responder", "UPDATE automation SET enabled = 0")
    session.close()  # as a kill leaves it
    capsys.readouterr()
    assert main(["resume", str(session.folder), "--exercise", str(FLAGSHIP), "--end",
                 "--json"]) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    assert result["session"] == str(session.folder) and result["max"] == 100
    assert "resumed" in out.err
    assert main(["resume", str(session.folder), "--exercise", str(FLAGSHIP)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is finished" in err and "\n" not in err


def test_a_session_resumed_and_cut_short_again_resumes_again(tmp_path: Path,
                                                            flagship: Exercise) -> None:
    session = open_session(flagship, ("responder",), tmp_path)
    session.execute("responder", "UPDATE automation SET enabled = 0")
    session.close()
    first = resume_session(session.folder, flagship).session
    first.save_monitor("responder", "empty", "SELECT name FROM endpoint WHERE 0")
    first.wait(first.minute + 20)
    minute = first.minute
    first.close()
    second = resume_session(session.folder, flagship).session
    assert second.minute == minute and set(second.monitors) == {"empty"}
    events = read_events(session.folder).events
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(isinstance(e, ev.SessionResumed) for e in events) == 2
    second.end()
