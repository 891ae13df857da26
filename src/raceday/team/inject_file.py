"""The facilitator's prepared injects: a YAML file written before the game day and loaded by
`raceday host --injects FILE`. It is checked as an exercise is (PyYAML's safe loader through
`yaml_lines`), and every problem is one line `file:line: what is wrong`.

```yaml
exercise: dynamodb-dns-race      # optional check
injects:
  - id: ceo-call                 # optional (default: prepared-N)
    kind: question               # message (default), status, alarm or question (for discussion)
    to: [responder]              # roles; default everyone
    at: "23:40"                  # a time on the night's clock, or:
    # when: regional-dns-answers # a harm (the exercise's invariant id) holds,
    # after: 5m                  #   this long into it, or in all, with
    # within: 30m                #   every spell of the last 30 minutes counted (a harm
                                 #   that comes and goes)
    title: The CEO is on the phone
    text: What do we tell customers?
    expect:                      # optional: what the team is expected to do or say, each
      - names who speaks for us  #   marked met, partly or not met (console x, or
    objective: detection         #   raceday aar --mark ID:N); the objective it rates
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raceday.errors import InputError
from raceday.exercise.fields import MAX_EXPECT, OBJECTIVES
from raceday.exercise.model import Exercise
from raceday.exercise.times import parse_duration, parse_time
from raceday.exercise.yaml_lines import Located
from raceday.inert import has_controls
from raceday.team.yaml_file import YamlFileError, read_mapping

KINDS = ("message", "status", "alarm", "question")
_TOP = ("exercise", "injects")
_FIELDS = ("id", "kind", "to", "at", "when", "after", "within", "title", "text", "expect",
           "objective")
MAX_TITLE = 120
MAX_TEXT = 2000


class InjectFileError(InputError):
    """A prepared inject file is invalid; each problem reads `file:line: what is wrong`."""


@dataclass(frozen=True)
class PreparedInject:
    """One inject the facilitator prepared: at a minute (`at`, since the clock's start) or
    when a harm holds (`when`, `after` minutes into it, or with `within`, `after` minutes in
    all within the last `within`: a harm that flaps brings it too); `to` empty is everyone."""

    id: str
    title: str
    text: str = ""
    kind: str = "message"
    to: tuple[str, ...] = ()
    at: int | None = None
    when: str = ""
    after: int = 0
    line: int = 0
    within: int = 0
    expect: tuple[str, ...] = ()
    """What the team is expected to do or say about it, as an exercise inject's `expect:`:
    the facilitator marks each met, partly or not met, for the AAR (never the score)."""
    objective: str = ""
    """The objective whose AAR rating the marks inform (empty: the inject's row only)."""


def load_inject_file(path: Path, exercise: Exercise) -> tuple[PreparedInject, ...]:
    """Read and check a prepared inject file for `exercise`."""
    try:  # a .yaml file that is an inject file, or one line that quotes none of it
        top, yaml_problems = read_mapping(path, "inject file", "injects")
    except YamlFileError as exc:
        raise InjectFileError([str(exc)]) from None
    problems = [f"{path}:{line}: {message}" for line, message in yaml_problems]
    for key, node in top.items():
        if key not in _TOP:
            problems.append(f"{path}:{node.line}: unknown key '{key}' (expected one of: "
                            f"{', '.join(_TOP)})")
    if "exercise" in top and str(top["exercise"].plain_value()) != exercise.id:
        problems.append(f"{path}:{top['exercise'].line}: this file is for exercise "
                        f"'{top['exercise'].plain_value()}', not '{exercise.id}'")
    items = top["injects"]
    if not items.is_list or not items.value:
        problems.append(f"{path}:{items.line}: injects is a list of injects (- title: ...)")
        raise InjectFileError(problems)
    out: list[PreparedInject] = []
    for n, node in enumerate(items.value, start=1):
        reader = _Reader(path, exercise, problems)
        made = reader.inject(node, n)
        if made is not None:
            if any(x.id == made.id for x in out):
                problems.append(f"{path}:{node.line}: inject id '{made.id}' is used twice")
            out.append(made)
    if problems:
        raise InjectFileError(problems)
    return tuple(out)


class _Reader:
    def __init__(self, path: Path, exercise: Exercise, problems: list[str]) -> None:
        self.path, self.exercise, self.problems = path, exercise, problems

    def problem(self, line: int, message: str) -> None:
        self.problems.append(f"{self.path}:{line}: {message}")

    def text(self, m: dict[str, Located], key: str, what: str, limit: int) -> str:
        node = m.get(key)
        if node is None:
            return ""
        if not isinstance(node.value, str):
            self.problem(node.line, f"{what}: {key} is text (put it in quotes)")
            return ""
        value = node.value.strip()
        if len(value) > limit:
            self.problem(node.line, f"{what}: {key} has at most {limit} characters")
        elif has_controls(value, one_line=key != "text"):
            self.problem(node.line, f"{what}: {key} holds control characters")
        return value

    def inject(self, node: Located, n: int) -> PreparedInject | None:
        what = f"inject {n}"
        if not node.is_mapping:
            self.problem(node.line, f"{what}: an inject is a mapping (title, at or when, ...)")
            return None
        m: dict[str, Located] = node.value
        for key, value in m.items():
            if key not in _FIELDS:
                self.problem(value.line, f"{what}: unknown key '{key}' (expected one of: "
                                         f"{', '.join(_FIELDS)})")
        ident = self.text(m, "id", what, 40) or f"prepared-{n}"
        what = f'inject "{ident}"'
        title = self.text(m, "title", what, MAX_TITLE)
        if not title:
            self.problem(node.line, f"{what} needs a title")
        kind = self.text(m, "kind", what, 20) or "message"
        if kind not in KINDS:
            self.problem(m["kind"].line, f"{what}: kind '{kind}' is not one of "
                                         f"{', '.join(KINDS)}")
        at, when, after = self.timing(m, node.line, what)
        within = self.within(m, after, what) if when else 0
        expect = self.expect(m, what)
        objective = self.objective(m, expect, what)
        if expect and any(i.id == ident for i in self.exercise.injects):
            self.problem(node.line, f"{what}: the exercise has an inject '{ident}' of its own; "
                                    "give this one another id (its marks are named by it)")
        return PreparedInject(id=ident, title=title, text=self.text(m, "text", what, MAX_TEXT),
                              kind=kind, to=self.roles(m, what), at=at, when=when, after=after,
                              line=node.line, within=within, expect=expect, objective=objective)

    def expect(self, m: dict[str, Located], what: str) -> tuple[str, ...]:
        """`expect:` as an exercise inject takes it: a list of lines (one line alone is one)."""
        node = m.get("expect")
        if node is None:
            return ()
        lines: list[str] = []
        for item in node.value if node.is_list else [node]:
            value = item.value
            if not isinstance(value, str) or not value.strip():
                self.problem(item.line, f'{what}: each of "expect" is a line of text (what the '
                                        "team is expected to do or say)")
                continue
            value = value.strip()
            if len(value) > MAX_EXPECT or "\n" in value:
                self.problem(item.line, f'{what}: each of "expect" is one line of at most '
                                        f"{MAX_EXPECT} characters")
            elif has_controls(value, one_line=True):
                self.problem(item.line, f'{what}: "expect" holds control characters')
            else:
                lines.append(value)
        return tuple(lines)

    def objective(self, m: dict[str, Located], expect: tuple[str, ...], what: str) -> str:
        node = m.get("objective")
        if node is None:
            return ""
        value = str(node.plain_value())
        if value not in OBJECTIVES:
            self.problem(node.line, f"{what}: objective '{value}' is not one of "
                                    f"{', '.join(OBJECTIVES)}")
            return ""
        if not expect:
            self.problem(node.line, f'{what}: "objective" names the objective the marks of '
                                    '"expect" rate; give "expect" too')
        return value

    def roles(self, m: dict[str, Located], what: str) -> tuple[str, ...]:
        node = m.get("to")
        if node is None:
            return ()
        values = node.value if node.is_list else [node]
        roles: list[str] = []
        for item in values:
            role = str(item.plain_value())
            if role not in self.exercise.role_ids:
                self.problem(item.line, f"{what}: unknown role '{role}' (roles are "
                                        f"{', '.join(self.exercise.role_ids)})")
            roles.append(role)
        return tuple(roles)

    def timing(self, m: dict[str, Located], line: int,
               what: str) -> tuple[int | None, str, int]:
        """(at, when, after): a minute, or a harm and how long into it."""
        if ("at" in m) == ("when" in m):
            self.problem(line, f'{what} needs "at" (a time, "23:40") or "when" (a harm that '
                               'holds), one of the two')
            return 0, "", 0
        if "at" in m:
            node = m["at"]
            for key in ("after", "within"):
                if key in m:
                    self.problem(m[key].line, f'{what}: "{key}" goes with "when"; a timed '
                                              'inject has none')
            if not isinstance(node.value, str):
                self.problem(node.line, f'{what}: at is a time in quotes, "23:40"'
                             + (" (unquoted, YAML reads 23:40 as a number)"
                                if node.plain else ""))
                return 0, "", 0
            try:
                at = parse_time(node.value, self.exercise.clock.start)
            except ValueError as exc:
                self.problem(node.line, f"{what}: {exc}")
                return 0, "", 0
            if at > self.exercise.clock.length_minutes:
                self.problem(node.line, f"{what}: {node.value} is after the night ends")
            return at, "", 0
        harm = str(m["when"].plain_value())
        harms = [i.id for i in self.exercise.invariants]
        if harm not in harms:
            self.problem(m["when"].line, f"{what}: unknown harm '{harm}' (harms are "
                                         f"{', '.join(harms)})")
        after = 0
        if "after" in m:
            try:
                after = parse_duration(m["after"].plain_value())
            except ValueError as exc:
                self.problem(m["after"].line, f"{what}: after: {exc}")
        return None, harm, after

    def within(self, m: dict[str, Located], after: int, what: str) -> int:
        """`within`: the window whose spells of the harm count toward `after` (0: none, the
        harm's current spell only)."""
        node = m.get("within")
        if node is None:
            return 0
        if "after" not in m:
            self.problem(node.line, f'{what}: "within" counts "after" over a window; give '
                                    '"after" too (after: 3h, within: 4h)')
            return 0
        try:
            within = parse_duration(node.plain_value())
        except ValueError as exc:
            self.problem(node.line, f"{what}: within: {exc}")
            return 0
        if within < after:
            self.problem(node.line, f"{what}: within ({within} min) is shorter than after "
                                    f"({after} min): the harm could never hold that long in it")
            return 0
        return within
