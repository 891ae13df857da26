"""The event contract: every kind round-trips, and a damaged log is one clear line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from raceday.errors import TranscriptError
from raceday.transcript import events as ev
from raceday.transcript import verdicts as vd
from raceday.transcript.log import EventLog, of_kind, read_events

EXAMPLE = Path(__file__).parents[2] / "transcripts" / "examples" / "lost-update-basics-solo-complete"

START = ev.SessionStart(
    schema=ev.SCHEMA_VERSION, exercise="x", title="X", players=("responder",),
    automated=("planner",), pace="turns", clock_start="2025-10-19T23:00:00", zone="PDT",
    summary="s", roles={"responder": "Responder", "planner": "Planner"},
    event_timeline=(ev.Reveal(at="23:48", title="t", source="aws-summary", phase="race"),),
    event_figures={"detection_minutes": 50, "restore_minutes": None},
    findings={"f": ev.FindingInfo(text="it", correct=True)}, length_minutes=225,
)

ONE_OF_EACH: tuple[ev.Event, ...] = (
    START,
    ev.TimelineEnd(note="over"),
    ev.Wait(until="23:50"),
    ev.Inject(id="i", inject_kind="alarm", title="t", text="x", to=("responder",), source="dat453"),
    ev.Note(text="n", role="responder", author="Cleo (observer)"),
    ev.Refused(action="edit", error="no", role="responder", statement="s"),
    ev.Statement(role="responder", sql="SELECT 1", ok=True, rows=1, elapsed_ms=0.5),
    ev.Statement(role="enactor-a", sql="UPDATE e SET a=1", ok=False, error="boom",
                 error_kind="guard", automated=True, task="apply", statement="apply-sql",
                 break_glass=True, schema_changed=True, writes=("endpoint",)),
    ev.Automation(role="enactor-a", task="apply", title="Apply", outcome="failed", attempt=2,
                  next="retry at 23:55", changed=None),
    ev.TaskDue(role="responder", task="t", title="T", context="c", hint_available=True),
    ev.TaskDone(role="responder", task="t", title="T", points=5),
    ev.Edit(role="responder", statement="s", sql="new", before="old"),
    ev.RaceStep(step="stale-apply", title="Stale", by_player=True),
    ev.Fault(invariant="inv", fault="empty", relapse=True, rows=(("a", 1, None, 2.5),)),
    ev.InvariantClear(invariant="inv", fault="empty"),
    ev.Restored(note="ok"),
    ev.Milestone(id="m", label="M"),
    ev.Chart(label="Fleet", series=("queue", "leased"), minutes=(0, 1), values=((5.0, 3.0), (0.0, 2.5)),
             clock=("02:25", "02:26"), mark_minutes=(1,), mark_titles=("That night, 02:26: x",)),
    ev.CheckFailed(sql="SELECT 1", error="no such table"),
    ev.MonitorSaved(role="responder", name="m", sql="SELECT 1"),
    ev.MonitorRemoved(name="m"),
    ev.MonitorError(name="m", error="e"),
    ev.Alert(name="m", role="responder", columns=("a",), rows=(("x",),), count=1, matched=False),
    ev.AlertClear(name="m"),
    ev.Detected(how="declared", latency_minutes=3),
    ev.Declaration(role="responder", finding="f", text="it", correct=True, verdict="confirmed"),
    ev.Hint(id="h", text="look", cost=2, task="t"),
    ev.TeamLeft(note="left", until="02:45", after_team_left=True),
    ev.SeatJoined(seat="enactor-a", role="enactor-a", player="ana", rejoin=True),
    ev.SeatLeft(seat="enactor-a", role="enactor-a", player="ana"),
    ev.SeatLost(seat="enactor-a", role="enactor-a", player="ana", silent_seconds=12),
    ev.SeatReady(seat="responder", role="responder", player="rita", ready=False),
    ev.SeatCommand(seat="enactor-a", role="enactor-a", player="ana", action="sql", command=7),
    ev.CommandRefused(seat="enactor-a", action="sql", error="forged", command=8,
                      role="planner", player="ana"),
    ev.Replay(available=False, error="the replay failed: x", final=True),
    ev.Cast(names={"planner": "Ana", "enactor-a": "Bo"}),
    ev.Facilitation(action="speed", speed=3.75),
    ev.Facilitation(action="schedule", at="23:55", to=("responder",), detail="Exec asks",
                    text="Where are we?"),
    ev.SessionResumed(recorded=7, note="the last line was cut short"),
    ev.NightRevealed(night="empty-plan", night_kind="practice", title="a plan written with no "
                     "records", later=4, began_at="00:25", gave_away="monitor 'empty' alerted"),
    ev.Replay(available=True,
              result=ev.ReplayResult(
                  steps=(ev.StepReplay(id="s", title="S", status="prevented", at="23:48",
                                       outcome="refused (guard): no", faults_after=("empty",)),),
                  fault_at=None,
                  blocked_good_writes=(ev.BlockedWrite(task="t", at="23:10", outcome="0 rows"),),
                  warnings=("w",), folder="replay/1"),
              guards=ev.ReplayGuards(points=10, max=40, penalty=0, worth={"s": 10})),
    ev.ScoreEvent(reason="ended", score=vd.Score(
        total=5, max=100, fault=vd.Fault(occurred=True, started_at="23:48", outcome=vd.OCCURRED),
        detection=vd.Detection(points=5, max=30, alert_minutes=3, false_alarms=(
            vd.FalseAlarm(finding="f", at="23:50"),), noise=("m",)),
        guards=vd.Guards(points=0, max=40, steps=(vd.StepVerdict(
            id="s", title="S", status=vd.HAPPENED, live=vd.HAPPENED, live_at="23:48"),),
            good_path=(vd.GoodPath(id="g", ok=False, why="0 rows"),), judged_by=vd.BY_REPLAY,
            blocked_good_writes=(ev.BlockedWrite(task="t", at="23:10", outcome="0 rows"),)),
        recovery=vd.Recovery(points=0, max=30, outage_minutes=12, relapses=("00:12",)),
        tasks=vd.Tasks(points=0, max=5), hints=vd.Hints(revealed=("h",), cost=2),
        reasons=("r",))),
)


def test_every_kind_is_covered_by_the_round_trip() -> None:
    assert {type(e) for e in ONE_OF_EACH} == set(ev.EVENT_TYPES)


def write_log(folder: Path, events: tuple[ev.Event, ...]) -> tuple[ev.Event, ...]:
    log = EventLog(folder)
    written = tuple(log.append(dataclasses.replace(e, sim_time="23:00", minute=i))
                    for i, e in enumerate(events))
    log.close()
    return written


def test_every_kind_round_trips_through_the_log(tmp_path: Path) -> None:
    written = write_log(tmp_path, ONE_OF_EACH)
    back = read_events(tmp_path)
    assert back.warning is None
    assert back.events == written
    assert [e.seq for e in back.events] == list(range(1, len(ONE_OF_EACH) + 1))


def test_the_score_and_replay_keep_their_fields_at_the_top_level(tmp_path: Path) -> None:
    write_log(tmp_path, ONE_OF_EACH)
    records = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    score = records[-1]
    assert score["kind"] == "score" and score["total"] == 5 and score["reasons"] == ["r"]
    replay = records[-2]
    assert replay["prevented"] == ["s"] and replay["steps"][0]["status"] == "prevented"
    assert replay["guards"]["points"] == 10


def test_the_committed_example_still_reads() -> None:
    log = read_events(EXAMPLE)
    assert log.start is not None and log.start.exercise == "lost-update-basics"
    assert log.start.schema == 1  # written before the field existed
    statements = list(of_kind(log.events, ev.Statement))
    assert statements and all(isinstance(s.ok, bool) for s in statements)
    assert isinstance(log.events[-1], ev.ScoreEvent)


def damaged(tmp_path: Path, change: str) -> str:
    """Write a small good log, damage it as `change` says, and return the one-line error."""
    write_log(tmp_path, ONE_OF_EACH[:8])
    path = tmp_path / "events.jsonl"
    lines = path.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    if change == "missing field":
        del records[2]["until"]
    elif change == "wrong type":
        records[6]["ok"] = "yes"
    elif change == "boolean for a number":
        records[6]["rowcount"] = True
    elif change == "null for text":
        records[6]["role"] = None
    elif change == "number for optional text":
        records[6]["error"] = 7
    elif change == "duplicate seq":
        records[3]["seq"] = 3
    elif change == "missing seq":
        records[3]["seq"] = 5
    elif change == "minute out of range":
        records[4]["minute"] = 100_000
    elif change == "unknown kind":
        records[4]["kind"] = "explosion"
    elif change == "future schema":
        records[0]["schema"] = 99
    elif change == "not first":
        records = records[1:]
    lines = [json.dumps(r) for r in records]
    if change == "deep":
        lines.insert(3, '{"seq": 4, "kind": "note", "text": ' + "[" * 100_000 + "]" * 100_000 + "}")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptError) as caught:
        read_events(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize(("change", "line", "words"), [
    ("missing field", 3, "missing field 'until'"),
    ("wrong type", 7, "statement.ok: expected true or false"),
    ("boolean for a number", 7, "statement.rowcount: a boolean is not int | None"),
    ("null for text", 7, "statement.role: expected text, got null"),
    ("number for optional text", 7, "statement.error: a number is not str | None"),
    ("duplicate seq", 4, "a duplicate"),
    ("missing seq", 4, "a gap before it"),
    ("minute out of range", 5, "minute 100000 is outside the exercise (0 to 225)"),
    ("unknown kind", 5, "unknown event kind 'explosion'"),
    ("future schema", 1, "schema version 99 is not one this raceday reads"),
    ("not first", 1, "the first event must be session_start"),
    ("deep", 4, "nested too deeply"),
])
def test_a_damaged_log_is_one_line_naming_the_line(tmp_path: Path, change: str, line: int,
                                                   words: str) -> None:
    message = damaged(tmp_path, change)
    assert f"events.jsonl:{line}:" in message
    assert words in message


def test_a_torn_last_line_is_a_warning_not_an_error(tmp_path: Path) -> None:
    write_log(tmp_path, ONE_OF_EACH[:3])
    with (tmp_path / "events.jsonl").open("a") as f:
        f.write('{"seq": 4, "kind": "no')
    back = read_events(tmp_path)
    assert len(back.events) == 3 and back.warning and "cut short" in back.warning


def test_events_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        START.title = "changed"  # type: ignore[misc]


def test_a_lone_surrogate_is_written_whole_and_leaves_no_gap(tmp_path: Path) -> None:
    odd = ev.Note(text="a\ud800b", sim_time="23:00")
    written = write_log(tmp_path, (START, odd, ev.Note(text="after")))
    back = read_events(tmp_path)
    assert [e.seq for e in back.events] == [1, 2, 3]
    assert back.events[1] == written[1]
