"""Settings every test shares."""

from __future__ import annotations

import os
import tempfile

# The replay keeps the normal night's good writes in a cache folder; tests keep theirs in a
# folder of their own run, not in the user's ~/.cache.
os.environ.setdefault("RACEDAY_CACHE_DIR", tempfile.mkdtemp(prefix="raceday-test-cache-"))
