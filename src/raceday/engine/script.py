"""Play scripts: the player actions a headless run performs, read strictly with line numbers.

A script is validated whole before anything runs, so a typo is `file:line: what is wrong`
and exit status 2, never half a session.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from raceday.engine.actions import (
    Action,
    AskReplay,
    Declare,
    EditStatement,
    RevealHint,
    RunSql,
    SaveMonitor,
)
from raceday.errors import ScriptError
from raceday.exercise.model import MAX_OWN_WORDS, OWN_WORDS, Exercise
from raceday.exercise.times import parse_duration, parse_hhmm
from raceday.textfile import UnreadableText, read_text
from raceday.value import Value, frozen

if TYPE_CHECKING:
    from raceday.exercise.yaml_lines import Located


@frozen
class When(Value):
    """A moment in a script: a clock time ('23:50'), a step forward ('+10m'), or 'next'."""

    text: str
    clock: int | None = None
    plus: int | None = None


@frozen
class Step(Value):
    """One script step. `action` is sql | monitor | declare | edit | wait | replay | end | hint."""

    line: int
    action: str
    role: str | None = None
    at: When | None = None
    sql: str = ""
    name: str = ""
    target: str = ""
    until: When | None = None
    text: str = ""
    """A declaration's finding in the player's own words (`declare: {text: ...}`)."""
    seat: str | None = None
    """The seat that acts, when the script names seats (`seats:`): a team session's player."""

    def player_action(self) -> Action | None:
        """The player's action this step is, played headless or sent by a team's seat (None:
        `wait` and `end`, the clock's; a wait's minute is known only as it is played)."""
        if self.action == "hint":
            return RevealHint(hint=self.target or None, role=self.role)
        if self.action == "replay":
            return AskReplay()
        if self.action not in ("sql", "monitor", "declare", "edit") or self.role is None:
            return None
        if self.action == "sql":
            return RunSql(role=self.role, sql=self.sql)
        if self.action == "monitor":
            return SaveMonitor(role=self.role, name=self.name, sql=self.sql)
        if self.action == "declare":
            return Declare(role=self.role, finding=self.target, text=self.text)
        return EditStatement(role=self.role, statement=self.target, sql=self.sql)


@frozen
class Script(Value):
    """A play script as read: the exercise and roles it is for, and its steps."""

    path: Path
    exercise: str | None
    roles: tuple[str, ...] | None
    steps: tuple[Step, ...]
    seats: tuple[tuple[str, str], ...] = ()
    """(seat, role) pairs from `seats:`; `as:` may name a seat. Headless play runs each
    seat's steps as its role; a team session gives each seat its own client."""


_TOP_KEYS = {"exercise", "roles", "steps", "description", "seats"}
_ACTIONS = ("sql", "monitor", "declare", "edit", "wait", "replay", "end", "hint")
_STEP_KEYS = {"at", "as", *_ACTIONS}


