"""`-- on_zero_rows: stop` in an edited automation statement (issue 27, the article's
row-count practice): a conditional write that changed no rows ends its task's run there,
instead of carrying on as if it had won; the debrief's checklist credits each run it ended,
and a directive raceday cannot follow is refused at the edit with one line."""

from __future__ import annotations

from pathlib import Path

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript import events as ev
from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.log import of_kind, read_events

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "exercises" / "isolation-lab"
B_APPLY = """UPDATE endpoint
SET active_plan_id = :plan, version = version + 1, updated_by = 'enactor-b', updated_at = :now_hhmm
WHERE name = 'dynamodb.us-east-1.amazonaws.com' AND version = :version"""


def play(tmp_path: Path, sql: str) -> tuple[list[ev.Event], dict[str, object]]:
    script = tmp_path / "play.yaml"
    body = "\n".join("        " + line for line in sql.splitlines())
    script.write_text(f"""exercise: isolation-lab
roles: [operator]
steps:
  - as: operator
    edit:
      statement: b-apply
      sql: |-
{body}
  - wait: "23:46"
""", encoding="utf-8")
    ex = load_exercise(LAB)
    session, result = run_script(ex, load_script(script, ex), tmp_path / "transcripts")
    return list(read_events(Path(str(result["session"]))).events), result


def b_runs_at(events: list[ev.Event], time: str) -> list[ev.Event]:
    return [e for e in events if e.sim_time == time and getattr(e, "role", "") == "enactor-b"]


def test_a_lost_conditional_write_marked_stop_ends_its_run(tmp_path: Path) -> None:
    events, _ = play(tmp_path, B_APPLY + "\n-- on_zero_rows: stop")
    at_44 = b_runs_at(events, "23:44")
    statements = [e.statement for e in at_44 if isinstance(e, ev.Statement)]
    assert statements == ["b-apply"], statements  # b-log and b-commit never ran
    (run,) = [e for e in at_44 if isinstance(e, ev.Automation) and e.task == "b-apply"]
    assert run.outcome == "zero_rows"
    assert run.note == ("stopped: b-apply changed 0 rows, and its SQL says "
                        "'-- on_zero_rows: stop'")
    items = {i.id: i for i in build_debrief(events).checklist}
    assert items["row-counts"].status == "done", items["row-counts"]
    assert "the run stopped instead of carrying on" in items["row-counts"].did[0]


def test_without_the_directive_the_run_carries_on(tmp_path: Path) -> None:
    events, _ = play(tmp_path, B_APPLY)
    statements = [e.statement for e in b_runs_at(events, "23:44") if isinstance(e, ev.Statement)]
    assert statements == ["b-apply", "b-log", "b-commit"]
    items = {i.id: i for i in build_debrief(events).checklist}
    assert items["row-counts"].status != "done"


def test_a_directive_raceday_cannot_follow_is_refused_at_the_edit(tmp_path: Path) -> None:
    events, _ = play(tmp_path, B_APPLY + "\n-- on_zero_rows: halt")
    (refused,) = of_kind(events, ev.Refused)
    assert refused.error == ("'-- on_zero_rows: halt' is not a choice: write "
                             "'-- on_zero_rows: stop' (end the run when this write changes no "
                             "rows) or '-- on_zero_rows: ignore'")
    assert not list(of_kind(events, ev.Edit))  # nothing was changed
