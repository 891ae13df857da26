"""Issue 59: an error nothing caught ended the app with exit status 0 and nothing in
raceday.log. It now ends with status 1, its traceback in the session's log, and one line
saying where."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from textual.pilot import Pilot

from raceday.logfile import LOG_FILE, log_to, stop_logging
from raceday.tui.app import RacedayApp, run_app

pytestmark = pytest.mark.tui


def _break() -> None:
    raise KeyError(25)  # as OptionList._move_page raised on a hidden list


def test_an_uncaught_error_ends_with_status_1_and_its_traceback_on_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    log = log_to(tmp_path)
    app = RacedayApp()

    async def press(pilot: Pilot[object]) -> None:
        await pilot.pause()
        app.call_later(_break)  # in the app's own loop, as a key's action runs
        await pilot.pause()

    try:
        monkeypatch.setattr(app, "run", partial(app.run, headless=True, auto_pilot=press))
        assert run_app(app) == 1
    finally:
        stop_logging()
    assert log == tmp_path / LOG_FILE
    text = log.read_text(encoding="utf-8")
    assert "the app ended on an unexpected error" in text and "KeyError: 25" in text
    err = capsys.readouterr().err
    assert f"raceday: the app ended on an unexpected error (its traceback is in {log}" in err
