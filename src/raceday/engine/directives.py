"""What one of the automation's statements says about itself, in a comment of its SQL.

A team edits the automation's statements as text, through the one statement path every seat
and script shares, so a rule about how the automation treats a statement's outcome travels
in that text: `-- on_zero_rows: stop` on a line of its own makes a conditional write that
changed no rows end its task's run there (a held transaction rolled back), instead of
carrying on as if it had won. That is the article's row-count practice, encoded in the
automation rather than done by a person watching every write.
"""

from __future__ import annotations

import re

from raceday.transcript.wording import ZERO_ROWS_STOP

ON_ZERO_ROWS = "on_zero_rows"
CHOICES = ("stop", "ignore")

_DIRECTIVE = re.compile(r"^[ \t]*--[ \t]*on_zero_rows[ \t]*:[ \t]*(?P<value>\S*)[ \t]*$",
                        re.MULTILINE | re.IGNORECASE)


def on_zero_rows(sql: str) -> str | None:
    """What the statement asks for when it changes no rows ("stop", "ignore"), or None."""
    found = _DIRECTIVE.search(sql)
    return found.group("value").lower() if found else None


def directive_problem(sql: str) -> str | None:
    """Why the statement's directive cannot be followed, in one line; None when it can."""
    value = on_zero_rows(sql)
    if value is None or value in CHOICES:
        return None
    return (f"'-- {ON_ZERO_ROWS}: {value}' is not a choice: write "
            f"'{ZERO_ROWS_STOP}' (end the run when this write changes no rows) "
            f"or '-- {ON_ZERO_ROWS}: ignore'")


def stops_on_zero_rows(sql: str) -> bool:
    return on_zero_rows(sql) == "stop"
