"""Counting the race nights a replay plays on a team's replay world (not a practice or
variant night's race): what the own-race tests on SQLite and PostgreSQL read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def counted_race_nights(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Path]:
    """`module.name` (a night player taking kind, exercise, world, folder, ...) wrapped so
    that each team race night it plays adds its folder to the list returned."""
    played: list[Path] = []
    real = getattr(module, name)

    def counted(kind: Any, exercise: Any, world: Any, folder: Path, *args: Any,
                **kwargs: Any) -> Any:
        if folder.name == "race" and folder.parent.parent.name == "replay":
            played.append(folder)
        return real(kind, exercise, world, folder, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return played
