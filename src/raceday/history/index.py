"""The history database: one row per finished session, its score by part, and who played.

Rows are built from typed events only (`transcript.log` reads them, `ScoreEvent.score` is
the scoring's own verdict), so the same transcript always gives the same rows: that is what
makes a deleted `history.db` come back identically. A session is keyed by its folder's
name; the sessions of a transcripts folder are the folders directly inside it (the
committed examples, one level further down, are not your attempts), and the sessions of each
team a facilitator hosted on one clock (`raceday host --teams`: a group folder with
`teams.json`, a folder per team), keyed by their path and filed under their team's name.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raceday.errors import RacedayError, TranscriptError
from raceday.transcript import events as ev
from raceday.transcript.log import EVENTS_FILE, of_kind, read_events
from raceday.value import Value, frozen

if TYPE_CHECKING:  # sqlite-utils for `raceday history` and tools; a session's end uses sqlite3
    import sqlite_utils

HISTORY_FILE = "history.db"
GROUP_FILE = "teams.json"  # a group of teams' folder (raceday.team.group writes it)

SESSIONS_COLUMNS: dict[str, Any] = {
    "id": str,  # the session folder's name
    "exercise": str,
    "title": str,
    "started_at": str,  # UTC wall time of session_start
    "ended_at": str,  # UTC wall time of the score
    "pace": str,
    "roles": str,  # the roles people held, comma-separated
    "team": str,  # the names of who played, sorted, comma-separated ("" when none given)
    "reason": str,  # why the session ended
    "total": int,
    "max": int,
    "fault_occurred": int,
    "fault_outcome": str,
    "fault_started_at": str,  # the clock as the exercise shows it
    "detect_minutes": int,  # the earlier of time to alert and to diagnosis (null: never)
    "alert_minutes": int,
    "diagnosis_minutes": int,
    "restored": int,
    "restore_minutes": int,
    "outage_minutes": int,
    "hint_cost": int,
    "origin": str,  # "script": a headless run (`raceday run`), "" a session people played
    "team_name": str,  # the team's name when a facilitator hosted several ("" otherwise)
    "night": str,  # an unknown night's drawn night (race, quiet, a practice night's id); ""
}
SCORES_COLUMNS: dict[str, Any] = {"session_id": str, "part": str, "points": int, "max": int}
PEOPLE_COLUMNS: dict[str, Any] = {"session_id": str, "role": str, "player": str,
                                  "automated": int}


class HistoryError(RacedayError):
    """The history database cannot be opened or written (one line: the file and why)."""


@frozen
class SessionRows(Value):
    """What one finished session adds to the history."""

    session: dict[str, Any]
    scores: tuple[dict[str, Any], ...]
    people: tuple[dict[str, Any], ...]


def rows_for(session_id: str, events: Sequence[ev.Event],
             team_name: str = "") -> SessionRows | None:
    """The history rows of a session's events; None when it did not finish (no score yet)
    or was aborted (a script that failed half-way is not an attempt)."""
    start = events[0] if events and isinstance(events[0], ev.SessionStart) else None
    score_event = next((e for e in reversed(events) if isinstance(e, ev.ScoreEvent)), None)
    if start is None or score_event is None or score_event.reason == "aborted":
        return None
    score = score_event.score
    names = _names(events)
    detection, recovery = score.detection, score.recovery
    session = {
        "id": session_id,
        "exercise": start.exercise,
        "title": start.title,
        "started_at": start.wall_time,
        "ended_at": score_event.wall_time,
        "pace": start.pace,
        "roles": ",".join(start.players),
        "team": ", ".join(sorted(set(names.values()))),
        "reason": score_event.reason,
        "total": score.total,
        "max": score.max,
        "fault_occurred": int(score.fault.occurred),
        "fault_outcome": score.fault.outcome,
        "fault_started_at": score.fault.started_at,
        "detect_minutes": detection.latency_minutes if detection else None,
        "alert_minutes": detection.alert_minutes if detection else None,
        "diagnosis_minutes": detection.diagnosis_minutes if detection else None,
        "restored": int(recovery.restored) if recovery else None,
        "restore_minutes": recovery.minutes_to_restore if recovery else None,
        "outage_minutes": recovery.outage_minutes if recovery else None,
        "hint_cost": score.hints.cost,
        "origin": start.origin,
        "team_name": team_name,
        "night": next((e.night for e in of_kind(events, ev.NightRevealed)), ""),
    }
    scores = tuple({"session_id": session_id, "part": name, "points": part.points,
                    "max": part.max} for name, part in score.parts)
    people = tuple({"session_id": session_id, "role": role, "player": names.get(role, ""),
                    "automated": int(role not in start.players)}
                   for role in (*start.players, *start.automated))
    return SessionRows(session, scores, people)


def _names(events: Sequence[ev.Event]) -> dict[str, str]:
    """role -> who played it: the cast's names, and in team play whoever took the seat last."""
    names: dict[str, str] = {}
    for cast in of_kind(events, ev.Cast):
        names.update({str(role): str(name) for role, name in cast.names.items()})
    for joined in of_kind(events, ev.SeatJoined):
        names[joined.role] = joined.player
    return {role: name for role, name in names.items() if name.strip()}


