"""Reading one YAML node of an exercise: typed fields, ids, times and SQL, each wrong one
becoming a `file:line: what is wrong` problem instead of an exception."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, datetime
from pathlib import Path

from raceday.exercise.customers import CustomerTable
from raceday.exercise.fields import FIELDS, ID, MOVED, UNQUOTED_TIME, E
from raceday.exercise.sql_check import SqlChecker
from raceday.exercise.times import format_time, parse_duration, parse_hhmm, parse_time
from raceday.exercise.yaml_lines import Located
from raceday.value import Value, frozen


@frozen
class Ref(Value):
    """A reference from one part of the exercise to another (`kind`, `target`), checked
    once the whole file is read."""

    line: int
    what: str
    kind: str
    target: str


@frozen
class SqlUse(Value):
    """A statement of the exercise and the line it is on: prepared against the exercise's
    world when it loads, so SQL that does not prepare is reported at its line."""

    line: int
    what: str
    key: str
    sql: str
    parameters: tuple[str, ...] | None
    """Parameters the engine binds besides :now, :now_hhmm and remembered values; None: no
    parameters at all."""
    runs_as: tuple[str, str] = ("", "")
    """Whose remembered values are bound: ("statement" | "task" | "role", id)."""


def describe(node: Located) -> str:
    value = node.value
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {node.text}"
    if isinstance(value, date):
        return f"the date {node.text}"
    shown = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
    return f'the text "{shown}"'


def suggest(key: str, known: Iterable[str]) -> str:
    import difflib  # only a broken file needs it

    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f' (did you mean "{close[0]}"?)'
    return f" (known keys: {', '.join(known)})"


def listed_ids(ids: Iterable[str], plural: str) -> str:
    listed = sorted(ids)
    if not listed:
        return f" (there are no {plural})"
    return f" ({plural}: {', '.join(listed)})"


PLURAL = {
    "role": "roles",
    "statement": "statements",
    "task": "tasks",
    "invariant": "invariants",
    "milestone": "milestones",
    "race_step": "race steps",
}


class FieldReader:
    """One pass over one exercise file, collecting problems instead of stopping at them."""

    def __init__(self, yaml_path: Path, *, sql_checker: SqlChecker | None) -> None:
        self.yaml_path = yaml_path
        self.file = str(yaml_path)
        self.folder = yaml_path.parent
        self.sql_checker = sql_checker
        self.problems: list[str] = []
        self.moved: list[tuple[int, str]] = []
        self.refs: list[Ref] = []
        self.practice_nights: dict[str, int] = {}
        self.night_refs: list[tuple[int, str, str]] = []  # (line, what, practice night id)
        self.sql: list[SqlUse] = []
        self.customers: tuple[CustomerTable, ...] = ()
        """The customers' view's tables: SQL naming one is compiled with it as a WITH table."""
        self.ids: dict[str, dict[str, int]] = {kind: {} for kind in PLURAL}
        self.remembered: dict[str, set[str]] = {}
        self.task_roles: dict[str, str] = {}
        self.statement_roles: dict[str, str] = {}
        self.statement_users: dict[str, set[str]] = {}
        self.start: datetime | None = None
        self.end: int | None = None
        self.cited: list[tuple[int, str, str, str]] = []
        """(line, what, key, value) of each inject's source and phase, checked once the
        debrief's sources and phases are read."""

    # -- reporting ---------------------------------------------------------------------

    def problem(self, line: int, message: str) -> None:
        self.problems.append(f"{self.file}:{line}: {message}")

    def _when(self, minutes: int) -> str:
        return f'"{format_time(minutes, self.start)}"' if self.start else str(minutes)

    # -- shapes ------------------------------------------------------------------------

    def fields(self, node: Located, kind: str, what: str) -> dict[str, Located] | None:
        """The known keys of a mapping; unknown and missing keys are reported."""
        if not isinstance(node.value, dict):
            self.problem(node.line, f"{what} must be a mapping of keys, not {describe(node)}")
            return None
        required, optional = FIELDS[kind]
        known = required + optional
        for key, item in node.value.items():
            if key not in known:
                self.problem(item.line, f'{what}: unknown key "{key}"{suggest(key, known)}')
        for key in required:
            if key not in node.value:
                self.problem(node.line, f'{what} is missing required key "{key}"')
        found = {key: item for key, item in node.value.items() if key in known}
        for old, new in MOVED.get(kind, {}).items():
            if old in found and new in found:
                self.problem(found[old].line, f'{what}: "{old}" moved to "{new}"; give only '
                             f'"{new}"')
            elif old in found:
                self.move(found[old].line, what, f"`{old}` moved to `{new}`")
            elif new not in found and not (kind == "invariant" and "went_back" in found):
                self.problem(node.line, f'{what} is missing required key "{new}"')
        return found

    @staticmethod
    def spelled(m: dict[str, Located], kind: str, key: str) -> str:
        """The key as the file spells it: `key`, or the old key that moved to it (so a
        problem names what the author wrote)."""
        old = next((o for o, n in MOVED.get(kind, {}).items() if n == key and o in m), None)
        return key if key in m or old is None else old

    def move(self, line: int, what: str, how: str) -> None:
        """An old spelling that still loads: noted for `raceday check --strict`."""
        self.moved.append((line, f"{what}: {how} (the old spelling still loads)"))

    def items(
        self, m: dict[str, Located], key: str, kind: str, what: str
    ) -> Iterator[tuple[dict[str, Located], str, int]]:
        """Each mapping of a list of objects with ids, with its id and line.

        Ids must be unique within the list; `self.ids[kind]` collects them when the kind is
        one other parts of the file refer to.
        """
        node = m.get(key)
        if node is None:
            return
        if not isinstance(node.value, list):
            self.problem(node.line, f"{what} must be a list, not {describe(node)}")
            return
        seen: dict[str, int] = {}
        for index, item in enumerate(node.value, start=1):
            raw_id = item.value.get("id") if isinstance(item.value, dict) else None
            if raw_id is not None and isinstance(raw_id.value, str) and raw_id.value:
                item_what = f'{kind.replace("_", " ")} "{raw_id.value}"'
            else:
                item_what = f"{what} item {index}"
            fields = self.fields(item, kind, item_what)
            if fields is None:
                continue
            ident = self.ident(fields, "id", item_what)
            if ident:
                id_line = fields["id"].line
                if ident in seen:
                    self.problem(
                        id_line,
                        f'duplicate {kind.replace("_", " ")} id "{ident}" '
                        f"(first defined at line {seen[ident]})",
                    )
                else:
                    seen[ident] = id_line
                    if kind in self.ids:
                        self.ids[kind][ident] = id_line
            yield fields, ident, item.line

    # -- scalars -----------------------------------------------------------------------

    def text(
        self, m: dict[str, Located], key: str, what: str, default: str = "", *, empty: bool = True
    ) -> str:
        node = m.get(key)
        if node is None:
            return default
        if not isinstance(node.value, str):
            self.problem(node.line, f'{what}: "{key}" must be text, not {describe(node)}')
            return default
        if not empty and not node.value.strip():
            self.problem(node.line, f'{what}: "{key}" must not be empty')
        return node.value

    def ident(self, m: dict[str, Located], key: str, what: str) -> str:
        value = self.text(m, key, what)
        if key in m and isinstance(m[key].value, str) and not ID.fullmatch(value):
            self.problem(
                m[key].line,
                f'{what}: "{key}" "{value}" is not an id '
                "(letters, digits, '-', '_' and '.', starting with a letter or digit)",
            )
            return ""
        return value

    def ref(self, m: dict[str, Located], key: str, what: str, kind: str) -> str | None:
        if key not in m:
            return None
        value = self.text(m, key, what)
        if value:
            self.refs.append(Ref(m[key].line, what, kind, value))
        return value or None

    def integer(self, m: dict[str, Located], key: str, what: str, default: int = 0, minimum: int = 0) -> int:
        node = m.get(key)
        if node is None:
            return default
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            self.problem(node.line, f'{what}: "{key}" must be a whole number, not {describe(node)}')
            return default
        if node.value < minimum:
            self.problem(node.line, f'{what}: "{key}" must be at least {minimum}, not {node.value}')
            return default
        return node.value

    def boolean(self, m: dict[str, Located], key: str, what: str, default: bool = False) -> bool:
        node = m.get(key)
        if node is None:
            return default
        if not isinstance(node.value, bool):
            self.problem(node.line, f'{what}: "{key}" must be true or false, not {describe(node)}')
            return default
        return node.value

    def texts(
        self, m: dict[str, Located], key: str, what: str, default: tuple[str, ...] = ()
    ) -> tuple[str, ...]:
        node = m.get(key)
        if node is None:
            return default
        if not isinstance(node.value, list):
            self.problem(node.line, f'{what}: "{key}" must be a list, not {describe(node)}')
            return default
        values: list[str] = []
        for item in node.value:
            if not isinstance(item.value, str) or not item.value:
                self.problem(item.line, f'{what}: each of "{key}" must be text, not {describe(item)}')
            else:
                values.append(item.value)
        return tuple(values)

    def refs_list(self, m: dict[str, Located], key: str, what: str, kind: str) -> tuple[str, ...]:
        values = self.texts(m, key, what)
        node = m.get(key)
        if node is not None and isinstance(node.value, list):
            for item in node.value:
                if isinstance(item.value, str) and item.value:
                    self.refs.append(Ref(item.line, what, kind, item.value))
        return values

    def enum(self, m: dict[str, Located], key: str, what: str, cls: type[E], default: E) -> E:
        choices = [member.value for member in cls]
        value = self.choice(m, key, what, choices, default.value)
        return cls(value) if value in choices else default

    def choice(self, m: dict[str, Located], key: str, what: str, choices: Iterable[str], default: str) -> str:
        node = m.get(key)
        if node is None:
            return default
        options = list(choices)
        if not isinstance(node.value, str) or node.value not in options:
            self.problem(
                node.line,
                f'{what}: "{key}" must be one of {", ".join(options)}, not {describe(node)}',
            )
            return default
        return node.value

    def duration(self, m: dict[str, Located], key: str, what: str, *, positive: bool = False) -> int | None:
        node = m.get(key)
        if node is None:
            return None
        value = node.value
        try:
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise ValueError
            minutes = parse_duration(value)
        except ValueError:
            self.problem(
                node.line,
                f'{what}: "{key}" must be a duration like "10m", "2h", "1h30m" or a number of '
                f"minutes, not {describe(node)}",
            )
            return None
        if positive and minutes <= 0:
            self.problem(node.line, f'{what}: "{key}" must be longer than 0 minutes')
            return None
        return minutes

    def clock_time(self, m: dict[str, Located], key: str, what: str) -> int | None:
        """Minutes since the clock's start; reported if not "HH:MM" or after the end."""
        node = m.get(key)
        if node is None:
            return None
        value = self._hhmm(node, key, what)
        if value is None or self.start is None:
            return None
        minutes = parse_time(value, self.start)
        if self.end is not None and minutes > self.end:
            self.problem(
                node.line,
                f'{what}: "{key}" "{value}" is after the clock\'s end {self._when(self.end)} '
                f"(a time means the next time the clock shows it after the start "
                f"{self._when(0)})",
            )
        return minutes

    def _hhmm(self, node: Located, key: str, what: str) -> str | None:
        if isinstance(node.value, int) and node.plain and UNQUOTED_TIME.fullmatch(node.text):
            self.problem(
                node.line,
                f'{what}: "{key}" must be quoted: write "{node.text}" '
                f"(YAML reads {node.text} unquoted as the number {node.value})",
            )
            return None
        if not isinstance(node.value, str):
            self.problem(node.line, f'{what}: "{key}" must be a time "HH:MM", not {describe(node)}')
            return None
        try:
            parse_hhmm(node.value)
        except ValueError as exc:
            self.problem(node.line, f'{what}: "{key}" {exc}')
            return None
        return node.value

    def sql_text(
        self,
        m: dict[str, Located],
        key: str,
        what: str,
        *,
        parameters: tuple[str, ...] | None = None,
        runs_as: tuple[str, str] = ("", ""),
    ) -> str:
        value = self.text(m, key, what, empty=False)
        if value.strip():
            self.sql.append(SqlUse(m[key].line, what, key, value, parameters, runs_as))
        return value

    # -- the debrief's words -----------------------------------------------------------

    def cite(self, m: dict[str, Located], key: str, what: str) -> str:
        """A source tag or phase id an inject cites; checked against the debrief's lists."""
        value = self.ident(m, key, what)
        if value:
            self.cited.append((m[key].line, what, key, value))
        return value

    def check_refs(self) -> None:
        for line, what, night in self.night_refs:
            if night not in self.practice_nights:
                self.problem(line, f'{what}: practice night "{night}" is not defined'
                             f"{listed_ids(self.practice_nights, 'practice nights')}")
        for ref in self.refs:
            defined = self.ids[ref.kind]
            if ref.target not in defined:
                self.problem(
                    ref.line,
                    f'{ref.what}: {ref.kind} "{ref.target}" is not defined'
                    f"{listed_ids(defined, PLURAL[ref.kind])}",
                )
