"""What a statement that failed on PostgreSQL says: raceday's kind of error and one line,
from the server's SQLSTATE, and where it may have kept changes."""

from __future__ import annotations

from raceday.store.postgres.world import server_message
from raceday.store.results import ErrorKind


def classify(exc: BaseException, seconds: float, *, cancelled: bool,
             time_limit_s: float) -> tuple[ErrorKind, str]:
    """(error_kind, one line) from the server's SQLSTATE; `seconds`: how long it ran,
    `cancelled`: whether raceday was asked to stop it (Escape, `interrupt`)."""
    state = getattr(exc, "sqlstate", None) or ""
    message = server_message(exc)
    if state == "57014":  # query_canceled: statement_timeout, the watchdog or Escape
        if cancelled:
            return "timeout", f"statement cancelled after {seconds:.1f} s"
        return "timeout", f"statement interrupted after {time_limit_s:.1f} s (time limit)"
    if state == "55P03":
        return "timeout", f"waited too long for a lock another connection holds ({message})"
    if state in ("42501", "25006") or state.startswith("28"):
        return "refused", "refused: " + message
    if state.startswith("23") or state == "P0001":
        return "constraint", message
    if state in ("40001", "40P01"):
        return "error", f"{message} (another transaction got there first: run it again)"
    if state == "42601" or state == "42P02":
        return "syntax", message
    return "error", message


def kept_in(exc: BaseException) -> tuple[str, ...] | None:
    """Where the failed statement may have kept changes (StatementResult.kept_in): nowhere
    when the server says it failed, as a statement is atomic and these errors come from it or
    from its COMMIT (which then rolls back): a constraint (class 23), a refusal or a name not
    found (42), a RAISE (P0001), a serialization failure or deadlock (40); the counts read
    after a COMMIT raise none of them. Any other failure: not told (None)."""
    state = getattr(exc, "sqlstate", None) or ""
    return () if state[:2] in ("23", "40", "42") or state == "P0001" else None
