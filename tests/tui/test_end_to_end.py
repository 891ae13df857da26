"""A short exercise played through the UI leaves the transcript a headless run of the same
actions leaves (wall times and elapsed times aside)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from textual.widgets import TextArea
from tui_fixtures import MakeApp, settle, start_play, type_text

from raceday.engine.headless import run_script
from raceday.engine.load import load_named_exercise
from raceday.engine.script import load_script
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, MonitorDialog
from raceday.tui.screens.end import EndScreen
from raceday.tui.screens.harden import HardenScreen
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.editor import SqlEditor

pytestmark = pytest.mark.tui

EXERCISE = Path(__file__).parents[2] / "exercises" / "lost-update-basics"
REPAIR = ("UPDATE config SET value = 'db-2', version = version + 1, updated_by = 'operator', "
          "updated_at = '09:06' WHERE key = 'primary_db';")
GUARD = ("UPDATE config SET value = :value, version = version + 1, updated_by = 'writer-b', "
         "updated_at = :now_hhmm WHERE key = 'primary_db' AND version = :version")
MONITOR = "SELECT value FROM config WHERE key = 'primary_db' AND value <> 'db-2'"


def comparable(folder: Path) -> list[ev.Event]:
    """The session's events without what differs by nature (the wall clock, timings, and
    where the session came from: a script run says so, for the history)."""
    out: list[ev.Event] = []
    for e in read_events(folder).events:
        if isinstance(e, ev.Statement):
            e = dataclasses.replace(e, elapsed_ms=0.0)
        if isinstance(e, ev.SessionStart):
            e = dataclasses.replace(e, origin="")
        out.append(dataclasses.replace(e, wall_time=""))
    return out


async def test_ui_and_headless_transcripts_match(make_app: MakeApp, tmp_path: Path) -> None:
    exercise = load_named_exercise(str(EXERCISE))
    app = make_app(exercise)
    waits = 0
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        example = screen.query_one(SqlEditor).text
        await pilot.press("f5")  # the operator's example query
        await settle(pilot)
        await pilot.press("ctrl+n")
        waits += 1
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        for _ in range(3):  # the menu is alphabetical: lost-update ("Writer B saved ...") is last
            await pilot.press("down")
        await pilot.press("enter", "enter")  # the first names the finding, the second declares
        await settle(pilot)
        screen.query_one(SqlEditor).text = ""
        await type_text(pilot, REPAIR)
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("f4")  # harden: every automation statement in an editor
        await pilot.pause()
        harden = app.screen
        assert isinstance(harden, HardenScreen)
        card = harden.card_for("writer-b-save")
        assert card is not None
        card.editor.focus()
        card.editor.text = GUARD
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f7")
        await pilot.pause()
        assert isinstance(app.screen, MonitorDialog)
        await type_text(pilot, "primary-moved")
        await pilot.press("enter")
        app.screen.query_one("#monitor-sql", TextArea).text = MONITOR
        await pilot.press("ctrl+s")
        await settle(pilot)
        while not isinstance(app.screen, ConfirmDialog):
            await pilot.press("ctrl+n")
            waits += 1
            await settle(pilot)
        await pilot.press("enter")  # see the score
        await settle(pilot)
        end = app.screen
        assert isinstance(end, EndScreen)
        ui_folder = end.folder.resolve()

    # ctrl+n stops where the UI's wait events say (the next inject, one a fault brings
    # included, or sooner when a task of the player's falls due): the script waits the same
    untils = [("next" if e.next_inject else e.until)
              for e in read_events(ui_folder).events if isinstance(e, ev.Wait)]
    assert untils and len(untils) <= waits
    script = {
        "exercise": exercise.id,
        "roles": ["operator"],
        "steps": [
            {"as": "operator", "sql": example},
            {"wait": untils[0]},
            {"as": "operator", "declare": "lost-update"},
            {"as": "operator", "sql": REPAIR},
            {"as": "operator", "edit": {"statement": "writer-b-save", "sql": GUARD}},
            {"as": "operator", "monitor": {"name": "primary-moved", "sql": MONITOR}},
            *({"wait": until} for until in untils[1:]),
        ],
    }
    path = tmp_path / "play.yaml"
    path.write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    session, _ = run_script(exercise, load_script(path, exercise), tmp_path / "headless")
    ui_events = comparable(ui_folder)
    headless_events = comparable(session.folder)
    assert [e.kind for e in ui_events] == [e.kind for e in headless_events]
    assert ui_events == headless_events
    assert isinstance(ui_events[-1], ev.ScoreEvent)
