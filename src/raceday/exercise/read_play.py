"""Reading what plays in a night: roles, statements, tasks and their retries, injects,
hints, the clock, the panel and the invariants."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from datetime import time as dtime

from raceday.exercise.fields import (
    DEFAULT_DATE,
    HINT_EARNS,
    HINT_SHOWN,
    MAX_EXPECT,
    NAME,
    OBJECTIVES,
)
from raceday.exercise.model import (
    PANEL_SHOWS,
    Clock,
    Hint,
    Inject,
    InjectKind,
    Invariant,
    PanelItem,
    Policy,
    Retry,
    Role,
    Statement,
    Task,
)
from raceday.exercise.reader import FieldReader, SqlUse, describe
from raceday.exercise.times import format_duration, parse_hhmm, parse_time
from raceday.exercise.yaml_lines import Located


class PlayReader(FieldReader):
    """Roles, statements, tasks, injects, hints, the clock, the panel, invariants."""

    def hints(self, top: dict[str, Located], tasks: tuple[Task, ...],
              ) -> tuple[tuple[Hint, ...], tuple[Task, ...]]:
        """The one list of hints. A hint `shown: with-task` is free and shown with its task
        to the player holding it (the task's `hint` in the model, where the old spelling,
        a task's own `hint:` key, puts it too); the others are revealed on request."""
        hints: list[Hint] = []
        with_task: dict[str, str] = {}
        for f, i, line in self.items(top, "hints", "hint", "hints"):
            what = f'hint "{i}"'
            hint = Hint(id=i, text=self.text(f, "text", what, empty=False),
                        task=self.ref(f, "task", what, "task"), cost=self.integer(f, "cost", what),
                        play=self._hint_play(f, what),
                        earns=self.choice(f, "earns", what, HINT_EARNS, "guards"), line=line)
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

    def _hint_play(self, f: dict[str, Located], what: str) -> str | None:
        """A hint's `play`: a play script inside the exercise's folder that exists."""
        name = self.text(f, "play", what) or None
        if name is None:
            return None
        path = (self.folder / name).resolve()
        if not path.is_relative_to(self.folder.resolve()) or not path.is_file():
            self.problem(f["play"].line, f'{what}: "play" names no play script in the '
                         f"exercise's folder ({name})")
            return None
        return name

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
                        f'clock: "date" must be a date "YYYY-MM-DD", not {describe(m["date"])}',
                    )
        zone = self.text(m, "zone", "clock")
        per_statement = self.integer(m, "minutes_per_statement", "clock", default=1)
        per_look = (self.integer(m, "minutes_per_look", "clock", default=per_statement)
                    if "minutes_per_look" in m else None)
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
            minutes_per_look=per_look,
        )

    def role(self, m: dict[str, Located], ident: str) -> Role:
        what = f'role "{ident}"'
        example = self.text(m, "example", what)
        if example.strip():
            self.sql.append(SqlUse(m["example"].line, what, "example", example, None))
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
            history=self.boolean(m, "history", what),
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
            if not NAME.fullmatch(name):
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
        the invariant whose fault brings it, `after` a duration once that fault begins, or
        in all within the last `within` when it need not be one spell)."""
        what = f'inject "{ident}"'
        at = (self.clock_time(m, "at", what) or 0) if "at" in m else None
        on_fault = self.ref(m, "on_fault", what, "invariant") or ""
        after = self.duration(m, "after", what) or 0
        within = self.duration(m, "within", what, positive=True) or 0
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
        if "within" in m and ("after" not in m or "on_fault" not in m):
            self.problem(m["within"].line, f'{what}: "within" is the window in which the fault '
                         f'of "on_fault" must have held for "after"; it needs both')
        elif within and within < after:
            self.problem(m["within"].line, f'{what}: "within" {format_duration(within)} is '
                         f'shorter than "after" {format_duration(after)}: the fault could never '
                         f"hold that long in it")
        kind = self.enum(m, "kind", what, InjectKind, InjectKind.MESSAGE)
        if kind is InjectKind.REVEAL and "on_fault" in m and "at" not in m:
            self.problem(m["on_fault"].line, f"{what}: a reveal tells that night's history, "
                         f'whatever the team does: it arrives at a time ("at"), not "on_fault"')
            at = 0
        expect = self.texts(m, "expect", what)
        for item in m["expect"].value if "expect" in m and isinstance(m["expect"].value, list) \
                else ():
            if isinstance(item.value, str) and (len(item.value) > MAX_EXPECT
                                                or "\n" in item.value.strip()):
                self.problem(item.line, f'{what}: each of "expect" is one line of at most '
                             f"{MAX_EXPECT} characters (what the team is expected to do or say)")
        objective = self.choice(m, "objective", what, OBJECTIVES, "")
        if "objective" in m and not expect:
            self.problem(m["objective"].line, f'{what}: "objective" names the objective the '
                         'marks of "expect" rate; give "expect" too')
        return Inject(
            expect=expect,
            objective=objective,
            id=ident,
            at=at,
            on_fault=on_fault if at is None else "",
            after=after,
            within=within if at is None else 0,
            title=self.text(m, "title", what, empty=False),
            text=self.text(m, "text", what),
            kind=kind,
            to=self.refs_list(m, "to", what, "role"),
            source=self.cite(m, "source", what),
            phase=self.cite(m, "phase", what),
            event_at=(self._hhmm(m["event_at"], "event_at", what) or "") if "event_at" in m else "",
            line=line,
        )

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