def _create_table(name: str, columns: Mapping[str, Any], pk: tuple[str, ...],
                  refers: str | None = None) -> str:
    """The CREATE TABLE sqlite-utils wrote for these columns (the same text in the file's
    schema, whichever of the two created it)."""
    types = {str: "TEXT", int: "INTEGER"}
    lines = []
    for column, kind in columns.items():
        line = f'   "{column}" {types[kind]}'
        if pk == (column,):
            line += " PRIMARY KEY"
        elif refers is not None and column == "session_id":
            line += f' REFERENCES "{refers}"("id")'
        lines.append(line)
    if len(pk) > 1:
        keys = ", ".join(f'"{k}"' for k in pk)
        lines.append(f"   PRIMARY KEY ({keys})")
    return f'CREATE TABLE IF NOT EXISTS "{name}" (\n' + ",\n".join(lines) + "\n)"


_SCHEMA = (
    _create_table("sessions", SESSIONS_COLUMNS, ("id",)),
    _create_table("scores", SCORES_COLUMNS, ("session_id", "part"), refers="sessions"),
    _create_table("people", PEOPLE_COLUMNS, ("session_id", "role"), refers="sessions"),
)


def connect(root: Path) -> sqlite3.Connection:
    """`root/history.db` through plain sqlite3 (what a session's end needs: no sqlite-utils to
    import), its tables created if they are not there yet."""
    path = root / HISTORY_FILE
    conn: sqlite3.Connection | None = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path))
        conn.execute("PRAGMA busy_timeout = 5000")  # sessions ending at once in other terminals
        # Derived data: no fsync at every session's end (it cost more than the rest of the
        # indexing); a file a crash damaged is rebuilt from the transcripts (see `sync`).
        conn.execute("PRAGMA synchronous = OFF")
        with conn:
            for create in _SCHEMA:
                conn.execute(create)
        have = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
        if not set(SESSIONS_COLUMNS) <= have:  # made by an older raceday: derived, so rebuilt
            conn.close()
            conn = None
            path.unlink()
            return connect(root)
    except Exception as exc:  # sqlite3.DatabaseError and OSError alike: say which file
        if conn is not None:
            conn.close()
        raise HistoryError(f"{path}: cannot open the history database: {exc}") from None
    return conn


def open_db(root: Path) -> sqlite_utils.Database:
    """`root/history.db` as sqlite-utils sees it (for `raceday history` and tools), its tables
    created if they are not there yet."""
    import sqlite_utils

    return sqlite_utils.Database(connect(root))


def write_rows(conn: sqlite3.Connection, rows: SessionRows) -> None:
    """Write one session's rows, replacing any it had (indexing twice changes nothing)."""
    session_id = rows.session["id"]
    with conn:
        _insert(conn, "sessions", [rows.session], upsert="id")
        for table in ("scores", "people"):
            conn.execute(f'DELETE FROM "{table}" WHERE session_id = ?', (session_id,))
        _insert(conn, "scores", rows.scores)
        _insert(conn, "people", rows.people)


