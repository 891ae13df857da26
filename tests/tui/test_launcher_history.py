"""The launcher shows each exercise's best and last score, read from the history."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_fixtures import MakeApp, settle

from raceday.commands import load_named_exercise
from raceday.engine.headless import open_session

pytestmark = pytest.mark.tui


async def test_the_launcher_shows_best_and_last_beside_a_played_exercise(
        make_app: MakeApp) -> None:
    exercise = load_named_exercise("lost-update-basics")
    totals: list[int] = []
    top = 0
    for repair in (True, False):  # a repaired session, then one that does nothing
        session = open_session(exercise, ("operator",), Path("transcripts"))
        if repair:
            session.advance_to(4)
            session.execute("operator", "UPDATE config SET value = 'db-2', version = 9 "
                                        "WHERE key = 'primary_db'")
        score = session.end()
        totals.append(score.total)
        top = score.max
    assert totals[0] != totals[1]
    app = make_app(None)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#exercises", DataTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert headers[:2] == ["exercise", "your scores"]
        row = table.get_row("lost-update-basics")
        assert row[1] == f"best {max(totals)}/{top} · last {totals[1]}/{top}"
        assert table.get_row("dynamodb-dns-race")[1] == ""


async def test_without_history_the_launcher_has_no_scores_column(make_app: MakeApp) -> None:
    app = make_app(None)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#exercises", DataTable)
        assert "your scores" not in [str(c.label) for c in table.columns.values()]
        assert not Path("transcripts").exists()
