"""The unknown night (`--unknown`): a night drawn from the exercise's family, played and
judged as that night, told only at the end."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from postgres_server import server_or_skip

from raceday.engine.headless import run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.script import load_script
from raceday.engine.unknown_night import (
    DrawnNight,
    UnknownNightError,
    draw_night,
    named_night,
    unknown_briefing,
)
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev

FLAGSHIP = "dynamodb-dns-race"
SCRIPTS = Path(__file__).resolve().parents[2] / "exercises" / FLAGSHIP / "scripts"
NOTHING = SCRIPTS / "nothing.yaml"
BROAD = SCRIPTS / "unknown" / "broad-monitor.yaml"
RACE_SPECIFIC = SCRIPTS / "unknown" / "race-specific.yaml"

ONSETS = {"race": "23:48", "dangling-pointer": "00:20", "empty-plan": "00:22",
          "lost-write": "00:20", "quiet": None}
"""Each night's first harm with the automation alone, its fault at the file's minute."""


@pytest.fixture(scope="module")
def flagship() -> Exercise:
    return load_named_exercise(FLAGSHIP)


def _play(exercise: Exercise, script: Path, night: DrawnNight, tmp: Path,
          db: str | None = None) -> tuple[dict[str, Any], list[ev.Event]]:
    session, result = run_script(exercise, load_script(script, exercise), tmp, db=db,
                                 night=night)
    return result, list(session.events)


def test_the_family_is_every_night_the_flagship_declares(flagship: Exercise) -> None:
    assert flagship.replay is not None and flagship.replay.nights is not None
    assert [n.night for n in flagship.replay.nights.family] == list(ONSETS)


@pytest.mark.parametrize("night", list(ONSETS))
def test_each_night_plays_headless_with_its_own_onset(flagship: Exercise, night: str,
                                                      tmp_path: Path) -> None:
    result, events = _play(flagship, NOTHING, named_night(flagship, night, 0), tmp_path)
    assert result["fault"]["started_at"] == ONSETS[night]
    assert result["night"]["id"] == night
    revealed = [e for e in events if isinstance(e, ev.NightRevealed)]
    assert len(revealed) == 1 and revealed[0].began_at == ONSETS[night]


@pytest.mark.parametrize("night", list(ONSETS))
def test_each_night_plays_the_same_on_postgresql(flagship: Exercise, night: str,
                                                 tmp_path: Path) -> None:
    dsn = server_or_skip()
    on_sqlite, _ = _play(flagship, NOTHING, named_night(flagship, night, 0), tmp_path / "s")
    on_pg, _ = _play(flagship, NOTHING, named_night(flagship, night, 0), tmp_path / "p", dsn)
    assert on_pg["fault"] == on_sqlite["fault"]
    assert on_pg["total"] == on_sqlite["total"]


def test_a_later_draw_moves_the_fault_by_as_much(flagship: Exercise, tmp_path: Path) -> None:
    result, _ = _play(flagship, NOTHING, named_night(flagship, "lost-write", 12), tmp_path)
    assert result["fault"]["started_at"] == "00:32"
    assert result["night"]["later"] == 12


def _comparable(events: list[ev.Event]) -> list[dict[str, Any]]:
    kept = []
    for event in events:
        record = ev.to_record(event)
        for noisy in ("wall_time", "elapsed_ms", "session"):
            record.pop(noisy, None)
        kept.append(record)
    return kept


def test_the_same_seed_draws_the_same_night_and_the_same_events(flagship: Exercise,
                                                                tmp_path: Path) -> None:
    first, events_a = _play(flagship, BROAD, draw_night(flagship, 2021), tmp_path / "a")
    again, events_b = _play(flagship, BROAD, draw_night(flagship, 2021), tmp_path / "b")
    assert first["night"] == again["night"]
    assert _comparable(events_a) == _comparable(events_b)


def test_a_quiet_night_costs_a_declaration_of_the_race(flagship: Exercise,
                                                       tmp_path: Path) -> None:
    result, _ = _play(flagship, RACE_SPECIFIC, named_night(flagship, "quiet"), tmp_path)
    detection = result["detection"]
    assert result["fault"]["outcome"] == "quiet night"
    assert detection["false_alarms"], detection["reasons"]
    assert detection["points"] < detection["max"]
    assert any("false alarm" in r for r in detection["reasons"])
    quiet, _ = _play(flagship, NOTHING, named_night(flagship, "quiet"), tmp_path / "n")
    assert quiet["detection"]["points"] == quiet["detection"]["max"]  # nothing cried: full


@pytest.mark.parametrize("night", [n for n, onset in ONSETS.items() if onset is not None])
def test_a_monitor_on_empty_answers_detects_every_night_whose_harm_is_one(
        flagship: Exercise, night: str, tmp_path: Path) -> None:
    result, _ = _play(flagship, BROAD, named_night(flagship, night, 4), tmp_path)
    detection = result["detection"]
    assert detection["alert_by"] == "empty-endpoints"
    assert detection["alert_minutes"] == 0
    assert detection["points"] == detection["max"]


def test_a_play_keyed_on_tonights_race_earns_only_where_it_matches(flagship: Exercise,
                                                                   tmp_path: Path) -> None:
    told, _ = _play(flagship, RACE_SPECIFIC, named_night(flagship, "race", 0), tmp_path / "a")
    moved, _ = _play(flagship, RACE_SPECIFIC, named_night(flagship, "race", 4), tmp_path / "b")
    other, _ = _play(flagship, RACE_SPECIFIC, named_night(flagship, "empty-plan", 0),
                     tmp_path / "c")
    assert any("'endpoint-went-backwards' never alerted on this unknown night" in r
               for r in other["detection"]["reasons"])
    broad, _ = _play(flagship, BROAD, named_night(flagship, "empty-plan", 0), tmp_path / "d")
    assert told["detection"]["points"] == told["detection"]["max"]
    assert moved["detection"]["points"] == 0  # acted at the record's minute: held off by hand
    assert moved["fault"]["outcome"] == "held off"
    assert other["detection"]["points"] == 0
    assert broad["total"] > other["total"]


def test_a_harm_that_ended_on_its_own_earns_no_recovery(flagship: Exercise,
                                                        tmp_path: Path) -> None:
    result, _ = _play(flagship, NOTHING, named_night(flagship, "empty-plan", 0), tmp_path)
    recovery = result["recovery"]
    assert recovery["points"] == 0
    assert "ended on its own" in recovery["reasons"][0]


def test_nothing_before_the_end_names_the_night(flagship: Exercise, tmp_path: Path) -> None:
    drawn = named_night(flagship, "lost-write", 8)
    result, events = _play(flagship, NOTHING, drawn, tmp_path)
    start = events[0]
    assert isinstance(start, ev.SessionStart) and start.unknown == drawn.seed
    told = next(i for i, e in enumerate(events) if isinstance(e, ev.NightRevealed))
    assert isinstance(events[told + 1], ev.ScoreEvent)  # told once the night is over
    title = "a write that lost its race"
    # the night as played (the end's replay then plays every night of the family alike)
    over = next(i for i, e in enumerate(events) if isinstance(e, ev.TimelineEnd))
    before = "\n".join(json.dumps(ev.to_record(e)) for e in events[1:over])
    assert "lost-write" not in before and title not in before
    assert draw_night(flagship, start.unknown).night == "lost-write"  # a resume's draw


def test_the_briefing_says_only_that_something_may_go_wrong(flagship: Exercise) -> None:
    text = unknown_briefing(flagship)
    assert "This is an **unknown night**" in text
    assert "Before midnight, something in this system went wrong" not in text
    assert "## The roles" in text  # the rest of the briefing is the exercise's own
    warm_up = unknown_briefing(load_named_exercise("lost-update-basics"))
    assert "This is an **unknown morning**" in warm_up
    assert "a decision that was true when it read it" not in warm_up  # its opening: gone
    assert "## The world" in warm_up


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_any_seed_draws_a_night_of_the_family_within_its_range(seed: int) -> None:
    exercise = _flagship_once()
    drawn = draw_night(exercise, seed)
    assert drawn == draw_night(exercise, seed)
    assert exercise.replay is not None and exercise.replay.nights is not None
    night = exercise.replay.nights.night(drawn.night)
    assert night is not None
    if night.later is None:
        assert drawn.later == 0
    else:
        least, most, step = night.later
        assert least <= drawn.later <= most and (drawn.later - least) % step == 0


@functools.cache
def _flagship_once() -> Exercise:
    """The flagship for every hypothesis example (a fixture is not run per example)."""
    return load_named_exercise(FLAGSHIP)


def test_an_exercise_with_no_family_refuses_an_unknown_night_in_one_line(
        flagship: Exercise) -> None:
    from dataclasses import replace

    assert flagship.replay is not None
    untold = replace(flagship, replay=replace(flagship.replay, nights=None))
    with pytest.raises(UnknownNightError, match="declares no family of nights"):
        named_night(untold, "race")


@pytest.mark.parametrize("exercise", ["lost-update-basics", "isolation-lab"])
def test_the_small_exercises_have_a_race_and_a_quiet_night(exercise: str,
                                                          tmp_path: Path) -> None:
    from raceday.engine.night_check import night_problems

    loaded = load_named_exercise(exercise)
    assert loaded.replay is not None and loaded.replay.nights is not None
    assert {n.night for n in loaded.replay.nights.family} == {"race", "quiet"}
    assert night_problems(loaded) == []  # each plays; the race harms, the quiet night not


def test_raceday_run_unknown_prints_the_night_in_its_json(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "raceday", "run", FLAGSHIP, "--script", str(NOTHING), "--json",
         "--unknown", "--night", "empty-plan", "--transcripts", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["night"]["id"] == "empty-plan"
    assert result["night"]["kind"] == "practice"
    bad = subprocess.run(
        [sys.executable, "-m", "raceday", "run", FLAGSHIP, "--script", str(NOTHING),
         "--unknown", "--night", "no-such-night", "--transcripts", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False)
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "no night 'no-such-night'" in bad.stderr


def test_check_names_a_night_whose_fault_never_comes(flagship: Exercise) -> None:
    from dataclasses import replace

    from raceday.engine.night_check import night_problems
    from raceday.exercise.model import FamilyNight, NightsSpec

    assert flagship.replay is not None and flagship.replay.nights is not None
    too_late = FamilyNight(night="empty-plan", later=(0, 600, 600), line=7)
    nights = NightsSpec(family=(too_late,), situation=flagship.replay.nights.situation)
    broken = replace(flagship, replay=replace(flagship.replay, nights=nights))
    problems = night_problems(broken)
    assert len(problems) == 1
    assert problems[0].startswith(f'{flagship.path}:7: night "empty-plan": played with nobody')
    assert "600 minutes later" in problems[0]
    assert night_problems(flagship) == []


def test_a_crashed_unknown_night_resumes_on_the_same_night(flagship: Exercise,
                                                           tmp_path: Path) -> None:
    from raceday.engine.headless import open_session
    from raceday.engine.resume import resume_session
    from raceday.transcript.log import EVENTS_FILE, read_events

    drawn = named_night(flagship, "lost-write", 8)
    session = open_session(flagship, ("responder",), tmp_path / "whole", night=drawn)
    session.advance_to(session.end_minute)
    session.end()
    recorded = read_events(session.folder).events
    cut = next(i for i, e in enumerate(recorded) if isinstance(e, ev.Fault)) - 3
    folder = tmp_path / "crash" / "session"
    folder.mkdir(parents=True)
    lines = (session.folder / EVENTS_FILE).read_bytes().splitlines(keepends=True)
    (folder / EVENTS_FILE).write_bytes(b"".join(lines[:cut]))
    resumed = resume_session(folder, flagship).session
    assert resumed.night == drawn
    resumed.advance_to(resumed.end_minute)
    resumed.end()
    again = [e for e in read_events(folder).events if not isinstance(e, ev.SessionResumed)]
    unnumbered = [r | {"seq": 0} for r in _comparable(again)]
    assert unnumbered == [r | {"seq": 0} for r in _comparable(list(recorded))]  # event by event


def _script(tmp_path: Path, name: str, steps: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"exercise: {FLAGSHIP}\nroles: [responder]\nsteps:\n{steps}")
    return path


NOOP = """  - wait: next
  - as: responder
    sql: UPDATE automation SET enabled = enabled
