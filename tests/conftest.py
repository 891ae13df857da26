"""Settings every test shares."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest
from reference_plays import ReferencePlays
from slow_marks import names, slow_entries

# The replay keeps the normal night's good writes in a cache folder; tests keep theirs in a
# folder of their own run, not in the user's ~/.cache.
os.environ.setdefault("RACEDAY_CACHE_DIR", tempfile.mkdtemp(prefix="raceday-test-cache-"))
# The variant night is drawn for each session; tests draw the same one every run.
os.environ.setdefault("RACEDAY_SEED", "2021")  # Enactor A 6 minutes later: C cleans up


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker more than the cores. A worker waits a fair part of its time (on
    PostgreSQL's server, on chromium, on a TUI's timers), so with one per core a fifth of
    the CPU stood idle; one more filled it (2 cores: 656 s -> 548 s; two more: 565 s).
    PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores + 1


def pytest_configure(config: pytest.Config) -> None:
    """Compile raceday once, where every process looks for it: with PYTHONDONTWRITEBYTECODE
    set (as on these machines) an editable install is otherwise compiled again by each
    `raceday` the tests start (about 0.5 s of CPU each)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller compiled it before the workers started
    import compileall
    from pathlib import Path

    import raceday

    compileall.compile_dir(str(Path(raceday.__file__).parent), quiet=1)


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test tests/slow.txt names is marked `slow` (`pytest -m "not slow"`: the inner
    loop); the run's own `@group` suffix (xdist) is not part of the name. The slow tests
    run first (in their files' order): xdist hands the workers tests in the order collected,
    so a minute-long test collected last (the key walks, tests/tui) ran alone at the end
    while the other workers stood idle."""
    entries = slow_entries()
    slow = set()
    for item in items:
        if any(names(entry, item.nodeid) for entry in entries):
            item.add_marker(pytest.mark.slow)
            slow.add(item.nodeid)
    items.sort(key=lambda item: item.nodeid not in slow)  # stable: each file's order kept


@pytest.fixture(autouse=True)
def _no_night_left_ahead() -> Iterator[None]:
    """A session opened in one test starts the replay's original nights in children
    (`prepare_ahead`); the next test must not take over what the last one started."""
    yield
    from raceday.engine.replay import discard_ahead

    discard_ahead()


@pytest.fixture(scope="session")
def reference_play(tmp_path_factory: pytest.TempPathFactory) -> ReferencePlays:
    """`reference_play(exercise, script)`: the bundled script played once for the whole run
    (all workers), its folder and score; for tests that only read what it left."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, shared by the workers (each has popen-gwN)
    return ReferencePlays(base / "reference-plays")
