"""Settings every test shares."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

# The replay keeps the normal night's good writes in a cache folder; tests keep theirs in a
# folder of their own run, not in the user's ~/.cache.
os.environ.setdefault("RACEDAY_CACHE_DIR", tempfile.mkdtemp(prefix="raceday-test-cache-"))
# The variant night is drawn for each session; tests draw the same one every run.
os.environ.setdefault("RACEDAY_SEED", "2021")  # Enactor A 6 minutes later: C cleans up


@pytest.fixture(autouse=True)
def _no_night_left_ahead() -> Iterator[None]:
    """A session opened in one test starts the replay's original nights in children
    (`prepare_ahead`); the next test must not take over what the last one started."""
    yield
    from raceday.engine.replay import discard_ahead

    discard_ahead()
