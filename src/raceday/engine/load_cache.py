"""Exercises and play scripts as an earlier run loaded them, kept in the cache folder.

Loading an exercise parses its YAML into located values, checks every part of it and
compiles its SQL against its world: 20 ms for the flagship, 75 ms for recovery-under-load,
paid again by every command, every Enter on the launcher and every test. What it gives
depends only on its files (its folder's, and the shared debrief file it names: beside its
folder or raceday's own), raceday's code and the SQLite it compiled the SQL with, so it is
kept (pickled) under a key made of those and read back in about a millisecond. The files
count as Python's bytecode cache counts a source file: by size and modification time. A
file changed in the last two seconds makes the exercise uncachable for now (a same-size
edit within the file system's clock tick would otherwise look unchanged: git's "racily
clean" rule), and an exercise that does not load, or whose files changed while it loaded,
is not kept.

A play script (`kept_script`) is kept the same way under its bytes, the exercise it was read
for and raceday's code: reading it imports PyYAML and parses it (~25 ms of a headless night).

A kept exercise or script is a pickle, so it is only read from a file and a folder that are
this user's and that no one else may write.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from raceday.cache import cache_folder, code_digest, write_bytes_atomically
from raceday.exercise.catalog import BUNDLED_DIR
from raceday.exercise.fields import SHARED_DIR
from raceday.exercise.model import Exercise
from raceday.store import sqlite_version

_log = logging.getLogger(__name__)

_T = TypeVar("_T")

_MOST_FILES = 500
"""A folder with more files than this is not keyed (a folder of transcripts, say)."""
_RACY_S = 2.0
"""A file written this recently may be written again unseen: nothing is kept or read."""


def cached_load(path: Path, check_sql: bool, load: Callable[[], Exercise]) -> Exercise:
    """The exercise `load()` gives for `path`, from the cache folder when an earlier run kept
    it for the same files, code and SQLite; else loaded now, and kept (unless a file changed
    while it loaded). One file an exercise: a newer state of it replaces the older."""
    kept = _kept(path, check_sql)
    if kept is None:
        return load()
    file, key = kept
    known = _read(file, key, Exercise)
    if known is not None:
        return known
    exercise = load()
    if _kept(path, check_sql) != kept:
        return exercise  # what it was made of changed meanwhile: keyed by neither
    _keep(file, key, exercise)
    return exercise


def kept_script(path: Path, exercise: Exercise, kind: type[_T], read: Callable[[], _T]) -> _T:
    """The play script `read()` gives for `path`, from the cache folder when an earlier run
    read the same bytes for the same exercise (`exercise_digest`) with the same code; else
    read now, and kept. Keyed by its bytes, not its time: an edit is never missed; and by the
    path as given (the script says it). One file a script; one that does not read (its
    problems raised) is never kept."""
    root = _root()
    if root is None:
        return read()
    from raceday.textfile import UnreadableText, read_bytes

    try:
        data = read_bytes(path)  # a regular file of bounded size only (not /dev/zero, a FIFO)
    except (OSError, UnreadableText):
        return read()  # which says what is wrong with the file
    from raceday.engine.replay_exercises import exercise_digest

    name = hashlib.sha256(repr(["script", str(path.resolve())]).encode()).hexdigest()
    key = hashlib.sha256(repr([code_digest(), sys.version, exercise_digest(exercise),
                               str(path), hashlib.sha256(data).hexdigest()]).encode()).hexdigest()
    file = root / "scripts" / f"{name}.pickle"
    known = _read(file, key, kind)
    if known is not None:
        return known
    script = read()
    _keep(file, key, script)
    return script


def _root() -> Path | None:
    """The cache folder, where a file's owner can be checked (`_private`); else None."""
    root = cache_folder()
    return root if root is not None and hasattr(os, "getuid") else None


def _keep(file: Path, key: str, value: object) -> None:
    try:
        data = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        _log.info("%s could not be kept", file, exc_info=True)
        return
    write_bytes_atomically(file, data, private=True)


def _kept(path: Path, check_sql: bool) -> tuple[Path, str] | None:
    """Where the exercise at `path` is kept, and the key of what it is made of now; None
    when it is not to be kept or read (no cache folder, a file written just now, too many
    files). What it is made of: its folder's files and the shared debrief files it may name
    (`shared/` beside its folder, else raceday's own), raceday's code, SQLite and Python."""
    root = _root()
    if root is None:
        return None
    folder = (path if path.is_dir() else path.parent).resolve()
    files = []
    for where in (folder, folder.parent / SHARED_DIR, BUNDLED_DIR / SHARED_DIR):
        found = _folder_files(str(where))
        if found is None:
            return None
        files.append(found)
    name = hashlib.sha256(repr([str(path.resolve()), check_sql]).encode()).hexdigest()
    key = hashlib.sha256(repr([code_digest(), sqlite_version(), sys.version, files]).encode())
    return root / "exercises" / f"{name}.pickle", key.hexdigest()


def _folder_files(folder: str) -> list[tuple[str, int, int]] | None:
    """Each file under `folder` by (path in it, size, modification time), sorted (none when
    there is no such folder); None when one was written in the last `_RACY_S` seconds, there
    are too many, or it cannot be read."""
    files: list[tuple[str, int, int]] = []
    folders, start = [folder], len(folder)
    racy = time.time_ns() - int(_RACY_S * 1e9)
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            folders.append(entry.path)
                        continue
                    stat = entry.stat()
                    if stat.st_mtime_ns >= racy or len(files) >= _MOST_FILES:
                        return None
                    files.append((entry.path[start:], stat.st_size, stat.st_mtime_ns))
        except (FileNotFoundError, NotADirectoryError):
            continue  # no such folder (no shared/ beside it): no files
        except OSError:
            return None
    return sorted(files)


def _read(file: Path, key: str, kind: type[_T]) -> _T | None:
    """The `kind` kept under `key`; None when there is none (or one of another state of its
    files), or it is not this user's alone, or it cannot be read (then it is loaded again,
    and kept again)."""
    try:
        with open(file, "rb") as kept:
            if not (_private(os.fstat(kept.fileno())) and _private(os.stat(file.parent))):
                return None
            data = pickle.load(kept)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a damaged file is only a missed shortcut
        _log.info("kept %s could not be read", file, exc_info=True)
        return None
    if isinstance(data, tuple) and len(data) == 2 and data[0] == key \
            and isinstance(data[1], kind):
        return data[1]
    return None


def _private(stat: os.stat_result) -> bool:
    return stat.st_uid == os.getuid() and not stat.st_mode & 0o022
