"""A copy of the minimal exercise per test, in a fresh working directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from exercise_fixtures import Broken


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Broken:
    monkeypatch.chdir(tmp_path)
    return Broken(tmp_path)
