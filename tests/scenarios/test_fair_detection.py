"""Fair detection that says so at once (issue 27): a monitor detects when the fault changed
its answer, whatever it selects; a look counts when its answer reflected the fault, not when
it merely differs (random(), the computer's clock); credit is graded by time, with no cliff;
and a declaration says at once whether it counts and, if not, why.

The plays live beside this file (`detection/`), each with the score range it must get and the
reason it must give.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reference_plays import ReferencePlays

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

ROOT = Path(__file__).resolve().parents[2]
PLAYS = Path(__file__).resolve().parent / "detection"


def exercise_of(name: str) -> str:
    path = PLAYS / f"{name}.yaml"
    return next(line.split(":", 1)[1].strip() for line in path.read_text().splitlines()
                if line.startswith("exercise:"))


def play(name: str, transcripts: Path) -> tuple[dict[str, Any], tuple[ev.Event, ...]]:
    path = PLAYS / f"{name}.yaml"
    exercise = load_exercise(ROOT / "exercises" / exercise_of(name))
    _, result = run_script(exercise, load_script(path, exercise), transcripts)
    return result, read_events(Path(result["session"])).events


Played = tuple[dict[str, Any], tuple[ev.Event, ...]]


RUL_SIZE = 4000
"""recovery-under-load's plays run at 4,000 droplets, not the bundled 20,000 (a third of the
time, most of it the final replay): detection is graded by the minutes from the fault to the
look, which the fleet's size does not move (15 and 17 minutes at 20,000 too)."""


@pytest.fixture
def plays(reference_play: ReferencePlays) -> Callable[[str], Played]:
    """Each play played once for the whole run, whichever worker asks first (a
    recovery-under-load play takes ~10 s), so the tests spread over the workers."""

    def get(name: str) -> Played:
        exercise, path = exercise_of(name), PLAYS / f"{name}.yaml"
        played = (reference_play.sized(exercise, path, RUL_SIZE)
                  if exercise == "recovery-under-load" else reference_play(exercise, path))
        return played.result, read_events(played.folder).events

    return get


def reasons(result: dict[str, Any]) -> str:
    return "\n".join(result["reasons"])


def declared(events: tuple[ev.Event, ...]) -> list[ev.Declaration]:
    return list(of_kind(events, ev.Declaration))


# (play, lowest detection, highest detection, words the reasons must contain)
PLAYED = [
    # a look at random() over the evidence's tables shows nothing: it was 30 before
    ("random-look", 0, 0, "cannot show it: it calls random() or reads the computer's clock"),
    # the same, hidden in a view: it answers differently when run again at once
    ("random-view-look", 0, 0, "it gave a different answer when run again at once"),
    ("clock-look", 0, 0, "reads the computer's clock"),
    # a count that names no endpoint alerts on the fault at 23:48: full credit (was 0)
    ("count-monitor", 30, 30, "time to alert 0 minutes (monitor 'too-few-answers' at 23:48)"),
    # a count that returns rows on a healthy night too is noise
    ("count-monitor-noise", 0, 0, "noise, not detection"),
    # from memory first (does not count), then a look and the finding again: graded by time
    ("memory-then-look", 18, 26, "a diagnosis from memory is not a diagnosis"),
    # the jobs' own log shows the lost update: it counts (was "from memory", 0)
    ("lub-job-run-look", 15, 20, "time to diagnosis 1 minute"),
    # the queues read at 02:35, ten minutes after the fault began: it counts (was 0, a cliff)
    ("rul-look-0235", 15, 20, "time to diagnosis 15 minutes"),
    ("rul-look-0237", 15, 20, "time to diagnosis 17 minutes"),
]


@pytest.mark.parametrize(("name", "low", "high", "words"), PLAYED, ids=[p[0] for p in PLAYED])
def test_detection_is_fair(name: str, low: int, high: int, words: str,
                           plays: Callable[[str], Played]) -> None:
    result, _ = plays(name)
    assert low <= result["detection"]["points"] <= high, reasons(result)
    assert words in reasons(result), reasons(result)


def test_a_random_look_says_at_once_that_it_does_not_count(plays: Callable[[str], Played]) -> None:
    result, events = plays("random-look")
    [declaration] = declared(events)
    assert declaration.verdict == "unseen"
    assert declaration.why.startswith("It does not count yet: nothing you have looked at "
                                      "shows this yet")
    assert "SELECT random() FROM endpoint" in declaration.why
    assert result["detection"]["latency_minutes"] is None
    assert result["total"] <= 5  # nothing else earns anything: no guard, no repair


def test_a_declaration_from_memory_says_why_and_counts_after_a_look(plays: Callable[[str], Played]) -> None:
    result, events = plays("memory-then-look")
    first, second = declared(events)
    assert first.verdict == "unseen" and "no query or monitor of yours read" in first.why
    assert "between the fault (23:48) and this declaration" in first.why
    assert second.verdict == "confirmed" and second.why.startswith("It counts: your look at 00:10")
    assert result["detection"]["diagnosed_at"] == "00:11"


def test_a_look_at_the_jobs_log_counts_at_once(plays: Callable[[str], Played]) -> None:
    _, events = plays("lub-job-run-look")
    [declaration] = declared(events)
    assert declaration.verdict == "confirmed"
    assert declaration.why.startswith("It counts: your look at 09:04 (SELECT at, role, job, "
                                      "outcome FROM job_run")


def test_a_count_monitor_alerts_whatever_it_selects(plays: Callable[[str], Played]) -> None:
    result, events = plays("count-monitor")
    detection = result["detection"]
    assert detection["alert_minutes"] == 0 and detection["alert_by"] == "too-few-answers"
    assert detection["noise"] == []
    [alert] = [a for a in of_kind(events, ev.Alert) if a.name == "too-few-answers"]
    assert alert.sim_time == "23:48" and alert.rows == ((9,),)


def test_credit_is_graded_with_no_cliff(plays: Callable[[str], Played]) -> None:
    earlier, _ = plays("rul-look-0235")
    later, _ = plays("rul-look-0237")
    assert earlier["detection"]["points"] >= later["detection"]["points"] > 0
    assert "since the fault began" not in reasons(earlier)


def test_two_runs_of_a_play_are_identical(tmp_path: Path) -> None:
    first, _ = play("count-monitor", tmp_path / "a")
    second, _ = play("count-monitor", tmp_path / "b")
    assert first["reasons"] == second["reasons"] and first["total"] == second["total"]
