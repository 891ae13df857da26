"""Every kind of event as the TUI shows it: the feed, the world panel, review, the end."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from rich.console import Console

from raceday.engine.guide import Guide, guide_steps
from raceday.engine.load import load_named_exercise
from raceday.transcript import events as ev
from raceday.tui.screens.end import end_markdown
from raceday.tui.screens.review import event_detail, line_of, notable, rulings
from raceday.tui.widgets.feed import feed_text
from raceday.tui.widgets.world import Alarms

_spec = importlib.util.spec_from_file_location(
    "event_samples", Path(__file__).parents[1] / "transcript" / "test_events.py")
assert _spec is not None and _spec.loader is not None
_samples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_samples)
ONE_OF_EACH: tuple[ev.Event, ...] = _samples.ONE_OF_EACH


def _text(renderable: object) -> str:
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_the_feed_words_every_kind_or_leaves_it_out() -> None:
    left_out = {type(e) for e in ONE_OF_EACH if feed_text(e) is None}
    assert left_out == {ev.SessionStart, ev.Wait, ev.TaskDue}  # tasks: the task panel
    automated_ok = ev.Statement(role="b", sql="SELECT 1", ok=True, rows=1, automated=True)
    assert feed_text(automated_ok) is None  # the automation line says what the task did
    judged = {type(e) for e in ONE_OF_EACH
              if feed_text(e) is not None and feed_text(e, judge=False) is None}
    assert judged == {ev.Fault, ev.InvariantClear, ev.RaceStep, ev.Restored}
    zero = ev.Statement(role="r", sql="UPDATE t SET a = 1", ok=True, rowcount=0)
    line = feed_text(zero)
    assert line is not None and line.style == "yellow" and "0 rows changed" in line.plain


def test_review_shows_every_kind_in_full() -> None:
    for event in ONE_OF_EACH:
        assert line_of(event)
        shown = _text(event_detail(event))
        assert f"{event.kind}" in shown, event
    edit = next(e for e in ONE_OF_EACH if isinstance(e, ev.Edit))
    assert "before:" in _text(event_detail(edit))
    score = next(e for e in ONE_OF_EACH if isinstance(e, ev.ScoreEvent))
    assert "  - r" in _text(event_detail(score))
    assert not notable(ev.Wait(until="23:50"))
    assert notable(next(e for e in ONE_OF_EACH if isinstance(e, ev.Automation)))


def test_review_shows_a_declaration_as_the_facilitator_ruled_it() -> None:
    """Issue 57: a claim in the player's own words read `correct: False` in review after the
    facilitator ruled it right."""
    claim = ev.Declaration(seq=7, sim_time="23:52", role="responder", finding="own-words",
                           text="the clean-up deleted the plan in use", correct=False,
                           verdict="to_rule")
    ruled = ev.Facilitation(seq=9, sim_time="23:55", action="ruling", ruling="right",
                            declaration=7, text="she saw the delete in plan's history")
    assert "correct: False" in _text(event_detail(claim))
    shown = _text(event_detail(claim, rulings((claim, ruled)).get(claim.seq)))
    assert "correct: False" not in shown
    assert "correct: ruled right by the facilitator at 23:55: she saw the delete" in shown


def test_the_world_panel_keeps_faults_alerts_and_alarms() -> None:
    alarms = Alarms()
    changed = [alarms.note(e) for e in ONE_OF_EACH]
    assert sum(changed) == 6  # inject, fault, clear, alert, alert clear, monitor removed
    assert alarms.faults == {} and alarms.alerting == {}
    assert alarms.recent == [("", "t")]


def test_the_guide_moves_on_typed_events() -> None:
    exercise = load_named_exercise("dynamodb-dns-race")
    guide = Guide(guide_steps(exercise, "responder"))
    automated = ev.Statement(role="b", sql="SELECT 1", ok=True, automated=True)
    assert not guide.observe(automated)
    assert guide.observe(ev.Statement(role="responder", sql="SELECT 1", ok=True))
    assert guide.observe(ev.Wait(until="23:50"))
    assert guide.index == 2


def test_the_end_screen_sets_the_team_beside_that_night(tmp_path: Path) -> None:
    exercise = load_named_exercise("dynamodb-dns-race")
    start = ev.SessionStart(
        exercise=exercise.id, title=exercise.title, players=("responder",), automated=(),
        pace="turns", clock_start="2025-10-19T23:00:00", zone="PDT", summary="", roles={},
        event_timeline=(ev.Reveal(at="23:48", title="the race began", source="aws-summary"),))
    fault = ev.Fault(invariant="i", fault="an endpoint is empty", sim_time="23:48", minute=48)
    score = ev.ScoreEvent(reason="ended", score=ev.score_from_json({
        "total": 30, "max": 100, "fault": {"occurred": True, "started_at": "23:48"},
        "detection": {"points": 30, "max": 30, "latency_minutes": 2, "event_minutes": 50},
        "reasons": ["detection 30/30: quick"]}))
    text = end_markdown(exercise, score.score, tmp_path, (start, fault, score))
    assert text.startswith("# Score 30/100")
    assert "The fault began at **23:48**." in text
    assert "| detection | 30/30 |" in text and "- detection 30/30: quick" in text
    assert "| surfaced the fault after | 2 min | 50 min |" in text
    assert "| 23:48 | **fault**: an endpoint is empty |  |" in text
    assert "| 23:48 |  | the race began |" in text


def test_the_feed_gives_a_busy_minute_of_routine_automation_one_line() -> None:
    from raceday.tui.widgets.feed import MinuteGroups

    def run(minute: str, task: str, outcome: str = "applied") -> ev.Automation:
        return ev.Automation(sim_time=minute, role="dwfm", task=task, title=task,
                             outcome=outcome, changed=3 if outcome == "applied" else 0)

    groups = MinuteGroups()
    busy: list[ev.Event] = [run("04:14", f"t{i}") for i in range(8)]
    busy.append(run("04:14", "idle", "skipped"))
    statement = ev.Statement(sim_time="04:14", role="dwfm", sql="UPDATE t SET a = 1", ok=True,
                         rowcount=3, automated=True)  # left out of the feed: not a break
    busy.insert(4, statement)
    assert all(groups.push(e) == [] for e in busy)  # held until the minute is over
    alarm = ev.Inject(sim_time="04:14", id="a", title="NLB capacity low", inject_kind="alarm")
    shown = groups.push(alarm)  # the alarm comes right after one line for the minute
    assert len(shown) == 1
    assert shown[0][1].plain == ("automation: 9 runs (dwfm); 24 rows changed, "
                                 "1 with nothing to do")
    # a quiet minute keeps its lines, and a failed run is never folded away
    calm = [run("04:15", "a"), run("04:15", "b")]
    for e in calm:
        groups.push(e)
    failed = run("04:16", "c", "failed")
    lines = groups.push(failed)
    assert [e for e, _t in lines] == calm
    assert groups.held == []
