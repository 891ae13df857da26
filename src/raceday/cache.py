"""raceday's cache folder: what a run worked out and a later run may find again (a normal
night's good writes and baselines, the briefing's first frame and first screenful). Only ever
a shortcut: anything absent or unreadable there is worked out again, and nothing fails because
the folder cannot be written.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

_code: list[str] = []


def code_digest() -> str:
    """A digest of raceday's own code: what is cached is only as good as the code that
    worked it out. Each source file counts by its path, size and modification time (what
    Python's own bytecode cache trusts to tell a changed file), not its bytes: reading all of
    them cost every command about 12 ms."""
    if not _code:
        _code.append(sources_digest(os.path.dirname(os.path.abspath(__file__))))
    return _code[0]


def sources_digest(package: str) -> str:
    """The digest of the .py files under `package` (bytecode caches left out), each by its
    path in it, its size and its modification time."""
    files: list[tuple[str, int, int]] = []
    folders, start = [package], len(package)
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    files.append((entry.path[start:], stat.st_size, stat.st_mtime_ns))
                elif entry.name != "__pycache__" and entry.is_dir():
                    folders.append(entry.path)
    return hashlib.sha256(repr(sorted(files)).encode()).hexdigest()


def cache_folder() -> Path | None:
    """$RACEDAY_CACHE_DIR, else $XDG_CACHE_HOME/raceday, else ~/.cache/raceday; None when
    RACEDAY_CACHE_DIR is empty (no cache on disk)."""
    root = os.environ.get("RACEDAY_CACHE_DIR")
    if root == "":
        return None
    if root is not None:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "raceday"


def write_atomically(path: Path, text: str) -> bool:
    """Write `text` to `path` whole or not at all (a reader never sees half of it); False when
    it cannot be written."""
    return write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path: Path, data: bytes, *, private: bool = False) -> bool:
    """`write_atomically` for bytes; `private`: the folder made for it is this user's only."""
    part = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700 if private else 0o777, exist_ok=True)
        part.write_bytes(data)
        os.replace(part, path)
    except OSError:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass
        return False
    return True