"""
QUICK_FIX = """  - wait: next
  - as: responder
    sql: >-
      UPDATE endpoint SET active_plan_id = (SELECT max(p.id) FROM plan AS p WHERE EXISTS
      (SELECT 1 FROM plan_record AS r WHERE r.plan_id = p.id)), updated_by = 'responder'
      WHERE NOT EXISTS (SELECT 1 FROM dns_answer AS d WHERE d.endpoint = endpoint.name)
"""
NEVER_EMPTY = """  - at: "23:01"
    as: responder
    sql: >-
      CREATE TRIGGER never_empty BEFORE UPDATE OF active_plan_id ON endpoint
      WHEN NOT EXISTS (SELECT 1 FROM plan_record AS r WHERE r.plan_id = NEW.active_plan_id)
      BEGIN SELECT RAISE(IGNORE); END
"""


def test_a_write_that_changes_nothing_earns_no_recovery_a_quick_repair_does(
        flagship: Exercise, tmp_path: Path) -> None:
    night = named_night(flagship, "empty-plan", 0)
    noop, _ = _play(flagship, _script(tmp_path, "noop", NOOP), night, tmp_path / "a")
    fixed, _ = _play(flagship, _script(tmp_path, "fix", QUICK_FIX), night, tmp_path / "b")
    assert noop["recovery"]["points"] == 0
    assert "no less than the same night with the automation alone" in \
        noop["recovery"]["reasons"][0]
    assert fixed["recovery"]["points"] > 0  # one minute of harm, where the night alone had two


def test_a_guard_that_keeps_a_practice_nights_harm_away_prevents_it(flagship: Exercise,
                                                                    tmp_path: Path) -> None:
    guard = _script(tmp_path, "guard", NEVER_EMPTY)
    result, _ = _play(flagship, guard, named_night(flagship, "empty-plan", 0), tmp_path / "a")
    assert result["fault"]["outcome"] == "prevented"
    assert result["detection"]["points"] == result["detection"]["max"]
    stopped, _ = _play(flagship, _script(tmp_path, "stop", """  - at: "23:01"
    as: responder
    sql: UPDATE automation SET enabled = 0
"""), named_night(flagship, "empty-plan", 0), tmp_path / "b")
    assert stopped["fault"]["outcome"] == "held off"  # hands, not a guard: nothing earned
    assert stopped["total"] == 0
