"""A fingerprint of a world's schema and rows, to tell whether two worlds hold the same.

`raceday resume` rebuilds a killed session's world from its transcript and compares it with
the world.db the crash left: equal fingerprints mean nothing acknowledged was lost and
nothing unacknowledged was kept. Trusted code on its own read-only connection.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path


def world_digest(path: Path, *, closed: bool = False) -> dict[str, str]:
    """A hash per table (its SQL and its rows in rowid order) and per other schema object;
    raises OSError when the file cannot be read as a world. `closed`: nothing has the world
    open and all of it is in the one file (no write-ahead log), so it is read as it is,
    leaving no -wal or -shm file beside it."""
    flags = "mode=ro&immutable=1" if closed else "mode=ro"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True)
    except sqlite3.Error as exc:
        raise OSError(f"{path}: {exc}") from exc
    try:
        objects = conn.execute(
            "SELECT type, name, sql FROM sqlite_master "
            "WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name").fetchall()
        digests: dict[str, str] = {}
        for kind, name, sql in objects:
            h = hashlib.sha256(repr(sql).encode("utf-8", "backslashreplace"))
            if kind == "table":
                quoted = '"' + str(name).replace('"', '""') + '"'
                try:
                    rows = conn.execute(f"SELECT * FROM {quoted} ORDER BY rowid")
                except sqlite3.Error:  # WITHOUT ROWID
                    rows = conn.execute(f"SELECT * FROM {quoted} ORDER BY 1")
                for row in rows:
                    h.update(repr(row).encode("utf-8", "backslashreplace"))
            digests[f"{kind} {name}"] = h.hexdigest()
        return digests
    except sqlite3.Error as exc:
        raise OSError(f"{path}: {exc}") from exc
    finally:
        conn.close()


def world_fingerprint(path: Path) -> str:
    """One digest of every schema object and every row of a closed world (`world_digest`):
    two worlds with the same fingerprint hold the same tables, rows, views, indexes and
    triggers."""
    closed = not path.with_name(path.name + "-wal").exists()
    digests = world_digest(path, closed=closed)
    return hashlib.sha256(json.dumps(sorted(digests.items())).encode()).hexdigest()
