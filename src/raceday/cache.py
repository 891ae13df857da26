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
    worked it out."""
    if not _code:
        package = Path(__file__).resolve().parent
        digest = hashlib.sha256()
        for source in sorted(package.rglob("*.py")):
            digest.update(source.relative_to(package).as_posix().encode())
            digest.update(source.read_bytes())
        _code.append(digest.hexdigest())
    return _code[0]


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
    part = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    except OSError:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass
        return False
    return True
