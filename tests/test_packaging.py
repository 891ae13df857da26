"""A wheel carries the bundled exercises, so `pip install raceday` users can play them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_carries_the_bundled_exercises_and_assets(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT),
                    "-w", str(tmp_path)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("raceday-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for exercise in ("dynamodb-dns-race", "lost-update-basics"):
        for part in ("exercise.yaml", "world.sql", "briefing.md"):
            assert f"raceday/bundled/{exercise}/{part}" in names
    assert "raceday/exercise/exercise.schema.json" in names
    assert "raceday/tui/app.tcss" in names
    assert "raceday/web/templates/app_index.html" in names  # the browser's page (raceday serve)
