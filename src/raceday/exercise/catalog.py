"""Where exercises are: the bundled ones, the current directory's `./exercises`, and more.

The launcher and `raceday list` show every exercise, including those that do not load (with
why), so an author sees their broken draft instead of wondering where it went.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.errors import ExerciseError
from raceday.exercise import EXERCISE_FILE
from raceday.exercise.places import BUNDLED_DIR as BUNDLED_DIR  # re-exported: it was defined here
from raceday.exercise.places import LOCAL_DIR

if TYPE_CHECKING:  # finding one (resolve_exercise) imports neither the loader nor YAML
    from raceday.exercise.model import Exercise
    from raceday.exercise.sql_check import SqlChecker


@dataclass(frozen=True)
class ExerciseEntry:
    """One exercise as the launcher lists it; `problems` is empty when it loads."""

    id: str
    path: Path
    title: str = ""
    summary: str = ""
    length: int = 0
    level: str = ""
    roles: tuple[str, ...] = ()
    bundled: bool = False
    note: str = ""
    problems: tuple[str, ...] = ()
    exercise: Exercise | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def error(self) -> str | None:
        """The problems on one line each, or None when the exercise loads."""
        return "\n".join(self.problems) if self.problems else None


def _folders(root: Path) -> list[Path]:
    try:
        children = sorted(root.iterdir())
    except OSError:
        return []
    return [
        child
        for child in children
        if child.is_dir() and not child.name.startswith((".", "_")) and (child / EXERCISE_FILE).is_file()
    ]


def _candidates(extra_dirs: Iterable[Path]) -> list[tuple[str, Path, bool, str]]:
    """(id, folder, bundled, note) for every exercise folder, later roots overriding earlier.

    The same folder reached twice (in the source tree `./exercises` is the bundled folder)
    is listed once, as bundled.
    """
    found: dict[str, tuple[str, Path, bool, str]] = {}
    roots = [(BUNDLED_DIR, True), (LOCAL_DIR, False)] + [(Path(d), False) for d in extra_dirs]
    for root, bundled in roots:
        for folder in _folders(root):
            previous = found.get(folder.name)
            note = ""
            if previous is not None:
                if _same(previous[1], folder):
                    continue
                where = "bundled" if previous[2] else str(previous[1])
                note = f"overrides the {where} exercise of the same id"
            found[folder.name] = (folder.name, folder, bundled, note)
    return sorted(found.values())


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def find_exercises(
    extra_dirs: Iterable[Path | str] = (), *, sql_checker: SqlChecker | None = None
) -> list[ExerciseEntry]:
    """Every exercise found, sorted by id, each loaded (or with why it does not load).

    `sql_checker` compiles each exercise's SQL against its world (see `load_exercise`).

    Searches the bundled exercises, then `./exercises`, then `extra_dirs` (folders holding
    exercise folders); a later folder with the same id wins, and its entry says so.
    """
    from raceday.exercise.loader import load_exercise

    entries: list[ExerciseEntry] = []
    for ident, folder, bundled, note in _candidates(Path(d) for d in extra_dirs):
        try:
            exercise = load_exercise(folder, sql_checker=sql_checker)
        except ExerciseError as exc:
            entries.append(_broken_entry(ident, folder, bundled, note, tuple(exc.problems)))
            continue
        entries.append(
            ExerciseEntry(
                id=exercise.id,
                path=folder,
                title=exercise.title,
                summary=exercise.summary,
                length=exercise.length,
                level=exercise.level,
                roles=exercise.role_ids,
                bundled=bundled,
                note=note,
                exercise=exercise,
            )
        )
    return entries


def _broken_entry(
    ident: str, folder: Path, bundled: bool, note: str, problems: tuple[str, ...]
) -> ExerciseEntry:
    """An entry for an exercise that does not load, with what can still be read of it."""
    import yaml

    from raceday.exercise.times import parse_duration
    from raceday.textfile import UnreadableText, read_text

    raw: object = None
    try:
        raw = yaml.safe_load(read_text(folder / EXERCISE_FILE))
    except (OSError, UnreadableText, yaml.YAMLError, RecursionError, ValueError):
        pass  # the problems say why; nothing more can be shown
    data = raw if isinstance(raw, dict) else {}

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    try:
        length = parse_duration(data.get("length", 0))
    except (TypeError, ValueError, AttributeError):
        length = 0
    roles = data.get("roles")
    role_ids = (
        tuple(str(role["id"]) for role in roles or () if isinstance(role, dict) and "id" in role)
        if isinstance(roles, list)
        else ()
    )
    return ExerciseEntry(
        id=ident,
        path=folder,
        title=text("title"),
        summary=text("summary"),
        length=length,
        level=text("level"),
        roles=role_ids,
        bundled=bundled,
        note=note,
        problems=problems,
    )


def resolve_exercise(name_or_path: str | Path, extra_dirs: Iterable[Path | str] = ()) -> Path:
    """The folder or file of an exercise given by path or by id.

    A path that exists wins; otherwise the id is looked up among the bundled exercises,
    `./exercises` and `extra_dirs`. Raises `ExerciseError` listing the known ids.
    """
    path = Path(name_or_path)
    if path.is_file() or (path.is_dir() and (path / EXERCISE_FILE).is_file()):
        return path
    candidates = _candidates(Path(d) for d in extra_dirs)
    for ident, folder, _bundled, _note in candidates:
        if ident == str(name_or_path):
            return folder
    known = ", ".join(ident for ident, *_rest in candidates) or "none found"
    if path.is_dir():
        reason = f"{path} has no {EXERCISE_FILE}"
    else:
        reason = f'"{name_or_path}" is neither an exercise folder nor a known exercise id'
    raise ExerciseError([f"{reason} (known ids: {known})"])
