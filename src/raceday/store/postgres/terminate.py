"""Ending a statement that ignores its cancel.

`statement_timeout` and the watchdog's cancel both raise `query_canceled`, which a player's
PL/pgSQL can catch (`EXCEPTION WHEN query_canceled THEN NULL` in a loop): the statement runs
on, holding its locks, after raceday gave up on it. Past a further grace its server process
is ended (`pg_terminate_backend`) from a connection of raceday's own login, so its locks go
with it; the role's next statement logs in again.

raceday's login may signal a backend only if it is a member of that backend's login role:
it makes itself one (it created the login, with CREATEROLE), which gives it nothing a team
has not got.
"""

from __future__ import annotations

import logging
import threading

_log = logging.getLogger(__name__)

TERMINATE_GRACE_S = 1.0
"""How long past the cancel a statement may run before its server process is ended."""


class Terminator:
    """Ends backends by pid for one world; remembers which it ended, so a statement whose
    connection broke can say it was stopped rather than lost."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._ended: set[int] = set()
        self._lock = threading.Lock()

    def terminate(self, pid: int, login: str) -> None:
        """Safe from the watchdog's thread; logs and gives up when the server cannot be
        reached (the statement then ends when the server's own limits end it)."""
        from raceday.store.postgres.world import connect, quoted

        with self._lock:
            self._ended.add(pid)
        try:
            admin = connect(self.dsn)
        except Exception:
            _log.warning("could not end backend %s: no connection", pid, exc_info=True)
            return
        try:
            admin.execute(f"GRANT {quoted(login)} TO CURRENT_USER")
            admin.execute("SELECT pg_catalog.pg_terminate_backend(%s, 5000)", [pid])
        except Exception:
            _log.warning("could not end backend %s", pid, exc_info=True)
        finally:
            admin.close()

    def ended(self, pid: int) -> bool:
        """True (once) when `terminate` ended this backend."""
        with self._lock:
            if pid in self._ended:
                self._ended.discard(pid)
                return True
            return False
