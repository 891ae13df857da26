"""tests/slow.txt (the tests `pytest -m "not slow"` leaves out) names tests that are there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from slow_marks import names, slow_entries

ROOT = Path(__file__).resolve().parent.parent


def test_every_entry_names_a_test_file_and_function() -> None:
    gone = []
    for entry in slow_entries():
        path, _, rest = entry.partition("::")
        file = ROOT / path
        function = rest.split("[")[0]
        if not file.is_file() or (function and not re.search(
                rf"^(async )?def {re.escape(function)}\(", file.read_text(encoding="utf-8"),
                re.MULTILINE)):
            gone.append(entry)
    assert not gone, ("tests/slow.txt names tests that are not there (renamed or removed? "
                      f"list the new name, or take the line out): {gone}")


def test_an_entry_names_its_file_function_and_cases_only() -> None:
    assert names("tests/a.py", "tests/a.py::test_b[c]")
    assert names("tests/a.py::test_b", "tests/a.py::test_b[c]")
    assert names("tests/a.py::test_b[c]", "tests/a.py::test_b[c]")
    assert not names("tests/a.py::test_b", "tests/a.py::test_bc")
    assert not names("tests/a.py", "tests/a.pyx::test_b")


def test_the_tests_listed_are_marked_slow_and_no_others(request: pytest.FixtureRequest) -> None:
    """Over the tests this run collected (all of them in CI)."""
    entries = slow_entries()
    wrong = [item.nodeid for item in request.session.items
             if (item.get_closest_marker("slow") is not None)
             != any(names(e, item.nodeid) for e in entries)]
    assert wrong == []
