"""Build the world a replay runs in: the team's schema with the exercise's seed data.

The replay asks "would the team's database have refused the race?", so it needs the schema
as the team left it (constraints, triggers, views, indexes, new tables) but the data as it
stood before the night began. Tables the team added keep the rows they hold now (a lease or
fencing table the team seeded). This is trusted code on its own connections; no player SQL
runs here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from raceday.store.sqlite_world import WORLD_TABLE
from raceday.store.world import build_world

_SCHEMA = (
    "SELECT type, name, tbl_name, sql FROM sqlite_master "
    "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
)


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    rows = conn.execute(f'PRAGMA {schema}.table_xinfo("{table}")').fetchall()
    return [str(r[1]) for r in rows if r[6] == 0]  # hidden 0: not a generated column


def build_replay_world(live: Path, seed_sql: str, path: Path, renumber: str = "") -> list[str]:
    """Write a fresh world at `path`; return warnings (rows the team's schema refused).

    `renumber` is the exercise's trusted SQL run on the seed data (foreign keys off) before
    it is copied: the shifted race's other plan numbers."""
    if path.exists():
        raise FileExistsError(path)
    warnings: list[str] = []
    seed_path = path.with_name(path.stem + "-seed.db")
    seed_path.unlink(missing_ok=True)
    seed = sqlite3.connect(seed_path, isolation_level=None)
    try:
        # a throw-away file read once below: no journal and no sync (each statement of the
        # world script would otherwise wait on the disk)
        seed.execute("PRAGMA journal_mode=OFF")
        seed.execute("PRAGMA synchronous=OFF")
        build_world(seed, seed_sql)
        if renumber.strip():
            seed.execute("PRAGMA foreign_keys=OFF")
            seed.executescript(renumber)
    finally:
        seed.close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        # a replay world is thrown away after the replay: WAL, so the automation's writes
        # during the replay do not wait on a sync each (the store keeps synchronous=NORMAL)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA foreign_keys=OFF")  # load order must not matter; checked below
        conn.execute("ATTACH DATABASE ? AS seed", (f"{seed_path.resolve().as_uri()}?mode=ro",))
        conn.execute("ATTACH DATABASE ? AS live", (f"{live.resolve().as_uri()}?mode=ro",))
        schema = conn.execute(_SCHEMA.replace("sqlite_master", "live.sqlite_master")).fetchall()
        seed_tables = {r[0] for r in conn.execute("SELECT name FROM seed.sqlite_master WHERE type = 'table'")}
        tables = [(name, sql) for kind, name, _t, sql in schema if kind == "table"]
        for _name, sql in tables:
            conn.execute(sql)
        for name, _sql in tables:
            source = "seed" if name in seed_tables and name != WORLD_TABLE else "live"
            wanted = _columns(conn, "main", name)
            have = set(_columns(conn, source, name))
            common = [c for c in wanted if c in have]
            if not common:
                continue
            cols = ", ".join(f'"{c}"' for c in common)
            try:
                conn.execute(f'INSERT INTO main."{name}" ({cols}) SELECT {cols} FROM {source}."{name}"')
            except sqlite3.Error as exc:
                warnings.append(f"table {name}: the seed rows do not fit the team's schema ({exc})")
        for kind in ("index", "view", "trigger"):
            for row_kind, name, _t, sql in schema:
                if row_kind == kind:
                    try:
                        conn.execute(sql)
                    except sqlite3.Error as exc:
                        warnings.append(f"{kind} {name} could not be rebuilt ({exc})")
        conn.execute("DETACH DATABASE seed")
        conn.execute("DETACH DATABASE live")
        conn.execute("PRAGMA foreign_keys=ON")
        broken = conn.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            tables_hit = sorted({str(r[0]) for r in broken})
            warnings.append(f"seed rows break the team's foreign keys in {', '.join(tables_hit)}")
    finally:
        conn.close()
        seed_path.unlink(missing_ok=True)
    return warnings


def remove_world(path: Path) -> int:
    """Delete a replay world and its WAL/journal files once nothing will read it again;
    returns the bytes freed. A replay makes up to three copies of the team's world (the
    race, the normal night twice): kept, two replays of a 382 MB world left 1.9 GB."""
    freed = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = path.with_name(path.name + suffix)
        try:
            freed += part.stat().st_size
            part.unlink()
        except FileNotFoundError:
            continue
    return freed


def remove_earlier_worlds(root: Path) -> int:
    """Delete the race worlds of earlier replays under `root` (session/replay): only the
    newest replay's world is read again (the replay walk); returns the bytes freed."""
    if not root.is_dir():
        return 0
    return sum(remove_world(world) for world in root.glob("*/*.db"))