def _insert(conn: sqlite3.Connection, table: str, rows: Sequence[Mapping[str, Any]],
            upsert: str | None = None) -> None:
    if not rows:
        return
    columns = list(rows[0])
    sql = (f'INSERT INTO "{table}" ({", ".join(f"[{c}]" for c in columns)}) '
           f'VALUES ({", ".join("?" for _ in columns)})')
    if upsert is not None:
        sql += (f" ON CONFLICT([{upsert}]) DO UPDATE SET "
                + ", ".join(f"[{c}] = excluded.[{c}]" for c in columns if c != upsert))
    conn.executemany(sql, [[row[c] for c in columns] for row in rows])


def store(db: sqlite_utils.Database, rows: SessionRows) -> None:
    """Write one session's rows into the history sqlite-utils opened (see `write_rows`)."""
    write_rows(db.conn, rows)


def record_session(folder: Path, events: Sequence[ev.Event]) -> bool:
    """Index a session that has just ended (its events as the engine wrote them) into the
    history beside its folder; True when it was indexed."""
    root, session_id, team = placed(folder)
    rows = rows_for(session_id, events, team)
    if rows is None:
        return False
    conn = connect(root)
    try:
        write_rows(conn, rows)
    finally:
        conn.close()
    return True


def placed(folder: Path) -> tuple[Path, str, str]:
    """A session folder's transcripts root, its key there and its team's name: a team's
    session of a group sits at ROOT/GROUP/TEAM/SESSION (keyed "GROUP/TEAM/SESSION")."""
    group = folder.parent.parent
    if (group / GROUP_FILE).is_file():
        return (group.parent, f"{group.name}/{folder.parent.name}/{folder.name}",
                folder.parent.name)
    return folder.parent, folder.name, ""


def session_folders(root: Path) -> list[Path]:
    """The session folders directly inside `root`, and those of each team of a group folder
    inside it, in name (so time) order."""
    if not root.is_dir():
        return []
    found: list[Path] = []
    for p in sorted(root.iterdir()):
        if (p / EVENTS_FILE).is_file():
            found.append(p)
        elif (p / GROUP_FILE).is_file():
            found += sorted(s for team in p.iterdir() if team.is_dir()
                            for s in team.iterdir() if (s / EVENTS_FILE).is_file())
    return found


def sync(root: Path) -> tuple[sqlite_utils.Database, list[str]]:
    """Open the history and index every finished session it lacks (all of them when the
    file was deleted); returns the database and one warning per transcript it could not
    read (the others are indexed all the same)."""
    warnings: list[str] = []
    try:
        db = open_db(root)
        known = {row["id"] for row in db.query("SELECT id FROM sessions")}
    except (HistoryError, sqlite3.DatabaseError) as exc:
        (root / HISTORY_FILE).unlink(missing_ok=True)
        warnings.append(f"{root / HISTORY_FILE}: damaged ({exc}); rebuilt from the transcripts")
        db, known = open_db(root), set()
    for folder in session_folders(root):
        _, session_id, team = placed(folder)
        if session_id in known:
            continue
        try:
            log = read_events(folder)
        except TranscriptError as exc:
            warnings.append(f"skipped: {'; '.join(exc.problems)}")
            continue
        rows = rows_for(session_id, log.events, team)
        if rows is not None:
            store(db, rows)
    return db, warnings


def rebuild(root: Path) -> list[str]:
    """Delete `history.db` and index every session again; returns the warnings."""
    (root / HISTORY_FILE).unlink(missing_ok=True)
    db, warnings = sync(root)
    db.close()
    return warnings


def dump(db: sqlite_utils.Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows in key order: what 'the same history' means, for tests and tools."""
    order = {"sessions": "id", "scores": "session_id, part", "people": "session_id, role"}
    return {table: [tuple(row.values()) for row in db.query(
        f"SELECT * FROM {table} ORDER BY {keys}")] for table, keys in order.items()}
