"""The onboarding teaches by thinking, not by copying (issue 62): what the side panel shows
with each task is a question, never the SQL that answers it (F9 prices that), and the
README's promise about the SQL it asks holds for every guard."""

from __future__ import annotations

import re
from pathlib import Path

from raceday.engine.load import load_exercise
from raceday.tui.widgets.tasks import render_tasks

ROOT = Path(__file__).resolve().parents[2]
ONBOARDING = load_exercise(ROOT / "exercises" / "lost-update-basics")
# what an answer looks like: a statement, or a clause the on-request hints give
ANSWER = re.compile(r"\b(CREATE|INSERT|DELETE FROM|UPDATE \w+ SET|RAISE|UNIQUE INDEX)\b"
                    r"|AND version = :version|= \(SELECT", re.IGNORECASE)


def test_each_task_shows_a_question_and_no_answer() -> None:
    shown = {t.id: t.hint for t in ONBOARDING.tasks if t.hint}
    assert len(shown) == 7  # the repair and the six guards
    for task, text in shown.items():
        assert "?" in text, (task, text)
        assert not ANSWER.search(text), (task, text)
        for hint in (h for h in ONBOARDING.hints if h.task == task):
            assert hint.cost > 0  # the SQL is there, on request, at its price
            assert " ".join(hint.text.split())[:30] not in " ".join(text.split())


def test_the_side_panel_shows_the_question_under_think() -> None:
    from raceday.engine.snapshot import PendingView

    task = next(t for t in ONBOARDING.tasks if t.id == "guard-version")
    due = PendingView(task.id, task.role, task.title, "09:05", task.context, True, task.at)
    panel = " ".join(render_tasks(ONBOARDING, "operator", task.at, (due,), set(), hints=True,
                                  statement_sql=None).plain.split())
    assert "think: Writer B read the row, then saved much later." in panel
    assert "how:" not in panel and not ANSWER.search(panel.split("think:")[1])


def test_the_readmes_promise_names_what_the_guards_ask() -> None:
    """Played as triggers, every guard earns its points with no table rebuilt
    (tests/scenarios/test_customers_view.py plays lost-update-guards-as-triggers.yaml)."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert ("no SQL beyond SELECT and UPDATE needed to begin; its six guards each take one "
            "statement (an edited UPDATE, a trigger or a unique index: no table is rebuilt)"
            ) in readme
    triggers = (ROOT / "tests" / "scenarios" / "customers" /
                "lost-update-guards-as-triggers.yaml").read_text(encoding="utf-8")
    assert "CREATE TABLE" not in triggers and "RENAME" not in triggers


def test_a_newcomers_pace_every_guard_right_with_nine_extra_looks_scores_80_or_more(
        tmp_path: Path) -> None:
    """Each look cost a simulated minute: nine looks before the guards left too little of the
    morning for them, and every guard right scored 68. Looks are free in the onboarding."""
    import yaml

    from raceday.engine.headless import run_script
    from raceday.engine.script import load_script

    path = ROOT / "exercises" / "lost-update-basics" / "scripts" / "solo-complete.yaml"
    script = yaml.safe_load(path.read_text(encoding="utf-8"))
    steps = script["steps"]
    repair = next(i for i, s in enumerate(steps) if "UPDATE config" in str(s.get("sql", "")))
    looks = [{"as": "operator", "sql": f"SELECT name, address, status FROM host -- look {n}"}
             for n in range(9)]
    script["steps"] = steps[:repair + 1] + looks + steps[repair + 1:]
    paced = tmp_path / "newcomer.yaml"
    paced.write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    _session, result = run_script(ONBOARDING, load_script(paced, ONBOARDING), tmp_path / "t")
    assert result["total"] >= 80, result["reasons"]
    assert result["guards"]["points"] == result["guards"]["max"], result["reasons"]


def test_each_tasks_help_is_a_ladder_question_pointer_then_the_sql() -> None:
    """The question comes free with the task; on request a pointer (the table and column, no
    answer), and only after it the SQL, each at its price."""
    asked = {t.id for t in ONBOARDING.tasks if t.hint}
    for task in asked:
        ladder = [h for h in ONBOARDING.hints if h.task == task]
        assert [bool(ANSWER.search(h.text)) for h in ladder] == [False, True], task
        pointer, sql = ladder
        assert pointer.cost > 0 and sql.cost > 0 and sql.play is not None
        assert ONBOARDING.rung_below(sql.id) == pointer
        assert ONBOARDING.rung_below(pointer.id) is None


def test_a_player_takes_the_pointer_before_the_sql_a_facilitator_gives_either(
        tmp_path: Path) -> None:
    from raceday.engine.actions import RevealHint
    from raceday.engine.headless import open_session
    from raceday.transcript import events as ev

    session = open_session(ONBOARDING, ["operator"], tmp_path)
    try:
        refused = session.perform(RevealHint(hint="version-sql", role="operator"))
        assert isinstance(refused, ev.Refused)
        assert refused.error == ('hint "version-sql" comes after "version-pointer" on its '
                                 "task's ladder: take that one first")
        assert session.perform(RevealHint(hint="version-pointer", role="operator")).kind == "hint"
        assert session.perform(RevealHint(hint="version-sql", role="operator")).kind == "hint"
        assert session.perform(RevealHint(hint="fence-sql")).kind == "hint"  # the facilitator
    finally:
        session.close()


def test_pasting_every_hint_scores_below_writing_the_same_sql_unaided(tmp_path: Path) -> None:
    import yaml

    from raceday.engine.headless import run_script
    from raceday.engine.script import load_script

    path = ROOT / "exercises" / "lost-update-basics" / "scripts" / "solo-complete.yaml"
    script = yaml.safe_load(path.read_text(encoding="utf-8"))
    steps = script["steps"]
    page = steps.index({"wait": "09:04"}) + 1  # the page: every hint taken at once
    hinted = dict(script, steps=steps[:page] + [
        {"as": "operator", "hint": h.id} for h in ONBOARDING.hints] + steps[page:])
    scores = []
    for name, play in (("unaided", script), ("hinted", hinted)):
        file = tmp_path / f"{name}.yaml"
        file.write_text(yaml.safe_dump(play, sort_keys=False), encoding="utf-8")
        _s, result = run_script(ONBOARDING, load_script(file, ONBOARDING), tmp_path / name)
        scores.append(result["total"])
    unaided, hinted_total = scores
    assert hinted_total == unaided - sum(h.cost for h in ONBOARDING.hints), scores
