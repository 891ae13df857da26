"""The Harden screen on a PostgreSQL world shows the statements the session plays there (the
exercise's PostgreSQL variant), so nothing is marked EDITED before the player touches it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from postgres_server import server_or_skip
from textual.pilot import Pilot
from textual.widgets import Static
from tui_fixtures import MakeApp, settle, start_play

from raceday.engine.load import load_named_exercise
from raceday.engine.session import Session
from raceday.exercise.model import Exercise
from raceday.store.postgres.store import PostgresStore
from raceday.tui.screens.harden import HardenScreen
from raceday.tui.screens.play import PlayScreen

pytestmark = [pytest.mark.tui, pytest.mark.postgres]

DSN_VARIABLE = "RACEDAY_TEST_PG_DSN"
LAB = Path(__file__).parents[2] / "exercises" / "isolation-lab"


@pytest.fixture
def pg_world(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The server the session's world is built on (as `raceday play --db` leaves it)."""
    found = server_or_skip()
    monkeypatch.setenv("RACEDAY_DB", found)
    yield found


@asynccontextmanager
async def playing(make_app: MakeApp, exercise: Exercise, **options: Any
                  ) -> AsyncIterator[tuple[Pilot[Any], PlayScreen, Session]]:
    """The play screen of `exercise` on the PostgreSQL world, its session open; the world's
    schema is dropped afterwards, whatever the test found."""
    app = make_app(exercise, **options)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        play = app.screen
        assert isinstance(play, PlayScreen)
        session = play.runner.session if play.runner else None
        assert isinstance(session, Session)
        store = session.store
        assert isinstance(store, PostgresStore)
        try:
            yield pilot, play, session
        finally:
            store.drop()


async def test_harden_on_postgresql_marks_nothing_edited_until_saved(
        make_app: MakeApp, pg_world: str) -> None:
    lab = load_named_exercise(str(LAB))
    async with playing(make_app, lab) as (pilot, _, session):
        varied = [s.id for s in session.exercise.statements
                  if s.sql != next(o.sql for o in lab.statements if o.id == s.id)]
        assert varied, "the lab's PostgreSQL variant changes some statements"
        await pilot.press("f4")
        await pilot.pause()
        harden = pilot.app.screen
        assert isinstance(harden, HardenScreen)
        assert "0 edited" in str(harden.query_one("#harden-bar", Static).content)
        for card in harden.cards:
            head = str(card.query_one(".harden-head", Static).content)
            assert "EDITED" not in head, card.statement.id
        first = harden.card_for(varied[0])
        assert first is not None
        assert first.editor.text == session.statement_sql[varied[0]]
        await pilot.press("escape")
        await settle(pilot)


async def test_the_onboarding_panel_reads_the_postgresql_world(
        make_app: MakeApp, flagship: Exercise, pg_world: str) -> None:
    """The panel's queries are the variant's too: SQLite's `ORDER BY e.rowid` is an error on
    PostgreSQL, which left the DNS answers blank."""
    async with playing(make_app, flagship, mode="onboarding") as (_, play, _session):
        snapshot = play.snapshot
        assert snapshot is not None
        assert snapshot.world.error is None, snapshot.world.error
        endpoints = {answer.endpoint for answer in snapshot.world.answers or ()}
        assert "dynamodb.us-east-1.amazonaws.com" in endpoints
