"""`raceday new ID`: a small working exercise to start from, with comments that teach.

The template (`exercise/template/`) is a complete exercise: a world, one automated role,
one player role, one fault, findings, a monitor and a reference play. It passes `raceday
check` and plays at once; the author then replaces its story with their own incident.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from raceday.errors import InputError

PLACEHOLDER = "__ID__"
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")


def template() -> Traversable:
    return resources.files("raceday.exercise") / "template"


def scaffold(exercise_id: str, into: Path) -> Path:
    """Write the template to `into/<id>/` with its id filled in; returns the folder.

    Refuses an id that is not lower-case letters, digits and dashes, and a folder that
    already exists (nothing of an author's is ever overwritten)."""
    if not _ID.fullmatch(exercise_id):
        raise InputError([f"{exercise_id!r}: an exercise id is lower-case letters, digits "
                          f"and dashes, starting with a letter or digit (e.g. checkout-flag)"])
    folder = into / exercise_id
    if folder.exists():
        raise InputError([f"{folder}: already exists; choose another id or remove it"])
    _copy(template(), folder, exercise_id)
    return folder


def _copy(source: Traversable, target: Path, exercise_id: str) -> None:
    target.mkdir(parents=True)
    for item in sorted(source.iterdir(), key=lambda i: i.name):
        if item.name.startswith((".", "__")):
            continue
        if item.is_dir():
            _copy(item, target / item.name, exercise_id)
        else:
            text = item.read_text(encoding="utf-8").replace(PLACEHOLDER, exercise_id)
            (target / item.name).write_text(text, encoding="utf-8")
