"""What a player can do, as values: the one vocabulary every path speaks (the play screen, a
team seat, the host, a headless script, `raceday resume`), carried out by `Session.perform`.

Each action is a frozen dataclass; `kind` is the word a team seat's command carries. An
action crosses a process boundary as a JSON object written and read by the events codec
(`action_to_record`, `action_from_record`), checked field by field like an event's line: a
team seat sends its action's record, and the host reads it back as the seat's own role
(`action_from_record(record, role=...)`), whatever role the record names. Adding an action
is a class here and its case in `Session.perform`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from raceday.transcript.events import EventError, value_from_record, value_to_record
from raceday.value import Value, frozen


@frozen(kw_only=True)
class RunSql(Value):
    """Run a submission (one or more statements) as `role`."""

    kind: ClassVar[str] = "sql"
    role: str
    sql: str


@frozen(kw_only=True)
class SaveMonitor(Value):
    """Save (or replace) a monitor: a query run every simulated minute."""

    kind: ClassVar[str] = "monitor"
    role: str
    name: str
    sql: str


@frozen(kw_only=True)
class RemoveMonitor(Value):
    """Drop a saved monitor. `role`: who asks (a team seat's role); a monitor another role
    saved is not theirs to drop. None: the one player of a solo session (or a resume)."""

    kind: ClassVar[str] = "remove_monitor"
    name: str
    role: str | None = None


@frozen(kw_only=True)
class Declare(Value):
    """Declare a finding: judged at once against the world as it is. `finding` is one of the
    exercise's, or `OWN_WORDS` with the player's `text` (the facilitator rules on it)."""

    kind: ClassVar[str] = "declare"
    role: str
    finding: str
    text: str = ""


@frozen(kw_only=True)
class EditStatement(Value):
    """Replace one of the automation's statements for the rest of the night."""

    kind: ClassVar[str] = "edit"
    role: str
    statement: str
    sql: str


@frozen(kw_only=True)
class RevealHint(Value):
    """Reveal a hint (`hint` None: the next one, the asking role's pending task's first);
    `to`: the roles a facilitator gives it to (empty: everyone)."""

    kind: ClassVar[str] = "hint"
    hint: str | None = None
    role: str | None = None
    to: tuple[str, ...] = ()


@frozen(kw_only=True)
class AskReplay(Value):
    """Replay the race against a copy of the team's world (ctrl+r): it scores nothing."""

    kind: ClassVar[str] = "replay"


@frozen(kw_only=True)
class Wait(Value):
    """Let the clock run to `until` (a simulated minute), or (None) to the next inject."""

    kind: ClassVar[str] = "wait"
    until: int | None = None


Action = RunSql | SaveMonitor | RemoveMonitor | Declare | EditStatement | RevealHint \
    | AskReplay | Wait
"""Every player action; `Session.perform` takes each."""

ACTION_TYPES: tuple[type[Action], ...] = (RunSql, SaveMonitor, RemoveMonitor, Declare,
                                          EditStatement, RevealHint, AskReplay, Wait)
BY_KIND: dict[str, type[Action]] = {t.kind: t for t in ACTION_TYPES}


def action_to_record(action: Action) -> dict[str, Any]:
    """The action as a JSON object: its `kind` and its fields."""
    return {"kind": action.kind, **value_to_record(action)}


def action_from_record(record: Any, *, role: str | None = None) -> Action:
    """A typed action from a decoded JSON object; `EventError` names what is wrong and where
    (`declare.finding: expected str, got int`). With `role` (a team seat's), the action is
    that role's whatever role the record names (or none, for an action that names no
    role): a seat never acts as another."""
    if not isinstance(record, Mapping):
        raise EventError("an action must be a JSON object")
    kind = record.get("kind")
    if not isinstance(kind, str):
        raise EventError("an action needs a 'kind'")
    cls = BY_KIND.get(kind)
    if cls is None:
        raise EventError(f"unknown action {kind!r}; actions are {', '.join(BY_KIND)}")
    fields = dict(record)
    del fields["kind"]
    if role is not None:  # the seat's role, whatever the record says (a replay names none)
        if "role" in cls.__dataclass_fields__:
            fields["role"] = role
        else:
            fields.pop("role", None)
    return value_from_record(cls, fields, kind)
