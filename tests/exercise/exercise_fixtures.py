"""Paths of the fixtures, and copies of the minimal exercise that a test may break."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
MINIMAL = FIXTURES / "minimal"


class Broken:
    """A copy of the minimal exercise in tmp_path, loaded from cwd as `minimal`.

    Messages then read `minimal/exercise.yaml:LINE: ...`, as a person typing
    `raceday check minimal` would see them.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / "minimal"
        shutil.copytree(MINIMAL, self.folder)
        self.yaml = self.folder / "exercise.yaml"

    @property
    def text(self) -> str:
        return self.yaml.read_text(encoding="utf-8")

    def replace(self, old: str, new: str, file: str = "exercise.yaml") -> None:
        path = self.folder / file
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} must occur once in {file}"
        path.write_text(text.replace(old, new), encoding="utf-8")

    def line_of(self, snippet: str, file: str = "exercise.yaml") -> int:
        """The 1-based line where `snippet` (which must occur once) starts."""
        text = (self.folder / file).read_text(encoding="utf-8")
        assert text.count(snippet) == 1, f"{snippet!r} must occur once in {file}"
        return text[: text.index(snippet)].count("\n") + 1

    def at(self, snippet: str, message: str, file: str = "exercise.yaml") -> str:
        """The problem line expected for `snippet`'s line."""
        return f"minimal/{file}:{self.line_of(snippet, file)}: {message}"
