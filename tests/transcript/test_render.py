"""`raceday transcript` and the score as the terminal shows it, from typed events."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from test_events import ONE_OF_EACH

from raceday.transcript import events as ev
from raceday.transcript import verdicts as vd
from raceday.transcript.render import describe, print_score, print_transcript

EXAMPLE = Path(__file__).parents[2] / "transcripts" / "examples" / "lost-update-basics-solo-complete"


def test_every_kind_has_its_own_words() -> None:
    for event in ONE_OF_EACH:
        line = describe(event)
        assert line and line != event.kind, event


def test_a_statement_says_what_it_did_as_wording_does() -> None:
    read, failed = (e for e in ONE_OF_EACH if isinstance(e, ev.Statement))
    assert describe(read) == "responder: SELECT 1  -> read 1 row"
    assert describe(failed) == ("enactor-a (automation) [break-glass]: UPDATE e SET a=1  -> "
                                "refused (guard): boom")
    zero = ev.Statement(role="r", sql="UPDATE t SET a = 1", ok=True, rowcount=0)
    ddl = ev.Statement(role="r", sql="CREATE TABLE t (a)", ok=True, rowcount=0,
                       schema_changed=True)
    many = ev.Statement(role="r", sql="SELECT *", ok=True, rows=500, truncated=True)
    assert describe(zero).endswith("-> 0 rows changed")
    assert describe(ddl).endswith("-> changed the schema")
    assert describe(many).endswith("-> read more than 500 rows")


def test_the_replay_line_names_what_it_prevented() -> None:
    replays = [e for e in ONE_OF_EACH if isinstance(e, ev.Replay)]
    assert [describe(e) for e in replays] == [
        "replay: the replay failed: x", "REPLAY: prevented s; no race step happened"]


def test_a_score_line_reads_into_typed_verdicts_even_when_sparse_or_old() -> None:
    sparse = ev.score_from_json({"total": 5, "max": 100})
    assert (sparse.total, sparse.max, sparse.parts, sparse.reasons) == (5, 100, (), ())
    assert not sparse.fault.occurred and not sparse.fault.prevented_outright
    assert sparse.fault.outcome == ""  # not recorded, and nothing implies it
    full = ev.score_from_json({
        "total": 70, "max": 100, "fault": {"occurred": True, "started_at": "23:48"},
        "detection": {"points": 30, "max": 30, "latency_minutes": 2, "event_minutes": 50},
        "guards": {"points": 40, "max": 40, "steps": [
            {"id": "a", "title": "A", "status": "prevented", "detail": "x"}]},
        "recovery": {"points": 0, "max": 30, "minutes_to_restore": None},
        "hints": {"revealed": ["h1"], "cost": 3}, "reasons": ["r1", "r2"]})
    assert [(name, p.points, p.max) for name, p in full.parts] == [
        ("detection", 30, 30), ("guards", 40, 40), ("recovery", 0, 30)]
    assert full.fault.started_at == "23:48" and full.fault.outcome == vd.OCCURRED
    assert full.detection is not None and full.recovery is not None
    assert (full.detection.latency_minutes, full.detection.event_minutes) == (2, 50)
    assert full.recovery.minutes_to_restore is None
    assert full.steps == (vd.StepVerdict(id="a", title="A", status="prevented", detail="x"),)
    assert (full.hints.revealed, full.hints.cost, full.reasons) == (("h1",), 3, ("r1", "r2"))
    # a line from before steps and the fault's outcome were recorded
    old = ev.score_from_json({
        "total": 100, "max": 100, "fault": {"occurred": False},
        "detection": {"points": 30, "max": 30}, "guards": {
            "points": 40, "max": 40, "prevented": ["a"], "happened": []}})
    assert old.fault.prevented_outright
    assert old.steps == (vd.StepVerdict(id="a", status=vd.PREVENTED),)


def test_a_score_line_of_the_wrong_shape_is_one_clear_error() -> None:
    with pytest.raises(ev.EventError, match=r"score\.guards\.steps\[0\]\.points: expected a whole"):
        ev.score_from_json({"total": 1, "max": 2, "guards": {
            "points": 0, "max": 40, "steps": [{"id": "a", "points": "ten"}]}})


def test_print_score_and_the_transcript() -> None:
    out = Console(width=200, record=True, file=io.StringIO())
    score = vd.Score(total=5, max=100, reasons=("why",))
    print_score(score, out, Path("t/s"))
    assert out.export_text().splitlines() == [
        "Score 5/100", "No fault occurred.", "  - why", "Transcript: t/s"]
    out = Console(width=200, record=True, file=io.StringIO())
    assert print_transcript(EXAMPLE, out) == 0
    text = out.export_text()
    assert "session started: The lost update" in text and "Score 100/100" in text


def test_a_refusal_and_a_cancel_are_said_once_and_for_what_they_are() -> None:
    refused = ev.Statement(role="r", sql="DELETE FROM plan", ok=False, error_kind="refused",
                           error="refused: table plan may not be written by r")
    cancelled = ev.Statement(role="r", sql="SELECT 1", ok=False, error_kind="timeout",
                             error="statement cancelled after 1.2 s")
    assert describe(refused).endswith("-> refused: table plan may not be written by r")
    assert describe(cancelled).endswith("-> stopped: statement cancelled after 1.2 s")


def test_a_guard_is_marked_guard_and_a_forbidden_write_break_glass() -> None:
    guard = ev.Statement(role="responder", sql="CREATE TRIGGER t BEFORE UPDATE ON endpoint "
                         "BEGIN SELECT RAISE(ABORT, 'no'); END", ok=True, rowcount=0,
                         break_glass=True, schema_changed=True)
    forced = ev.Statement(role="responder", sql="UPDATE endpoint SET active_plan_id = 9",
                          ok=True, rowcount=1, break_glass=True, writes=("endpoint",))
    dropped = ev.Statement(role="responder", sql="DROP TABLE plan", ok=True, rowcount=0,
                           break_glass=True, schema_changed=True)
    assert describe(guard).startswith("responder [guard]: CREATE TRIGGER")
    assert describe(forced).startswith("responder [break-glass]: UPDATE")
    assert describe(dropped).startswith("responder [break-glass]: DROP")
