"""The PostgreSQL server the tests may build worlds in, or the reason they skip.

`.ci/run` starts a server and sets RACEDAY_TEST_PG_DSN; on a machine without one, every test
that needs it skips and says why (no DSN, no psycopg, or the server does not answer)."""

from __future__ import annotations

import os

import pytest

DSN_VARIABLE = "RACEDAY_TEST_PG_DSN"


def server_or_skip() -> str:
    """The DSN of a reachable server; the calling test (or fixture) skips otherwise."""
    found = os.environ.get(DSN_VARIABLE) or None
    if found is None:
        pytest.skip(f"no PostgreSQL: set {DSN_VARIABLE} (.ci/run starts a server and sets it)")
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[test]')")
    try:
        psycopg.connect(found, connect_timeout=3).close()
    except psycopg.Error as exc:
        pytest.skip(f"PostgreSQL at {DSN_VARIABLE} is not reachable: {exc}")
    return found