def _when(value: Any) -> When | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return When(f"+{value}m", plus=value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text == "next":
        return When(text)
    try:
        if text.startswith("+"):
            return When(text, plus=parse_duration(text[1:]))
        return When(text, clock=parse_hhmm(text))
    except ValueError:
        return None


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self.seats: dict[str, str] = {}

    def err(self, node: Located | None, message: str) -> None:
        line = node.line if node is not None else 1
        self.problems.append(f"{self.path}:{line}: {message}")


def load_script(path: Path, exercise: Exercise) -> Script:
    """Read and validate a play script against the exercise it will play; as an earlier run
    read it when its bytes, the exercise and raceday's code are the same (`kept_script`:
    PyYAML and the parse were ~25 ms of a headless night)."""
    from raceday.engine.load_cache import kept_script

    return kept_script(path, exercise, Script, lambda: _read_script(path, exercise))


def _read_script(path: Path, exercise: Exercise) -> Script:
    from raceday.exercise.yaml_lines import YamlSyntaxError, load_located

    reader = _Reader(path)
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise ScriptError([f"{path}: no such play script"]) from None
    except UnreadableText as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise ScriptError([f"{where}: cannot read the script: {exc.reason}"]) from None
    try:
        root, yaml_problems = load_located(text)
    except YamlSyntaxError as exc:
        raise ScriptError([f"{path}:{exc.line}: not valid YAML: {exc.message}"]) from None
    for line, message in yaml_problems:
        reader.problems.append(f"{path}:{line}: {message}")
    if root is None or not root.is_mapping or "steps" not in root.value:
        # one line, and none of its keys: a file that is no script (/etc/shadow) is not quoted
        raise ScriptError([f"{path}:1: a play script is a mapping with `steps:`"])
    top: dict[str, Located] = root.value
    for key, node in top.items():
        if key not in _TOP_KEYS:
            reader.err(node, f"unknown key '{key}' (expected one of: {', '.join(sorted(_TOP_KEYS))})")
    exercise_id = None
    if "exercise" in top:
        exercise_id = str(top["exercise"].plain_value())
        if exercise_id != exercise.id:
            reader.err(top["exercise"], f"this script is for exercise '{exercise_id}', not '{exercise.id}'")
    roles: tuple[str, ...] | None = None
    if "roles" in top:
        node = top["roles"]
        value = node.plain_value()
        if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
            reader.err(node, "roles must be a list of role ids")
        else:
            roles = tuple(value)
            for role in roles:
                if role not in exercise.role_ids:
                    reader.err(node, f"unknown role '{role}' (roles are {', '.join(exercise.role_ids)})")
    seats = _read_seats(reader, top.get("seats"), exercise)
    if roles is None and seats:
        roles = tuple(r for r in exercise.role_ids if r in {role for _, role in seats})
    held = roles if roles is not None else exercise.default_roles
    for seat, role in seats:
        if role not in held:
            reader.err(top["seats"], f"seat '{seat}' plays '{role}', which `roles:` does not hold")
    reader.seats = dict(seats)
    steps: list[Step] = []
    if "steps" not in top:
        reader.err(root, "missing key 'steps'")
    else:
        snode = top["steps"]
        if not snode.is_list:
            reader.err(snode, "steps must be a list")
        else:
            for item in snode.value:
                step = _read_step(reader, item, exercise, held)
                if step is not None:
                    steps.append(step)
    if reader.problems:
        raise ScriptError(reader.problems)
    return Script(path, exercise_id, roles, tuple(steps), seats)


def _read_seats(reader: _Reader, node: Located | None, ex: Exercise,
                ) -> tuple[tuple[str, str], ...]:
    """`seats: {ana: enactor-a, rita: responder}`: named seats and the role of each."""
    if node is None:
        return ()
    value = node.plain_value()
    if not isinstance(value, dict) or not value or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        reader.err(node, "seats must map seat names to roles, e.g. {ana: enactor-a}")
        return ()
    seats: list[tuple[str, str]] = []
    for seat, role in value.items():
        if role not in ex.role_ids:
            reader.err(node, f"seat '{seat}': unknown role '{role}' (roles are "
                       f"{', '.join(ex.role_ids)})")
            continue
        if seat in ex.role_ids and seat != role:
            reader.err(node, f"seat '{seat}' is named like a role but plays '{role}'")
            continue
        seats.append((seat, role))
    return tuple(seats)


def _read_step(reader: _Reader, node: Located, ex: Exercise, held: tuple[str, ...]) -> Step | None:
    if not node.is_mapping:
        reader.err(node, "a step is a mapping such as `{as: responder, sql: SELECT 1}`")
        return None
    line = node.line
    fields: dict[str, Located] = {}
    for key, value in node.value.items():
        if key not in _STEP_KEYS:
            reader.err(value, f"unknown step key '{key}' (expected one of: {', '.join(sorted(_STEP_KEYS))})")
            continue
        fields[key] = value
    actions = [a for a in _ACTIONS if a in fields]
    if len(actions) > 1:
        reader.err(node, f"a step does one thing; this one has {', '.join(actions)}")
        return None
    at = None
    if "at" in fields:
        at = _when(fields["at"].plain_value())
        if at is None or at.text == "next":
            reader.err(fields["at"], "at must be a clock time like \"23:50\" or a step like \"+10m\"")
    if not actions:
        if at is None:
            reader.err(node, f"a step needs one of: {', '.join(_ACTIONS)}")
            return None
        return Step(line, "wait", until=at)
    action = actions[0]
    vnode = fields[action]
    value = vnode.plain_value()
    role = seat = None
    if action in {"sql", "monitor", "declare", "edit"}:
        if "as" not in fields:
            reader.err(node, f"a {action} step needs `as: ROLE`")
            return None
        role = str(fields["as"].plain_value())
        seat = role if role in reader.seats else None
        role = reader.seats.get(role, role)
        if role not in ex.role_ids:
            reader.err(fields["as"], f"unknown role '{role}' (roles are {', '.join(ex.role_ids)})")
            return None
        if role not in held:
            reader.err(fields["as"], f"role '{role}' is not held by the players of this script "
                       f"(roles: {', '.join(held) or 'none'}); add it to `roles:`")
            return None
    if action == "sql":
        if not isinstance(value, str) or not value.strip():
            reader.err(vnode, "sql must be a non-empty string")
            return None
        return Step(line, "sql", role, at, sql=value, seat=seat)
    if action == "monitor":
        if not isinstance(value, dict) or set(value) != {"name", "sql"}:
            reader.err(vnode, "monitor must be {name: ..., sql: ...}")
            return None
        if not all(isinstance(value[key], str) and value[key].strip() for key in ("name", "sql")):
            reader.err(vnode, "monitor's name and sql must be non-empty text")
            return None
        return Step(line, "monitor", role, at, sql=value["sql"], name=value["name"], seat=seat)
    if action == "declare" and isinstance(value, dict):
        words = value.get("text")
        if set(value) != {"text"} or not isinstance(words, str) or not words.strip():
            reader.err(vnode, "declare in your own words must be {text: \"...\"} with words")
            return None
        if len(" ".join(words.split())) > MAX_OWN_WORDS:
            reader.err(vnode, f"declare's text is at most {MAX_OWN_WORDS} characters")
            return None
        return Step(line, "declare", role, at, target=OWN_WORDS, text=words, seat=seat)
    if action == "declare":
        if not isinstance(value, str) or ex.finding(value) is None:
            known = ", ".join(f.id for f in ex.findings) or "none"
            reader.err(vnode, f"unknown finding '{value}' (findings are {known}; or "
                       "{text: \"...\"} in your own words)")
            return None
        return Step(line, "declare", role, at, target=value, seat=seat)
    if action == "edit":
        if not isinstance(value, dict) or set(value) != {"statement", "sql"}:
            reader.err(vnode, "edit must be {statement: ..., sql: ...}")
            return None
        if not all(isinstance(value[key], str) and value[key].strip() for key in ("statement", "sql")):
            reader.err(vnode, "edit's statement and sql must be non-empty text")
            return None
        statement = value["statement"]
        if statement not in {s.id for s in ex.statements}:
            known = ", ".join(s.id for s in ex.statements) or "none"
            reader.err(vnode, f"unknown automation statement '{statement}' (statements are {known})")
            return None
        return Step(line, "edit", role, at, sql=value["sql"], target=statement, seat=seat)
    if action == "wait":
        until = _when(value)
        if until is None:
            reader.err(vnode, "wait must be a clock time like \"02:30\", a step like \"+10m\", "
                       "or \"next\" (the next inject)")
            return None
        return Step(line, "wait", role, at, until=until)
    if action == "hint":
        if value is not True and not (isinstance(value, str) and value in {h.id for h in ex.hints}):
            reader.err(vnode, "hint must be true (the next hint) or a hint id")
            return None
        return Step(line, "hint", role, at, target="" if value is True else str(value))
    if value is not True:
        reader.err(vnode, f"{action} takes `true`")
        return None
    return Step(line, action, role, at)
