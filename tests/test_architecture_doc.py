"""docs/ARCHITECTURE.md stays a true map: it names every package, and what it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SRC = ROOT / "src" / "raceday"


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_package_is_on_the_map() -> None:
    packages = sorted(
        str(init.parent.relative_to(ROOT)) + "/" for init in SRC.rglob("__init__.py")
        if "bundled" not in init.parts and init.parent != SRC
    )
    missing = [p for p in packages if p not in _text()]
    assert not missing, f"docs/ARCHITECTURE.md does not name {', '.join(missing)}"


def test_every_path_the_map_names_exists() -> None:
    named = set(re.findall(r"`(src/raceday/[\w/.]+)`", _text()))
    short = set(re.findall(r"`((?:engine|store|exercise|transcript|team|tui|judge|web)/[\w/.]+)`",
                           _text()))
    paths = [ROOT / p for p in named] + [SRC / p.rstrip("*") for p in short if "*" not in p]
    gone = sorted(str(p.relative_to(ROOT)) for p in paths if not p.exists())
    assert not gone, f"docs/ARCHITECTURE.md names what is not there: {', '.join(gone)}"
    assert len(paths) > 30  # the map names the modules a reader starts from


def test_the_readme_links_the_map() -> None:
    assert "docs/ARCHITECTURE.md" in (ROOT / "README.md").read_text(encoding="utf-8")
