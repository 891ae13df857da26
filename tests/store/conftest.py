"""Fixtures: a fresh small world per test (row cap 20, time limit 0.5 s)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixtures import ROLES, WORLD_SQL

from raceday.store.sqlite_store import WorldStore


@pytest.fixture
def world_path(tmp_path: Path) -> Path:
    return tmp_path / "world" / "world.db"


@pytest.fixture
def store(world_path: Path) -> Iterator[WorldStore]:
    world_path.parent.mkdir(parents=True, exist_ok=True)
    with WorldStore.create(world_path, WORLD_SQL, ROLES, row_cap=20, time_limit_s=0.5) as built:
        yield built
