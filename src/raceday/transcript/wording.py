"""Sentences about events that more than one screen or report shows, worded once."""

from __future__ import annotations

import re
from collections.abc import Iterable

from raceday.transcript import verdicts as vd
from raceday.transcript.events import NightRevealed, Statement


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def describe_statement(e: Statement) -> str:
    """What one statement did: read N rows, applied (N rows), 0 rows changed, changed the
    schema, refused."""
    if not e.ok:
        return failure_words(e.error_kind, e.error or "")
    if e.rows is not None:
        return f"read {'more than ' if e.truncated else ''}{plural(e.rows, 'row')}"
    if e.schema_changed:
        return "changed the schema"
    n = e.rowcount or 0
    return f"applied ({plural(n, 'row')})" if n else "0 rows changed"


_ADDS_TO_SCHEMA = re.compile(r"^\s*(?:CREATE\b|ALTER\s+TABLE\s+\S+\s+ADD\b)", re.IGNORECASE)


def access_flag(sql: str, *, break_glass: bool, schema_changed: bool,
                writes: tuple[str, ...]) -> str | None:
    """How a player's statement reached the world, as the feed and the debrief mark it:
    "guard" for a trigger, index, table or column added (what a briefing invites, even on
    a table the role writes only by break-glass), "break-glass" for any other write to what
    the role may not normally touch, else None. The event's own flag is left as it is."""
    if not break_glass:
        return None
    if schema_changed and not writes and _ADDS_TO_SCHEMA.match(_without_comments(sql)):
        return "guard"
    return "break-glass"


def _without_comments(sql: str) -> str:
    return re.sub(r"^(?:\s*(?:--[^\n]*\n|/\*.*?\*/))*", "", sql, flags=re.DOTALL)


def failure_words(kind: str | None, error: str) -> str:
    """Why a statement did not run, each word once: raceday's own refusals say "refused"
    already, and a statement stopped (Esc, the time limit) was not refused."""
    if kind == "refused":
        return "refused: " + error.removeprefix("refused: ")
    if kind == "timeout":
        return "stopped: " + error
    # a guard's own message often begins "refused:" too (RAISE(ABORT, 'refused: ...'))
    return f"refused ({kind}): {error.removeprefix('refused: ')}"


def describe_run(statements: Iterable[Statement]) -> str:
    """What one run of an automated task did, statement by statement."""
    return "; ".join(describe_statement(e) for e in statements) or "no statement ran"


# -- the score's verdicts, worded once for every screen and report ------------------------------

_NO_FAULT = {
    vd.PREVENTED_OUTRIGHT: "No fault occurred: the race was prevented outright, so detection "
                           "and recovery were not needed (full marks).",
    vd.NOT_NEEDED: "No fault occurred: detection and recovery were not needed (full marks).",
    vd.HELD_OFF: "No fault occurred, but the replay with every role automated shows it: what "
                 "kept it away was players' hands, not a guard.",
    vd.BLOCKED_GOOD_WRITES: "No fault occurred, but only because the team's guards also "
                            "refused good writes of the normal night: an outage of its own.",
    vd.BEFORE_THE_RACE: "No fault occurred: the session ended before the race.",
    vd.QUIET_NIGHT: "No fault occurred: it was a quiet night, with nothing wrong to detect or "
                    "recover (full marks, less any false alarm).",
    vd.NOT_PLAYED: "No fault occurred: the facilitator let the night go on without the step "
                   "that brings it, so there was nothing to detect or recover (full marks, "
                   "less any false alarm).",
}


def fault_sentence(fault: vd.Fault) -> str:
    """What became of the fault, as scoring decided it."""
    if fault.occurred:
        return f"Fault began at {fault.started_at}."
    return _NO_FAULT.get(fault.outcome, "No fault occurred.")


STEP_WORDS = {vd.HAPPENED: "happened", vd.PREVENTED: "prevented",
              vd.NOT_REACHED: "never reached"}


def step_word(status: str) -> str:
    """A race step's verdict as a person reads it ('never reached' for 'not reached')."""
    return STEP_WORDS.get(status, status)


JUDGED_BY = {vd.BY_REPLAY: "in the replay", vd.BY_LIVE: "tonight", vd.BY_NONE: "not judged"}


def judged_by_words(judged_by: str) -> str:
    """Where the guards' verdicts come from: 'in the replay', 'tonight'."""
    return JUDGED_BY.get(judged_by, "scored")


ZERO_ROWS_STOP = "-- on_zero_rows: stop"
"""The line an edited automation statement carries to end its run when its write changes no
rows (engine/directives.py); a run it ended says so in its note, which the debrief reads."""


def night_sentence(night: NightRevealed) -> str:
    """An unknown night told at the end: which it was, when it began, what gave it away."""
    if night.night_kind == "quiet":
        return ("Tonight was an unknown night, and a quiet one: nothing went wrong. Any "
                "finding declared on it was a false alarm.")
    later = f", {night.later} minutes later than the exercise's own" if night.later else ""
    began = (f" It began at {night.began_at}; "
             + (f"first surfaced when {night.gave_away}." if night.gave_away
                else "nothing of yours surfaced it.")) if night.began_at else (
        " It never began: the team's world or hands kept it away.")
    return f"Tonight was an unknown night: {night.title}{later}.{began}"
