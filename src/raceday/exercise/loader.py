"""Read an exercise folder into the frozen model, or say everything that is wrong with it.

An exercise is data written by people, so the loader is strict and talkative: every unknown
key, wrong type, dangling reference, impossible time and SQL that does not prepare becomes
one line `file:line: what is wrong`, and all of them are raised together as one
`ExerciseError`, so an author fixes a file in one pass instead of one error per run.

The exercise package knows no database: compiling the SQL against the world is a `SqlChecker`
the caller passes in (the store's, through `raceday.engine.load.load_exercise`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from datetime import time as dtime
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from raceday.errors import ExerciseError
from raceday.exercise import EXERCISE_FILE as EXERCISE_FILE  # re-exported: it was defined here
from raceday.exercise.catalog import BUNDLED_DIR
from raceday.exercise.model import (
    HARM_GRADES,
    PANEL_SHOWS,
    Clock,
    DebriefContent,
    DetectionRubric,
    Exercise,
    Finding,
    GoodPath,
    GuardsRubric,
    HarmWorth,
    Hint,
    Inject,
    InjectKind,
    Invariant,
    Judge,
    Milestone,
    PanelItem,
    Phase,
    PhaseTeam,
    Policy,
    Practice,
    PracticeChange,
    PracticeNight,
    RaceStep,
    RecoveryItem,
    RecoveryRubric,
    ReplaySpec,
    Retry,
    Role,
    Scoring,
    ShiftSpec,
    Source,
    Statement,
    Task,
    Truth,
    TruthView,
)
from raceday.exercise.times import format_time, parse_duration, parse_hhmm, parse_time
from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located
from raceday.textfile import UnreadableText, read_text

FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "exercise": (
        ("id", "title", "summary", "length", "level", "clock", "world", "briefing", "roles"),
        (
            "default_roles",
            "statements",
            "tasks",
            "injects",
            "invariants",
            "milestones",
            "findings",
            "hints",
            "scoring",
            "replay",
            "debrief",
            "truth",
            "panel",
            "sources",
            "phases",
        ),
    ),
    "clock": (("start", "end"), ("date", "zone", "minutes_per_statement")),
    "role": (
        ("id", "name"),
        ("briefing", "read", "write", "break_glass", "schema", "automated", "example"),
    ),
    "statement": (("id", "role", "sql"), ("description",)),
    "task": (
        ("id", "role", "at", "title"),
        (
            "statements",
            "every",
            "until",
            "when",
            "skipped",
            "remember",
            "on_zero_rows",
            "on_error",
            "retry",
            "done_when",
            "context",
            "hint",
            "points",
            "proves",
            "keeps",
        ),
    ),
    "retry": (("every",), ("until", "limit")),
    "inject": (("id", "title"),
               ("at", "on_fault", "after", "text", "kind", "to", "source", "phase", "event_at")),
    "invariant": (("id", "fault"), ("when", "sql", "went_back", "outage")),
    "milestone": (("id", "label"), ("when", "sql", "again")),
    "finding": (("id", "text", "correct"), ("explanation", "evidence")),
    "truth": (("tables",), ("views",)),
    "truth_view": (("id", "sql"), ()),
    "panel_item": (("id", "label", "sql"), ("show", "onboarding", "count")),
    "hint": (("id", "text"), ("task", "cost", "shown")),
    "scoring": ((), ("tasks", "detection", "guards", "recovery")),
    "replay": ((), ("until", "delayed", "normal", "shifted", "practice")),
    "practice_night": (("id", "title", "changes"), ()),
    "practice_change": (("task", "at"), ("bind", "bind_sql", "skip", "then")),
    "shifted": (("start",), ("later", "seed", "renumber", "swap")),
    "detection": (
        ("points", "invariant", "full_within", "zero_after"),
        ("match", "wrong_finding_cost", "event_minutes"),
    ),
    "guards": ((), ("points", "steps", "good_path", "harms", "collateral")),
    "harm": (("invariant", "points"), ("grade", "night")),
    "race_step": (("id", "task"), ("when", "happened", "title", "points", "after")),
    "good_path": (("id", "title", "role", "sql", "penalty"), ()),
    "recovery": ((), ("points", "items", "event_minutes", "forged")),
    "recovery_item": (
        ("id", "title", "points"),
        ("milestone", "before", "healthy_at_end", "no_relapse", "outage", "full_within"),
    ),
    "debrief": ((), ("shared", "night", "sources", "phases", "checklist")),
    "shared_debrief": ((), ("night", "sources", "phases", "checklist")),
    "phase": (("id", "label", "team"), ("milestone",)),
    "checklist": (("practices",), ("title",)),
    "practice": (("id", "title", "text"),
                 ("action", "judge", "steps", "statements", "harms", "nights")),
}
"""Every object of the format: (required keys, optional keys). The JSON Schema mirrors it."""

MOVED: dict[str, dict[str, str]] = {
    "invariant": {"sql": "when"},
    "milestone": {"sql": "when"},
    "race_step": {"happened": "when"},
}
"""Keys that moved, by object: old -> new. A condition (a query whose rows mean "yes") is
`when` everywhere. The old key still loads; giving both is an error; the new key is required
where the old one was, and `raceday check --strict` says where each old key is."""
HINT_SHOWN = ("on-request", "with-task")

LEVELS = ("beginner", "intermediate", "advanced")
SHARED_DIR = "shared"
"""Where files several exercises share live: `exercises/shared/<name>.yaml`, beside them."""
BUILTIN_PARAMETERS = ("now", "now_hhmm")
HAPPENED_PARAMETERS = ("failed", "rowcount")
DEFAULT_DATE = date(2000, 1, 1)

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNQUOTED_TIME = re.compile(r"\d{1,2}:\d{2}")

E = TypeVar("E", bound=Enum)


class PreparedSql(Protocol):
    """What a `SqlChecker` found for one labelled piece of SQL."""

    @property
    def label(self) -> str: ...

    @property
    def error(self) -> str | None:
        """Why SQLite would not compile it; None when it compiles."""

    @property
    def parameters(self) -> tuple[str, ...]:
        """The named parameters it uses, without their `:`."""


class SqlCheckResult(Protocol):
    """What a `SqlChecker` found: the world's first error (line, message), or each item's."""

    @property
    def world_error(self) -> tuple[int, str] | None: ...

    @property
    def items(self) -> Sequence[PreparedSql]: ...


SqlChecker = Callable[[str, Sequence[tuple[str, str]]], SqlCheckResult]
"""Builds the world from its SQL, then compiles each (label, sql) without running it."""


def load_exercise(path: Path, *, sql_checker: SqlChecker | None = None) -> Exercise:
    """Load the exercise in folder `path` (or the `exercise.yaml` file itself).

    Raises `ExerciseError` with every problem found. Without `sql_checker` the SQL is not
    compiled against the world (a quick look, for listings); `raceday.engine.load` passes
    the store's.
    """
    path = Path(path)
    if path.is_dir():
        yaml_path = path / EXERCISE_FILE
    elif path.exists() or path.suffix in (".yaml", ".yml"):
        yaml_path = path
    else:
        raise ExerciseError([f"{path}: no such exercise folder or file"])
    try:
        text = read_text(yaml_path)
    except FileNotFoundError:
        raise ExerciseError([f"{yaml_path}: not found (an exercise folder holds {EXERCISE_FILE})"]) from None
    except UnreadableText as exc:
        where = f"{yaml_path}:{exc.line}" if exc.line is not None else str(yaml_path)
        raise ExerciseError([f"{where}: {exc.reason}"]) from None
    reader = _Reader(yaml_path, sql_checker=sql_checker)
    exercise = reader.read(text)
    if reader.problems or exercise is None:
        raise ExerciseError(reader.problems or [f"{yaml_path}:1: not an exercise"])
    return exercise


@dataclass(frozen=True)
class _Ref:
    line: int
    what: str
    kind: str
    target: str


@dataclass(frozen=True)
class _Sql:
    line: int
    what: str
    key: str
    sql: str
    parameters: tuple[str, ...] | None
    """Parameters the engine binds besides :now, :now_hhmm and remembered values; None: no
    parameters at all."""
    runs_as: tuple[str, str] = ("", "")
    """Whose remembered values are bound: ("statement" | "task" | "role", id)."""


def _describe(node: Located) -> str:
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


def _suggest(key: str, known: Iterable[str]) -> str:
    import difflib  # only a broken file needs it

    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f' (did you mean "{close[0]}"?)'
    return f" (known keys: {', '.join(known)})"


def _known(ids: Iterable[str], plural: str) -> str:
    listed = sorted(ids)
    if not listed:
        return f" (there are no {plural})"
    return f" ({plural}: {', '.join(listed)})"


_PLURAL = {
    "role": "roles",
    "statement": "statements",
    "task": "tasks",
    "invariant": "invariants",
    "milestone": "milestones",
    "race_step": "race steps",
}


class _Reader:
    """One pass over one exercise file, collecting problems instead of stopping at them."""

    def __init__(self, yaml_path: Path, *, sql_checker: SqlChecker | None) -> None:
        self.yaml_path = yaml_path
        self.file = str(yaml_path)
        self.folder = yaml_path.parent
        self.sql_checker = sql_checker
        self.problems: list[str] = []
        self.moved: list[tuple[int, str]] = []
        self.refs: list[_Ref] = []
        self.practice_nights: dict[str, int] = {}
        self.night_refs: list[tuple[int, str, str]] = []  # (line, what, practice night id)
        self.sql: list[_Sql] = []
        self.ids: dict[str, dict[str, int]] = {kind: {} for kind in _PLURAL}
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
            self.problem(node.line, f"{what} must be a mapping of keys, not {_describe(node)}")
            return None
        required, optional = FIELDS[kind]
        known = required + optional
        for key, item in node.value.items():
            if key not in known:
                self.problem(item.line, f'{what}: unknown key "{key}"{_suggest(key, known)}')
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
            self.problem(node.line, f"{what} must be a list, not {_describe(node)}")
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
            self.problem(node.line, f'{what}: "{key}" must be text, not {_describe(node)}')
            return default
        if not empty and not node.value.strip():
            self.problem(node.line, f'{what}: "{key}" must not be empty')
        return node.value

    def ident(self, m: dict[str, Located], key: str, what: str) -> str:
        value = self.text(m, key, what)
        if key in m and isinstance(m[key].value, str) and not _ID.fullmatch(value):
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
            self.refs.append(_Ref(m[key].line, what, kind, value))
        return value or None

    def integer(self, m: dict[str, Located], key: str, what: str, default: int = 0, minimum: int = 0) -> int:
        node = m.get(key)
        if node is None:
            return default
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            self.problem(node.line, f'{what}: "{key}" must be a whole number, not {_describe(node)}')
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
            self.problem(node.line, f'{what}: "{key}" must be true or false, not {_describe(node)}')
            return default
        return node.value

    def texts(
        self, m: dict[str, Located], key: str, what: str, default: tuple[str, ...] = ()
    ) -> tuple[str, ...]:
        node = m.get(key)
        if node is None:
            return default
        if not isinstance(node.value, list):
            self.problem(node.line, f'{what}: "{key}" must be a list, not {_describe(node)}')
            return default
        values: list[str] = []
        for item in node.value:
            if not isinstance(item.value, str) or not item.value:
                self.problem(item.line, f'{what}: each of "{key}" must be text, not {_describe(item)}')
            else:
                values.append(item.value)
        return tuple(values)

    def refs_list(self, m: dict[str, Located], key: str, what: str, kind: str) -> tuple[str, ...]:
        values = self.texts(m, key, what)
        node = m.get(key)
        if node is not None and isinstance(node.value, list):
            for item in node.value:
                if isinstance(item.value, str) and item.value:
                    self.refs.append(_Ref(item.line, what, kind, item.value))
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
                f'{what}: "{key}" must be one of {", ".join(options)}, not {_describe(node)}',
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
                f"minutes, not {_describe(node)}",
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
        if isinstance(node.value, int) and node.plain and _UNQUOTED_TIME.fullmatch(node.text):
            self.problem(
                node.line,
                f'{what}: "{key}" must be quoted: write "{node.text}" '
                f"(YAML reads {node.text} unquoted as the number {node.value})",
            )
            return None
        if not isinstance(node.value, str):
            self.problem(node.line, f'{what}: "{key}" must be a time "HH:MM", not {_describe(node)}')
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
            self.sql.append(_Sql(m[key].line, what, key, value, parameters, runs_as))
        return value

    # -- the file ----------------------------------------------------------------------

    def read(self, text: str) -> Exercise | None:
        try:
            root, yaml_problems = load_located(text)
        except YamlSyntaxError as exc:
            self.problem(exc.line, f"YAML syntax error: {exc.message}")
            return None
        for line, message in yaml_problems:
            self.problem(line, message)
        if root is None:
            self.problem(1, "the file is empty")
            return None
        top = self.fields(root, "exercise", "the exercise")
        if top is None:
            return None
        what = "the exercise"
        ident = self.ident(top, "id", what)
        folder_name = self.folder.resolve().name
        if ident and ident != folder_name:
            self.problem(top["id"].line, f'id "{ident}" must equal the folder name "{folder_name}"')
        title = self.text(top, "title", what, empty=False)
        summary = self.text(top, "summary", what, empty=False)
        length = self.duration(top, "length", what, positive=True) or 0
        level = self.choice(top, "level", what, LEVELS, "")
        default_roles = self.refs_list(top, "default_roles", what, "role")
        clock = self.clock(top)
        roles = tuple(self.role(f, i) for f, i, _l in self.items(top, "roles", "role", "roles"))
        if "roles" in top and not roles and isinstance(top["roles"].value, list):
            self.problem(top["roles"].line, "roles must name at least one role")
        statements = tuple(
            self.statement(f, i, line)
            for f, i, line in self.items(top, "statements", "statement", "statements")
        )
        tasks = tuple(self.task(f, i, line) for f, i, line in self.items(top, "tasks", "task", "tasks"))
        injects = tuple(
            self.inject(f, i, line) for f, i, line in self.items(top, "injects", "inject", "injects")
        )
        invariants = tuple(
            self.invariant(f, i, line)
            for f, i, line in self.items(top, "invariants", "invariant", "invariants")
        )
        milestones = tuple(
            Milestone(
                id=i,
                label=self.text(f, "label", f'milestone "{i}"', empty=False),
                sql=self.sql_text(f, self.spelled(f, "milestone", "when"), f'milestone "{i}"'),
                line=line,
                again=self.boolean(f, "again", f'milestone "{i}"'),
            )
            for f, i, line in self.items(top, "milestones", "milestone", "milestones")
        )
        evidence_lines: dict[str, int] = {}  # finding id -> the line of its evidence
        found: list[Finding] = []
        for f, i, line in self.items(top, "findings", "finding", "findings"):
            found.append(Finding(
                id=i,
                text=self.text(f, "text", f'finding "{i}"', empty=False),
                correct=self.boolean(f, "correct", f'finding "{i}"'),
                explanation=self.text(f, "explanation", f'finding "{i}"'),
                evidence=self.text(f, "evidence", f'finding "{i}"') or None,
                line=line,
            ))
            evidence_lines[i] = f["evidence"].line if "evidence" in f else line
        findings = tuple(found)
        hints, tasks = self.hints(top, tasks)
        scoring = self.scoring(top, tasks)
        replay = self.replay(top)
        debrief = self.debrief(top)
        self.check_cited(debrief)
        truth = self.truth(top)
        panel = self.panel(top)
        evidence_ids = {i.id for i in invariants} | {
            s.id for s in (scoring.guards.steps if scoring.guards else ())}
        for finding in findings:
            if finding.evidence is not None and finding.evidence not in evidence_ids:
                self.problem(evidence_lines.get(finding.id, finding.line or 1),
                             f'finding "{finding.id}": evidence "{finding.evidence}" is neither '
                             f"an invariant nor a race step{_known(evidence_ids, 'ids')}")
        self.check_refs()
        world_file = self.text(top, "world", what, empty=False)
        briefing_file = self.text(top, "briefing", what, empty=False)
        world_sql = self.read_file(top, "world", world_file)
        briefing = self.read_file(top, "briefing", briefing_file)
        if world_sql is not None and self.sql_checker is not None:
            self.prepare(self.sql_checker, world_file, world_sql)
        if clock is None:
            return None
        return Exercise(
            id=ident,
            title=title,
            summary=summary,
            length=length,
            level=level,
            clock=clock,
            world_sql=world_sql or "",
            roles=roles,
            statements=statements,
            tasks=tasks,
            injects=injects,
            invariants=invariants,
            milestones=milestones,
            findings=findings,
            hints=hints,
            scoring=scoring,
            briefing=briefing or "",
            default_roles=default_roles,
            replay=replay,
            debrief=debrief,
            truth=truth,
            panel=panel,
            path=self.yaml_path.resolve(),
            moved=tuple(self.moved),
        )

    def hints(self, top: dict[str, Located], tasks: tuple[Task, ...],
              ) -> tuple[tuple[Hint, ...], tuple[Task, ...]]:
        """The one list of hints. A hint `shown: with-task` is free and shown with its task
        to the player holding it (the task's `hint` in the model, where the old spelling,
        a task's own `hint:` key, puts it too); the others are revealed on request."""
        hints: list[Hint] = []
        with_task: dict[str, str] = {}
        for f, i, _l in self.items(top, "hints", "hint", "hints"):
            what = f'hint "{i}"'
            hint = Hint(id=i, text=self.text(f, "text", what, empty=False),
                        task=self.ref(f, "task", what, "task"), cost=self.integer(f, "cost", what))
            if self.choice(f, "shown", what, HINT_SHOWN, "on-request") == "on-request":
                hints.append(hint)
                continue
            if hint.task is None or "cost" in f:
                self.problem(f["shown"].line, f'{what}: a hint shown with its task names the '
                             f'"task" and is free (no "cost")')
            elif hint.task in with_task:
                self.problem(f["shown"].line, f'{what}: task "{hint.task}" already has a hint '
                             f"shown with it")
            else:
                with_task[hint.task] = hint.text
        out: list[Task] = []
        for task in tasks:
            if task.id in with_task:
                if task.hint:
                    self.problem(task.line, f'task "{task.id}": has a "hint" and a hint shown '
                                 f'with it in "hints"; keep the one in "hints"')
                task = replace(task, hint=with_task[task.id])
            out.append(task)
        return tuple(hints), tuple(out)

    def clock(self, top: dict[str, Located]) -> Clock | None:
        node = top.get("clock")
        if node is None:
            return None
        m = self.fields(node, "clock", "clock")
        if m is None:
            return None
        day = DEFAULT_DATE
        if "date" in m:
            raw = m["date"].value
            if isinstance(raw, date) and not isinstance(raw, datetime):
                day = raw
            else:
                try:
                    if not isinstance(raw, str):
                        raise ValueError
                    day = date.fromisoformat(raw)
                except ValueError:
                    self.problem(
                        m["date"].line,
                        f'clock: "date" must be a date "YYYY-MM-DD", not {_describe(m["date"])}',
                    )
        zone = self.text(m, "zone", "clock")
        per_statement = self.integer(m, "minutes_per_statement", "clock", default=1)
        start_text = self._hhmm(m["start"], "start", "clock") if "start" in m else None
        end_text = self._hhmm(m["end"], "end", "clock") if "end" in m else None
        if start_text is None:
            return None
        start_of_day = parse_hhmm(start_text)
        self.start = datetime.combine(day, dtime(start_of_day // 60, start_of_day % 60))
        if end_text is None:
            return None
        length = parse_time(end_text, self.start)
        if length == 0:
            self.problem(m["end"].line, 'clock: "end" must be after "start"')
            return None
        self.end = length
        return Clock(
            start=self.start,
            end=self.start + timedelta(minutes=length),
            zone=zone,
            minutes_per_statement=per_statement,
        )

    def role(self, m: dict[str, Located], ident: str) -> Role:
        what = f'role "{ident}"'
        example = self.text(m, "example", what)
        if example.strip():
            self.sql.append(_Sql(m["example"].line, what, "example", example, None))
        return Role(
            id=ident,
            name=self.text(m, "name", what, empty=False),
            briefing=self.text(m, "briefing", what),
            read=self.texts(m, "read", what, default=("*",)),
            write=self.texts(m, "write", what),
            break_glass=self.texts(m, "break_glass", what),
            schema=self.boolean(m, "schema", what),
            automated=self.boolean(m, "automated", what),
            example=example,
        )

    def statement(self, m: dict[str, Located], ident: str, line: int) -> Statement:
        what = f'statement "{ident}"'
        role = self.ref(m, "role", what, "role") or ""
        self.statement_roles.setdefault(ident, role)
        return Statement(
            id=ident,
            role=role,
            sql=self.sql_text(m, "sql", what, parameters=(), runs_as=("statement", ident)),
            description=self.text(m, "description", what),
            line=line,
        )

    def task(self, m: dict[str, Located], ident: str, line: int) -> Task:
        what = f'task "{ident}"'
        at = self.clock_time(m, "at", what)
        every = self.duration(m, "every", what, positive=True)
        until = self.clock_time(m, "until", what)
        if until is not None and at is not None and until < at:
            self.problem(
                m["until"].line,
                f'{what}: "until" {self._when(until)} is before "at" {self._when(at)}',
            )
        if "until" in m and "every" not in m:
            self.problem(m["until"].line, f'{what}: "until" needs "every" (repeat how often?)')
        if every is not None and "until" not in m:
            until = self.end  # repeating with no end: until the clock stops
        remember = self.texts(m, "remember", what)
        for name in remember:
            if not _NAME.fullmatch(name):
                self.problem(
                    m["remember"].line,
                    f"{what}: cannot remember \"{name}\": use a column name made of letters, digits and '_'",
                )
        role = self.ref(m, "role", what, "role") or ""
        self.task_roles.setdefault(ident, role)
        self.remembered.setdefault(role, set()).update(remember)
        statements = self.refs_list(m, "statements", what, "statement")
        for statement in statements:
            self.statement_users.setdefault(statement, set()).add(role)
        on_zero_rows = self.enum(m, "on_zero_rows", what, Policy, Policy.IGNORE)
        on_error = self.enum(m, "on_error", what, Policy, Policy.IGNORE)
        retry = self.retry(m, what, at)
        if Policy.RETRY in (on_zero_rows, on_error) and "retry" not in m:
            self.problem(line, f'{what}: a "retry" policy needs "retry: {{every: ...}}"')
        if "retry" in m and Policy.RETRY not in (on_zero_rows, on_error):
            self.problem(
                m["retry"].line,
                f'{what}: "retry" is set but neither "on_zero_rows" nor "on_error" is retry',
            )
        return Task(
            id=ident,
            role=role,
            at=at or 0,
            title=self.text(m, "title", what, empty=False),
            statements=statements,
            every=every,
            until=until,
            when=self.sql_text(m, "when", what, parameters=(), runs_as=("task", ident)) or None,
            skipped=self.text(m, "skipped", what),
            remember=remember,
            on_zero_rows=on_zero_rows,
            on_error=on_error,
            retry=retry,
            done_when=self.sql_text(m, "done_when", what, parameters=(), runs_as=("task", ident)) or None,
            context=self.text(m, "context", what),
            hint=self._task_hint(m, what, ident),
            points=self.integer(m, "points", what),
            proves=self.refs_list(m, "proves", what, "race_step"),
            keeps=self.refs_list(m, "keeps", what, "invariant"),
            line=line,
        )

    def _task_hint(self, m: dict[str, Located], what: str, ident: str) -> str:
        if "hint" in m:
            self.move(m["hint"].line, what, f"`hint` moved to `hints` (an entry with `task: "
                      f"{ident}` and `shown: with-task`)")
        return self.text(m, "hint", what)

    def retry(self, task: dict[str, Located], what: str, at: int | None) -> Retry | None:
        node = task.get("retry")
        if node is None:
            return None
        where = f"{what} retry"
        m = self.fields(node, "retry", where)
        if m is None:
            return None
        every = self.duration(m, "every", where, positive=True)
        until = self.clock_time(m, "until", where)
        if until is not None and at is not None and until < at:
            self.problem(
                m["until"].line,
                f'{where}: "until" {self._when(until)} is before the task\'s "at" {self._when(at)}',
            )
        limit = self.integer(m, "limit", where, default=0, minimum=1) if "limit" in m else None
        if every is None:
            return None
        return Retry(every=every, until=until, limit=limit)

    def inject(self, m: dict[str, Located], ident: str, line: int) -> Inject:
        """An inject arrives at a time (`at`) or follows the world (`on_fault`: the id of
        the invariant whose fault brings it, `after` a duration once that fault begins)."""
        what = f'inject "{ident}"'
        at = (self.clock_time(m, "at", what) or 0) if "at" in m else None
        on_fault = self.ref(m, "on_fault", what, "invariant") or ""
        after = self.duration(m, "after", what) or 0
        if "at" in m and "on_fault" in m:
            self.problem(m["on_fault"].line, f'{what}: give "at" (a time) or "on_fault" (an '
                         f"invariant whose fault brings it), not both")
        elif "at" not in m and "on_fault" not in m:
            self.problem(line, f'{what} needs "at" (a time) or "on_fault" (an invariant whose '
                         f"fault brings it)")
            at = 0
        if "after" in m and "on_fault" not in m:
            self.problem(m["after"].line, f'{what}: "after" is the delay once the fault of '
                         f'"on_fault" begins; a timed inject has no "after"')
        kind = self.enum(m, "kind", what, InjectKind, InjectKind.MESSAGE)
        if kind is InjectKind.REVEAL and "on_fault" in m and "at" not in m:
            self.problem(m["on_fault"].line, f"{what}: a reveal tells that night's history, "
                         f'whatever the team does: it arrives at a time ("at"), not "on_fault"')
            at = 0
        return Inject(
            id=ident,
            at=at,
            on_fault=on_fault if at is None else "",
            after=after,
            title=self.text(m, "title", what, empty=False),
            text=self.text(m, "text", what),
            kind=kind,
            to=self.refs_list(m, "to", what, "role"),
            source=self.cite(m, "source", what),
            phase=self.cite(m, "phase", what),
            event_at=(self._hhmm(m["event_at"], "event_at", what) or "") if "event_at" in m else "",
            line=line,
        )

    # -- scoring -----------------------------------------------------------------------

    def scoring(self, top: dict[str, Located], tasks: tuple[Task, ...]) -> Scoring:
        task_points = sum(task.points for task in tasks)
        node = top.get("scoring")
        if node is None:
            return Scoring(tasks=task_points)
        m = self.fields(node, "scoring", "scoring")
        if m is None:
            return Scoring(tasks=task_points)
        total = self.integer(m, "tasks", "scoring", default=task_points)
        if "tasks" in m and total != task_points:
            self.problem(
                m["tasks"].line,
                f'scoring: "tasks" is {total} but the tasks\' points add up to {task_points}',
            )
        return Scoring(
            detection=self.detection(m),
            guards=self.guards(m),
            recovery=self.recovery(m),
            tasks=total,
        )

    def replay(self, top: dict[str, Located]) -> ReplaySpec | None:
        node = top.get("replay")
        if node is None:
            return None
        m = self.fields(node, "replay", "replay")
        if m is None:
            return None
        return ReplaySpec(
            until=self.clock_time(m, "until", "replay"),
            delayed=self.refs_list(m, "delayed", "replay", "task"),
            normal=self.refs_list(m, "normal", "replay", "task"),
            shifted=self.shifted(m),
            practice=tuple(self.practice_night(f, i, line) for f, i, line
                           in self.items(m, "practice", "practice_night", "replay: practice")),
        )

    def practice_night(self, m: dict[str, Located], ident: str, line: int) -> PracticeNight:
        what = f'practice night "{ident}"'
        node = m.get("changes")
        changes: list[PracticeChange] = []
        if node is not None and (not isinstance(node.value, list) or not node.value):
            self.problem(node.line, f'{what}: "changes" must be a list of changes, not '
                         f"{_describe(node)}")
        elif node is not None:
            for index, item in enumerate(node.value, start=1):
                change = self.practice_change(item, f"{what}: changes item {index}")
                if change is not None:
                    changes.append(change)
        if ident:
            self.practice_nights[ident] = line
        return PracticeNight(id=ident, title=self.text(m, "title", what, empty=False),
                             changes=tuple(changes), line=line)

    def practice_change(self, item: Located, where: str) -> PracticeChange | None:
        f = self.fields(item, "practice_change", where)
        if f is None:
            return None
        bind = self.named_values(f, "bind", where, "a number or text", lambda v: (
            not isinstance(v, bool) and isinstance(v, (int, float, str))))
        bind_sql = self.named_values(f, "bind_sql", where, "a query",
                                     lambda v: isinstance(v, str) and bool(v.strip()))
        skip = self.refs_list(f, "skip", where, "statement")
        then = self.refs_list(f, "then", where, "statement")
        if not any(key in f for key in ("bind", "bind_sql", "skip", "then")):
            self.problem(item.line, f'{where}: give "bind", "bind_sql", "skip" or "then": a '
                         "change that changes nothing tests nothing")
        return PracticeChange(task=self.ref(f, "task", where, "task") or "",
                              at=self.clock_time(f, "at", where) or 0, bind=tuple(bind),
                              bind_sql=tuple((n, str(v)) for n, v in bind_sql), skip=skip,
                              then=then, line=item.line)

    def named_values(self, m: dict[str, Located], key: str, what: str, wanted: str,
                     accept: Callable[[object], bool]) -> list[tuple[str, Any]]:
        """A mapping of names to values `accept` takes; anything else is a problem at its
        line, naming what was `wanted`."""
        node = m.get(key)
        if node is None:
            return []
        if not isinstance(node.value, dict):
            self.problem(node.line, f'{what}: "{key}" must map names to values, not '
                         f"{_describe(node)}")
            return []
        found: list[tuple[str, Any]] = []
        for name, value in node.value.items():
            if accept(value.value):
                found.append((str(name), value.value))
            else:
                self.problem(value.line, f'{what}: {key} "{name}" must be {wanted}, not '
                             f"{_describe(value)}")
        return found

    def panel(self, top: dict[str, Located]) -> tuple[PanelItem, ...]:
        return tuple(self.panel_item(f, i)
                     for f, i, _l in self.items(top, "panel", "panel_item", "panel"))

    def panel_item(self, m: dict[str, Located], ident: str) -> PanelItem:
        what = f'panel item "{ident}"'
        label = self.text(m, "label", what)
        sql = self.sql_text(m, "sql", what)
        show = self.choice(m, "show", what, PANEL_SHOWS, "rows")
        count = ""
        if "count" in m:
            if show == "answers":
                count = self.sql_text(m, "count", what)
            else:
                self.problem(m["count"].line, f'{what}: "count" is for "show: answers" items '
                             f'(a count of the names and of the empty ones), not "{show}"')
        return PanelItem(id=ident, label=label, sql=sql, show=show,
                         onboarding=self.boolean(m, "onboarding", what), count=count)

    def invariant(self, f: dict[str, Located], ident: str, line: int) -> Invariant:
        what = f'invariant "{ident}"'
        went_back = self.sql_text(f, "went_back", what) if "went_back" in f else ""
        key = self.spelled(f, "invariant", "when")
        if went_back and key in f:
            self.problem(f[key].line, f'{what}: give "when" or "went_back", not both')
        return Invariant(
            id=ident,
            fault=self.text(f, "fault", what, empty=False),
            sql="" if went_back else self.sql_text(f, key, what),
            line=line,
            went_back=went_back,
            outage=self.boolean(f, "outage", what, default=True),
        )

    def _range(self, node: Located, what: str, read: Callable[[Located], int | None],
               *, stepped: bool = False) -> tuple[int, ...] | None:
        """A [least, most] pair (drawn from for each session), each read by `read`; with
        `stepped`, an optional third value: the step between the values drawn."""
        sizes = (2, 3) if stepped else (2,)
        if not isinstance(node.value, list) or len(node.value) not in sizes:
            form = "[least, most] or [least, most, step]" if stepped else "[least, most]"
            self.problem(node.line, f"{what} must be one value or a range {form}, not "
                         f"{_describe(node)}")
            return None
        values = [read(item) for item in node.value]
        if any(v is None for v in values):
            return None
        bounds = tuple(v for v in values if v is not None)
        if bounds[1] < bounds[0]:
            self.problem(node.line, f"{what}: the range [least, most] runs backwards")
            return None
        if len(bounds) == 3 and bounds[2] <= 0:
            self.problem(node.line, f"{what}: the step must be more than 0")
            return None
        return bounds

    def shifted(self, replay: dict[str, Located]) -> ShiftSpec | None:
        node = replay.get("shifted")
        if node is None:
            return None
        m = self.fields(node, "shifted", "replay: shifted")
        if m is None or "start" not in m:
            return None
        what = "replay: shifted"
        if self.start is None:
            return None
        origin = self.start.hour * 60 + self.start.minute

        def moved(node: Located) -> int | None:
            start = self._hhmm(node, "start", what)
            return parse_hhmm(start) - origin if start is not None else None

        span = self._range(m["start"], f'{what}: "start"', moved) \
            if isinstance(m["start"].value, list) else None
        clock_range = (span[0], span[1]) if span is not None else None
        clock = clock_range[0] if clock_range else moved(m["start"])
        if clock is None:
            return None
        later: list[tuple[str, int]] = []
        later_range: list[tuple[str, int, int, int]] = []
        node_later = m.get("later")
        if node_later is not None:
            if not isinstance(node_later.value, dict):
                self.problem(node_later.line, f'{what}: "later" must map task ids to '
                             f"durations, not {_describe(node_later)}")
            else:
                for task_id, item in node_later.value.items():
                    self.refs.append(_Ref(item.line, f"{what}: later", "task", task_id))
                    if isinstance(item.value, list):
                        def lateness(n: Located, t: str = task_id) -> int | None:
                            return self.duration({t: n}, t, f"{what}: later")

                        span = self._range(item, f"{what}: later: {task_id}", lateness,
                                           stepped=True)
                        if span is not None:
                            later.append((task_id, span[0]))
                            step = span[2] if len(span) == 3 else 1
                            later_range.append((task_id, span[0], span[1], step))
                        continue
                    minutes = self.duration({task_id: item}, task_id, f"{what}: later")
                    if minutes is not None:
                        later.append((task_id, minutes))
        renumber = None
        if "renumber" in m:
            pair = self._range(m["renumber"], f'{what}: "renumber"',
                               lambda n: self.integer({"renumber": n}, "renumber", what))
            renumber = (pair[0], pair[1]) if pair is not None else None
        seed = self.text(m, "seed", what)
        if ":offset" in seed and renumber is None:
            self.problem(m["seed"].line, f'{what}: "seed" uses :offset but no "renumber" range '
                         "says what to draw it from")
        return ShiftSpec(clock=clock, later=tuple(later), seed=seed, clock_range=clock_range,
                         later_range=tuple(later_range), renumber=renumber,
                         swap=self.swap_groups(m, what))

    def swap_groups(self, m: dict[str, Located], what: str) -> tuple[tuple[str, ...], ...]:
        """`swap`: a list of groups, each a list of two or more distinct names."""
        node = m.get("swap")
        if node is None:
            return ()
        if not isinstance(node.value, list):
            self.problem(node.line, f'{what}: "swap" must be a list of groups of names, not '
                         f"{_describe(node)}")
            return ()
        groups: list[tuple[str, ...]] = []
        for item in node.value:
            names = item.value if isinstance(item.value, list) else None
            texts = tuple(str(n.value) for n in names or ()
                          if isinstance(n.value, str) and n.value and "'" not in n.value)
            if names is None or len(texts) != len(names) or len(set(texts)) < 2 \
                    or len(set(texts)) != len(texts):
                self.problem(item.line, f'{what}: each "swap" group must list two or more '
                             "different names (no quotes in them), not "
                             f"{_describe(item)}")
                continue
            groups.append(texts)
        return tuple(groups)

    def truth(self, top: dict[str, Located]) -> Truth | None:
        node = top.get("truth")
        if node is None:
            return None
        m = self.fields(node, "truth", "truth")
        if m is None:
            return None
        views = tuple(
            TruthView(name=i, sql=self.sql_text(f, "sql", f'truth view "{i}"'))
            for f, i, _l in self.items(m, "views", "truth_view", "truth.views")
        )
        return Truth(tables=self.texts(m, "tables", "truth"), views=views)

    def detection(self, scoring: dict[str, Located]) -> DetectionRubric | None:
        node = scoring.get("detection")
        if node is None:
            return None
        what = "scoring.detection"
        m = self.fields(node, "detection", what)
        if m is None:
            return None
        full_within = self.duration(m, "full_within", what)
        zero_after = self.duration(m, "zero_after", what)
        if full_within is not None and zero_after is not None and zero_after <= full_within:
            self.problem(m["zero_after"].line, f'{what}: "zero_after" must be longer than "full_within"')
        return DetectionRubric(
            points=self.integer(m, "points", what),
            invariant=self.ref(m, "invariant", what, "invariant") or "",
            full_within=full_within or 0,
            zero_after=zero_after or 0,
            match=self.text(m, "match", what),
            wrong_finding_cost=self.integer(m, "wrong_finding_cost", what),
            event_minutes=self.duration(m, "event_minutes", what),
        )

    def guards(self, scoring: dict[str, Located]) -> GuardsRubric | None:
        node = scoring.get("guards")
        if node is None:
            return None
        what = "scoring.guards"
        m = self.fields(node, "guards", what)
        if m is None:
            return None
        step_items = list(self.items(m, "steps", "race_step", f"{what}.steps"))
        steps = tuple(self.race_step(f, i, line) for f, i, line in step_items)
        points = self.integer(m, "points", what, default=sum(step.points for step in steps))
        seen: set[str] = set()
        for step, (_f, _i, line) in zip(steps, step_items, strict=True):
            if step.after is not None and step.after not in seen:
                self.problem(line, f'race step "{step.id}": "after" must name an earlier step '
                             f'(got "{step.after}")')
            seen.add(step.id)
        if steps and "points" in m and sum(step.points for step in steps) != points:
            self.problem(
                m["points"].line,
                f'{what}: "points" is {points} but the steps\' points add up to '
                f"{sum(step.points for step in steps)}",
            )
        good_path = tuple(
            self.good_path(f, i) for f, i, _l in self.items(m, "good_path", "good_path", f"{what}.good_path")
        )
        harms = self.harms(m, what)
        if harms:
            if any(step.points for step in steps):
                self.problem(m["harms"].line, f"{what}: with \"harms\" the race steps tell the "
                             "story and earn nothing: give the points to the harms")
            points = self.integer(m, "points", what, default=sum(h.points for h in harms))
            if "points" in m and sum(h.points for h in harms) != points:
                self.problem(m["points"].line, f'{what}: "points" is {points} but the harms\' '
                             f"points add up to {sum(h.points for h in harms)}")
        return GuardsRubric(points=points, steps=steps, good_path=good_path, harms=harms,
                            collateral=self.integer(m, "collateral", what, default=5))

    def harms(self, m: dict[str, Located], what: str) -> tuple[HarmWorth, ...]:
        node = m.get("harms")
        if node is None:
            return ()
        if not isinstance(node.value, list) or not node.value:
            self.problem(node.line, f'{what}: "harms" must be a list of harms, not '
                         f"{_describe(node)}")
            return ()
        harms: list[HarmWorth] = []
        for index, item in enumerate(node.value, start=1):
            where = f"{what}.harms item {index}"
            f = self.fields(item, "harm", where)
            if f is None:
                continue
            night = self.text(f, "night", where)
            if night:
                self.night_refs.append((f["night"].line, where, night))
            harms.append(HarmWorth(
                invariant=self.ref(f, "invariant", where, "invariant") or "",
                points=self.integer(f, "points", where),
                grade=self.choice(f, "grade", where, HARM_GRADES, "minutes"),
                night=night,
                line=item.line))
        return tuple(harms)

    def race_step(self, m: dict[str, Located], ident: str, line: int = 0) -> RaceStep:
        what = f'race step "{ident}"'
        task = self.ref(m, "task", what, "task") or ""
        return RaceStep(
            id=ident,
            task=task,
            happened=self.sql_text(
                m, self.spelled(m, "race_step", "when"), what, parameters=HAPPENED_PARAMETERS,
                runs_as=("task", task)
            ),
            title=self.text(m, "title", what),
            points=self.integer(m, "points", what),
            after=self.text(m, "after", what) or None,
            line=line,
        )

    def good_path(self, m: dict[str, Located], ident: str) -> GoodPath:
        what = f'good path "{ident}"'
        role = self.ref(m, "role", what, "role") or ""
        node = m.get("sql")
        sql: tuple[str, ...] = ()
        if node is not None and isinstance(node.value, str):
            sql = (self.sql_text(m, "sql", what, parameters=(), runs_as=("role", role)),)
        elif node is not None:
            sql = self.texts(m, "sql", what)
            if isinstance(node.value, list):
                if not node.value:
                    self.problem(node.line, f'{what}: "sql" must hold at least one statement')
                for index, item in enumerate(node.value, start=1):
                    if isinstance(item.value, str) and item.value.strip():
                        self.sql.append(
                            _Sql(item.line, what, f"sql[{index}]", item.value, (), ("role", role))
                        )
        return GoodPath(
            id=ident,
            title=self.text(m, "title", what, empty=False),
            sql=sql,
            role=role,
            penalty=self.integer(m, "penalty", what),
        )

    def recovery(self, scoring: dict[str, Located]) -> RecoveryRubric | None:
        node = scoring.get("recovery")
        if node is None:
            return None
        what = "scoring.recovery"
        m = self.fields(node, "recovery", what)
        if m is None:
            return None
        items = tuple(
            self.recovery_item(f, i, line)
            for f, i, line in self.items(m, "items", "recovery_item", f"{what}.items")
        )
        points = self.integer(m, "points", what, default=sum(item.points for item in items))
        if items and "points" in m and sum(item.points for item in items) != points:
            self.problem(
                m["points"].line,
                f'{what}: "points" is {points} but the items\' points add up to '
                f"{sum(item.points for item in items)}",
            )
        return RecoveryRubric(
            points=points, items=items, event_minutes=self.duration(m, "event_minutes", what),
            forged=tuple(t.lower() for t in self.texts(m, "forged", what)),
        )

    def recovery_item(self, m: dict[str, Located], ident: str, line: int) -> RecoveryItem:
        what = f'recovery item "{ident}"'
        milestone = self.ref(m, "milestone", what, "milestone")
        before = self.ref(m, "before", what, "milestone")
        healthy = self.boolean(m, "healthy_at_end", what)
        no_relapse = self.boolean(m, "no_relapse", what)
        outage = self.boolean(m, "outage", what)
        if "before" in m and "milestone" not in m:
            self.problem(m["before"].line, f'{what}: "before" needs "milestone"')
        if "milestone" not in m and not healthy and not no_relapse and not outage:
            self.problem(
                line,
                f'{what} checks nothing: give "milestone", "healthy_at_end: true" or "no_relapse: true"',
            )
        return RecoveryItem(
            id=ident,
            title=self.text(m, "title", what, empty=False),
            points=self.integer(m, "points", what),
            milestone=milestone,
            before=before,
            healthy_at_end=healthy,
            no_relapse=no_relapse,
            outage=outage,
            full_within=self.duration(m, "full_within", what) or 0,
        )

    # -- the debrief's words -----------------------------------------------------------

    def cite(self, m: dict[str, Located], key: str, what: str) -> str:
        """A source tag or phase id an inject cites; checked against the debrief's lists."""
        value = self.ident(m, key, what)
        if value:
            self.cited.append((m[key].line, what, key, value))
        return value

    def debrief(self, top: dict[str, Located]) -> DebriefContent:
        """The `debrief` section, over the shared file it names (its own keys win; sources
        are merged, the exercise's titles winning)."""
        node = top.get("debrief")
        m = self.fields(node, "debrief", "debrief") if node is not None else {}
        if m is None:
            return DebriefContent()
        for key in ("sources", "phases"):  # the exercise's own vocabularies, at the top
            if key in top and key in m:
                self.problem(m[key].line, f'debrief: "debrief.{key}" moved to "{key}" (at the '
                             f'top of the file); give only "{key}"')
            elif key in m:
                self.move(m[key].line, "debrief", f"`debrief.{key}` moved to `{key}` (at the "
                          f"top of the file)")
            elif key in top:
                m[key] = top[key]
        if not m:
            return DebriefContent()
        base = DebriefContent()
        if "shared" in m:
            # what the exercise says itself is not read from the shared file (sources merge)
            skip = set(m) - {"shared", "sources"}
            base = self.shared(m["shared"], skip) or base
        own = self.debrief_content(m, "debrief")
        sources = {s.tag: s for s in base.sources}
        sources.update({s.tag: s for s in own.sources})
        return DebriefContent(
            night=own.night if "night" in m else base.night,
            sources=tuple(sources.values()),
            phases=own.phases if "phases" in m else base.phases,
            checklist_title=(own.checklist_title if "checklist" in m
                             else base.checklist_title),
            checklist=own.checklist if "checklist" in m else base.checklist,
        )

    def shared(self, node: Located, skip: set[str]) -> DebriefContent | None:
        if not isinstance(node.value, str) or not _ID.fullmatch(node.value):
            self.problem(node.line, f'debrief: "shared" must name a file of {SHARED_DIR}/ '
                         f"(an id such as aws-2025-10), not {_describe(node)}")
            return None
        beside = self.folder.parent / SHARED_DIR / f"{node.value}.yaml"
        bundled = BUNDLED_DIR / SHARED_DIR / f"{node.value}.yaml"
        path = beside if beside.is_file() else bundled  # a copied exercise uses raceday's own
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            self.problem(node.line, f'debrief: shared file "{node.value}" not found (looked for '
                         f"{beside}: put {node.value}.yaml in a {SHARED_DIR}/ folder beside "
                         "the exercise's folder)")
            return None
        reader = _Reader(path, sql_checker=None)
        reader.ids = self.ids  # its references are to this exercise's milestones and steps
        content = reader.shared_file(text, skip)
        reader.check_refs()
        self.problems.extend(reader.problems)
        return content

    def shared_file(self, text: str, skip: set[str]) -> DebriefContent:
        try:
            root, yaml_problems = load_located(text)
        except YamlSyntaxError as exc:
            self.problem(exc.line, f"YAML syntax error: {exc.message}")
            return DebriefContent()
        for line, message in yaml_problems:
            self.problem(line, message)
        if root is None:
            self.problem(1, "the file is empty")
            return DebriefContent()
        m = self.fields(root, "shared_debrief", "the shared file")
        if m is None:
            return DebriefContent()
        return self.debrief_content({k: v for k, v in m.items() if k not in skip},
                                    "the shared file")

    def debrief_content(self, m: dict[str, Located], what: str) -> DebriefContent:
        checklist_title = ""
        practices: tuple[Practice, ...] = ()
        node = m.get("checklist")
        if node is not None:
            c = self.fields(node, "checklist", f"{what}.checklist")
            if c is not None:
                checklist_title = self.text(c, "title", f"{what}.checklist")
                practices = tuple(
                    self.practice(f, i)
                    for f, i, _l in self.items(c, "practices", "practice",
                                               f"{what}.checklist.practices"))
        return DebriefContent(
            night=self.text(m, "night", what),
            sources=self.sources(m, what),
            phases=tuple(self.phase(f, i)
                         for f, i, _l in self.items(m, "phases", "phase", f"{what}.phases")),
            checklist_title=checklist_title,
            checklist=practices,
        )

    def sources(self, m: dict[str, Located], what: str) -> tuple[Source, ...]:
        node = m.get("sources")
        if node is None:
            return ()
        if not isinstance(node.value, dict):
            self.problem(node.line, f'{what}: "sources" must be a mapping of tag: what it '
                         f"stands for, not {_describe(node)}")
            return ()
        found = []
        for tag, item in node.value.items():
            if not isinstance(tag, str) or not _ID.fullmatch(tag):
                self.problem(item.line, f'{what}: source tag "{tag}" is not an id')
            elif not isinstance(item.value, str) or not item.value.strip():
                self.problem(item.line, f'{what}: source "{tag}" must say what it stands for '
                             f"(text), not {_describe(item)}")
            else:
                found.append(Source(tag, item.value))
        return tuple(found)

    def phase(self, m: dict[str, Located], ident: str) -> Phase:
        what = f'phase "{ident}"'
        team = self.enum(m, "team", what, PhaseTeam, PhaseTeam.FAULT)
        milestone = self.ref(m, "milestone", what, "milestone")
        if milestone is not None and team not in (PhaseTeam.STOPPED, PhaseTeam.REPAIRED):
            self.problem(m["milestone"].line,
                         f'{what}: "milestone" is for a phase whose team is stopped or repaired')
        return Phase(id=ident, label=self.text(m, "label", what, empty=False), team=team,
                     milestone=milestone)

    def practice(self, m: dict[str, Located], ident: str) -> Practice:
        what = f'practice "{ident}"'
        return Practice(
            id=ident,
            title=self.text(m, "title", what, empty=False),
            text=self.text(m, "text", what, empty=False),
            action=self.text(m, "action", what),
            judge=self.enum(m, "judge", what, Judge, Judge.GUARDS),
            steps=self.refs_list(m, "steps", what, "race_step"),
            statements=self.refs_list(m, "statements", what, "statement"),
            harms=self.refs_list(m, "harms", what, "invariant"),
            nights=self.nights_list(m, "nights", what),
        )

    def nights_list(self, m: dict[str, Located], key: str, what: str) -> tuple[str, ...]:
        values = self.texts(m, key, what)
        node = m.get(key)
        if node is not None and isinstance(node.value, list):
            self.night_refs.extend((item.line, what, item.value) for item in node.value
                                   if isinstance(item.value, str) and item.value)
        return values

    def check_cited(self, content: DebriefContent) -> None:
        """Each inject's source is one the exercise declares (when it declares any), and each
        reveal's phase one of its phases."""
        declared = {"source": [s.tag for s in content.sources],
                    "phase": [p.id for p in content.phases]}
        for line, what, key, value in self.cited:
            known = declared[key]
            if key == "source" and not known:
                continue  # an exercise that declares no sources may cite any tag
            if value not in known:
                where = f"debrief.{key}s"
                self.problem(line, f'{what}: {key} "{value}" is not one the exercise declares'
                             + (_known(known, where) if known else f" (it has no {where})"))

    # -- across the file ---------------------------------------------------------------

    def check_refs(self) -> None:
        for line, what, night in self.night_refs:
            if night not in self.practice_nights:
                self.problem(line, f'{what}: practice night "{night}" is not defined'
                             f"{_known(self.practice_nights, 'practice nights')}")
        for ref in self.refs:
            defined = self.ids[ref.kind]
            if ref.target not in defined:
                self.problem(
                    ref.line,
                    f'{ref.what}: {ref.kind} "{ref.target}" is not defined'
                    f"{_known(defined, _PLURAL[ref.kind])}",
                )

    def read_file(self, top: dict[str, Located], key: str, name: str) -> str | None:
        if not name:
            return None
        line = top[key].line
        target = self.folder / name
        try:
            inside = target.resolve().is_relative_to(self.folder.resolve())
        except OSError:
            inside = False
        if Path(name).is_absolute() or not inside:
            self.problem(line, f'"{key}" must name a file inside the exercise folder, not "{name}"')
            return None
        try:
            return read_text(target)
        except FileNotFoundError:
            self.problem(line, f'{key} file "{name}" not found in {self.folder}')
        except UnreadableText as exc:
            if exc.line is not None:
                self.problems.append(f"{self.folder / name}:{exc.line}: {exc.reason}")
            else:
                self.problem(line, f'{key} file "{name}" is {exc.reason}')
        return None

    def prepare(self, sql_checker: SqlChecker, world_name: str, world_sql: str) -> None:
        """Report SQL that does not prepare, and parameters nothing will bind.

        The engine binds :now, :now_hhmm and the values tasks remember to automation SQL
        (statements, `when`, `done_when`), race steps' `happened` (also :failed, :rowcount)
        and good paths; invariants, milestones and examples run without parameters. An
        unknown name would silently be NULL at play, so it is reported here.
        """
        items = [(str(index), entry.sql) for index, entry in enumerate(self.sql)]
        result = sql_checker(world_sql, items)
        if result.world_error is not None:
            line, message = result.world_error
            self.problems.append(f"{self.folder / world_name}:{line}: {message}")
            return
        for prepared in result.items:
            entry = self.sql[int(prepared.label)]
            if prepared.error is not None:
                self.problem(
                    entry.line,
                    f'{entry.what}: "{entry.key}" does not prepare against {world_name}: {prepared.error}',
                )
                continue
            if not prepared.parameters:
                continue
            names = ", ".join(f":{name}" for name in prepared.parameters)
            if entry.parameters is None:
                self.problem(
                    entry.line,
                    f'{entry.what}: "{entry.key}" uses {names}, but it runs without parameters',
                )
                continue
            roles = self.roles_running(entry.runs_as)
            bound = set(BUILTIN_PARAMETERS) | set(entry.parameters)
            if roles:
                bound |= set.intersection(*(self.remembered.get(r, set()) for r in roles))
            else:  # a dangling reference, reported already: be lenient
                bound |= set().union(*self.remembered.values())
            unknown = [name for name in prepared.parameters if name not in bound]
            if unknown:
                names = ", ".join(f":{name}" for name in unknown)
                known = ", ".join(f":{name}" for name in sorted(bound))
                who = f"role {roles[0]}" if len(roles) == 1 else f"roles {', '.join(roles)}"
                self.problem(
                    entry.line,
                    f'{entry.what}: "{entry.key}" uses {names}, which no task of {who} '
                    f"remembers (bound: {known})",
                )

    def roles_running(self, runs_as: tuple[str, str]) -> list[str]:
        """The roles whose remembered values SQL is run with (the engine keeps them by role)."""
        kind, ident = runs_as
        if kind == "statement":
            users = self.statement_users.get(ident) or {self.statement_roles.get(ident, "")}
        elif kind == "task":
            users = {self.task_roles.get(ident, "")}
        elif kind == "role":
            users = {ident}
        else:
            users = set()
        return sorted(role for role in users if role in self.ids["role"])
