"""Sentences about events that more than one screen or report shows, worded once."""

from __future__ import annotations

from collections.abc import Iterable

from raceday.transcript import verdicts as vd
from raceday.transcript.events import Statement


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def describe_statement(e: Statement) -> str:
    """What one statement did: read N rows, applied (N rows), 0 rows changed, changed the
    schema, refused."""
    if not e.ok:
        return f"refused ({e.error_kind}): {e.error}"
    if e.rows is not None:
        return f"read {'more than ' if e.truncated else ''}{plural(e.rows, 'row')}"
    if e.schema_changed:
        return "changed the schema"
    n = e.rowcount or 0
    return f"applied ({plural(n, 'row')})" if n else "0 rows changed"


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
