"""What a seat's screen shows is what the host's screen shows: the snapshot survives the wire."""

from __future__ import annotations

from raceday.engine.snapshot import Answer, ChartView, MonitorView, PendingView, Snapshot, WorldView
from raceday.team import wire


def test_a_snapshot_crosses_the_wire_whole() -> None:
    snapshot = Snapshot(
        minute=12, clock_face="23:13", end_minute=180, timeline_over=False, ended=False,
        healthy=False, next_inject=30,
        pending=(PendingView("apply", "enactor-a", "Apply plan", "23:14", "plan 140", True),),
        monitors=(MonitorView("empty", "responder", "SELECT 1"),),
        world=WorldView(
            answers=(Answer("dynamodb.us-east-1", ()), Answer("sqs", (("10.0.0.1", 100),))),
            counts=(("plan", 4),), switches=(("enactor-a", True),), answers_label="DNS",
            tables=(("queue", ("name", "depth"), (("dwfm", "3"),)),),
            charts=(ChartView("launches", ("ok", "failed"), (0, 5), ((1.0, 2.0), (0.0, 3.5)),
                              marks=((5, "throttle"),), start="02:25", clock=("02:25", "02:30")),),
            answers_total=10_004, answers_empty=12),
        statement_sql=(("apply", "UPDATE endpoint SET active_plan_id = :plan"),),
    )
    assert wire.snapshot_from_json(wire.snapshot_to_json(snapshot)) == snapshot
