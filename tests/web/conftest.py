"""A `raceday serve` of its own for each test, on a free port, in the test's folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from serving import Served, start_serve, stop_serve


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    running = start_serve(tmp_path)
    yield running
    stop_serve(running)
