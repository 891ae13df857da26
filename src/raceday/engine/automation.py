"""The exercise's automation: tasks falling due, run as their role (or handed to a player),
their transactions, retries and policies; and a player's tasks checked for done."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from raceday.engine.core import BROKEN_WORLD, DUE_TASK, PendingTask, SessionError
from raceday.engine.directives import stops_on_zero_rows
from raceday.engine.monitors import Monitors
from raceday.engine.statement_text import commits, controls
from raceday.exercise.model import Policy, PracticeChange, Task
from raceday.store.results import StatementResult
from raceday.store.transactions import NotControl, transaction_control
from raceday.transcript import events as ev
from raceday.transcript.wording import ZERO_ROWS_STOP

HISTORY_TIME_LIMIT_S = 60.0
"""How long one of the exercise's history statements (what the night left behind, run once
and never edited) may take: the players' limit (2 s headless) cut the outage's aftermath
short at 100,000 droplets on a loaded machine, and the night then went on as if it had never
happened. A minute still stops one a team's trigger made endless."""


AUTOMATION_WORK_STEPS = 50_000_000
"""How much work one of the automation's statements may do (SQLite's steps), the same on any
machine: the players' 2 s limit cut 56 statements short at 100,000 droplets on a loaded
machine, and the night moved by half an hour. The heaviest at 100,000 droplets takes 6.3
million (0.35 s here); a team's trigger that never ends is cut after about 2 s of it."""
AUTOMATION_TIME_LIMIT_S = 10.0
"""The wall-time limit behind the work budget (PostgreSQL counts no steps: its only one)."""


class Automation(Monitors):
    """Runs the automation's tasks and tells a player's tasks done."""

    def _render_context(self, task: Task, due: int) -> str:
        values = {"at": self.time_of(due), "now": self.clock_face}
        values.update({k: str(v) for k, v in self.memory.get(task.role, {}).items()})
        text = task.context or task.title
        try:
            return text.format_map(_Missing(values))
        except (ValueError, IndexError):
            return text

    def _due_task(self, task: Task, attempt: int) -> None:
        if task.id in self._stopped_tasks:
            return
        if task.id in self.held:  # the facilitator holds it: it runs when they release it
            self.held[task.id] = True
            return
        routine_handed = task.role in self.handed and task.every is not None
        if task.role in self.players and self.team_left_at is None and not routine_handed:
            if attempt == 0:
                for step in self._steps_of(task):
                    step.runs.append(len(self.events))
                self._remember_for_player(task)
                context = self._render_context(task, self.minute)
                before = self.pending.get(task.id)
                since = before.since if before is not None else self.minute
                self.pending[task.id] = PendingTask(task, self.minute, context, since)
                self._emit(ev.TaskDue(role=task.role, task=task.id, title=task.title,
                                      context=context, hint_available=bool(task.hint)))
            return
        self._run_task(task, attempt)

    def _remember_for_player(self, task: Task) -> None:
        """Keep what the automation would have read, so later tasks can say "you checked N"."""
        if not task.remember:
            return
        role = task.role
        remembered: set[str] = set()
        for statement_id in task.statements:
            sql = self.statement_sql[statement_id]
            for result in self.store.probe(role, [sql], self._params(role, sql)):
                self._remember(task, result, remembered)

    def _remember(self, task: Task, result: StatementResult, remembered: set[str]) -> None:
        """Keep the task's `remember` columns from the first row the run returns with them."""
        if not (task.remember and result.ok and result.columns and result.rows):
            return
        row = dict(zip(result.columns, result.rows[0], strict=False))
        for name in task.remember:
            if name in row and name not in remembered:
                self.memory[task.role][name] = row[name]
                remembered.add(name)

    def _run_task(self, task: Task, attempt: int) -> None:
        role = task.role
        if not task.statements:  # a player's task with nothing for the automation to do
            return
        if task.when:
            rows = self._check_rows(task.when, self._params(role, task.when))
            if not rows:
                self._emit(ev.Automation(role=role, task=task.id, title=task.title,
                                         outcome="skipped",
                                         note=task.skipped or "the automation is switched off"))
                return
        lost = self._txn_lost.get(role)
        if lost is not None and not self._begins(task):
            del self._txn_lost[role]
            self._emit(ev.Automation(role=role, task=task.id, title=task.title, outcome="skipped",
                                     note=f"its transaction was rolled back at {self.time_of(lost)}:"
                                          " nothing is left to go on with"))
            return
        for step in self._steps_of(task):
            step.runs.append(len(self.events))
        failed = False
        writes = zero_writes = changed = 0
        last_rowcount: int | None = None
        remembered: set[str] = set()
        refused: str | None = None  # why a held transaction was refused (shown with the run)
        change = task.change_at(self.minute)  # a practice night's fault in this run
        bound = self._practice_values(change) if change is not None else None
        carried_on = change.then if change is not None else ()
        for statement_id in task.statements + carried_on:
            if change is not None and statement_id in change.skip:
                continue
            sql = self.statement_sql[statement_id]
            in_transaction = self.store.holds(role) is not None or controls(sql)
            with (self.store.limit_raised_to(HISTORY_TIME_LIMIT_S)
                  if statement_id in self.history_statements else
                  self.store.automation_limits(AUTOMATION_WORK_STEPS, AUTOMATION_TIME_LIMIT_S)):
                results = self._automation_execute(role, sql, bound)
            lost = False  # a write of this statement changed no rows, and it says to stop then
            for result in results:
                if in_transaction and not result.ok and refused is None:
                    refused = result.error
                self._record_statement(role, result, automated=True, task=task.id,
                                       statement=statement_id)
                self._remember(task, result, remembered)
                if result.is_write and not result.columns:
                    last_rowcount = result.rowcount
                    writes += 1
                    zero_writes += 0 if result.rowcount else 1
                    changed += result.rowcount or 0
                    lost = lost or (result.ok and not result.rowcount
                                    and stops_on_zero_rows(sql))
                if not result.ok:
                    failed = True
                if result.writes or result.schema_changed or (
                        result.ok and commits(result.sql)):  # a held transaction's writes show now
                    self._check_world()
            if failed:
                break
            if lost:  # the statement's own rule: a lost conditional write ends the run
                if self.store.holds(role) is not None:
                    self._record_statement(role, self.store.rollback(role), automated=True,
                                           task=task.id, statement=statement_id)
                refused = (f"stopped: {statement_id} changed 0 rows, and its SQL says "
                           f"'{ZERO_ROWS_STOP}'")
                break
        for step in self._steps_of(task) if self.judge_world else ():
            sql = step.step.happened
            extra = {"failed": int(failed), "rowcount": last_rowcount}
            rows = self._check_rows(sql, self._params(role, sql, extra), fail_closed=True)
            if rows and step.happened_at is None:
                step.happened_at = self.minute
                step.happened_seq = len(self.events)
                self._emit(ev.RaceStep(step=step.step.id, title=step.step.title))
        zero = zero_writes > 0  # a write of the run changed 0 rows: it did not take
        outcome = "failed" if failed else "zero_rows" if zero else "applied"
        policy = task.on_error if failed else task.on_zero_rows if zero else None
        follow = self._follow_policy(task, attempt, policy)
        self._emit(ev.Automation(role=role, task=task.id, title=task.title, outcome=outcome,
                                 attempt=attempt, next=follow, changed=changed if writes else None,
                                 note=refused))

    def _practice_values(self, change: PracticeChange) -> dict[str, Any]:
        """What a practice night's run binds: its fixed values, and what its trusted queries
        read from the world now (None when a query returns nothing)."""
        values: dict[str, Any] = dict(change.bind)
        for name, sql in change.bind_sql:
            _columns, rows = self.store.app_query(sql)
            values[name] = rows[0][0] if rows and len(rows[0]) else None
        return values

    def _begins(self, task: Task) -> bool:
        """Whether the task's first statement begins a transaction."""
        try:
            control = transaction_control(self.statement_sql[task.statements[0]])
        except NotControl:
            return False
        return control is not None and control.word == "begin"

    def _automation_execute(self, role: str, sql: str,
                            bound: Mapping[str, Any] | None = None) -> list[StatementResult]:
        """An automation statement through the store: BEGIN/COMMIT/ROLLBACK hold or end the
        role's transaction (store.transactions), anything else runs as players' SQL does."""
        try:
            control = transaction_control(sql)
        except NotControl as exc:
            return [StatementResult(sql=sql.strip(), error=str(exc), error_kind="syntax")]
        if control is None:
            held = self.store.holds(role) is not None
            results = self.store.execute(role, sql, self._params(role, sql, bound))
            if held and self.store.holds(role) is None:  # an error rolled it back
                self._txn_lost[role] = self.minute
            return results
        if control.word == "begin":
            result = self.store.begin(role, control.isolation)
        elif self.store.holds(role) is None:  # as PostgreSQL does: nothing to end, no error
            result = StatementResult(sql=sql.strip())
        else:
            result = (self.store.commit if control.word == "commit" else self.store.rollback)(role)
        if result.ok and control.word == "begin":
            self._txn_lost.pop(role, None)
        elif not result.ok:
            self._txn_lost[role] = self.minute
        return [replace(result, sql=sql.strip())]

    def _follow_policy(self, task: Task, attempt: int, policy: Policy | None) -> str | None:
        if policy is None or policy is Policy.IGNORE:
            return None
        if policy is Policy.STOP:
            self._stopped_tasks.add(task.id)
            return "stopped"
        retry = task.retry
        if retry is None:
            return None
        when = self.minute + retry.every
        if retry.until is not None and when > retry.until:
            return "gave up"
        if retry.limit is not None and attempt + 1 > retry.limit:
            return "gave up"
        self._schedule(when, DUE_TASK, task, attempt + 1)
        return f"retry at {self.time_of(when)}"

    def _play_unattended(self) -> None:
        """A seat nobody is at (never taken, or played headless) never does its due story
        task: once the host's grace has passed the automation does it, as it would have when
        it fell due, recorded, so one empty seat never stalls the night or leaves its fault
        to a minute after the team has gone."""
        if self.team_left_at is not None:
            return
        for task_id, pending in list(self.pending.items()):
            grace = self.unattended.get(pending.task.role)
            since = pending.since if pending.since >= 0 else pending.due
            if grace is None or self.minute < since + grace or task_id in self.held:
                continue
            self.automate_task(task_id, f"nobody at the seat did it within {grace} min of "
                                        f"{self.time_of(since)}: the automation did it, as "
                                        "it would have")

    def automate_task(self, task_id: str, text: str = "") -> ev.Event:
        """The facilitator (or, after its grace, the host: `text` says why) has the
        automation do a player's due story task now, as the exercise's automation would have
        when it fell due: one quiet seat never stalls the night (or leaves the fault to a
        minute after the team has gone). Recorded."""
        pending = self.pending.get(task_id)
        if pending is None:
            raise SessionError(f"task {task_id!r} is not due for a player now")
        del self.pending[task_id]
        event = self._emit(ev.Facilitation(action="automate", to=(pending.task.role,),
                                           detail=task_id, text=text))
        self._run_task(pending.task, 0)
        self._check_world()
        return event

    def skip_step(self, task_id: str) -> ev.Event:
        """The facilitator lets the night go on without a seat's due story task: it is not
        played tonight. Recorded, and the judge knows: a fault only that step brings is
        scored as not played, never as kept away by the team's hands."""
        pending = self.pending.get(task_id)
        if pending is None:
            raise SessionError(f"task {task_id!r} is not due for a player now")
        del self.pending[task_id]
        self.facts.skipped_steps.append(task_id)
        return self._emit(ev.Facilitation(action="skip-step", to=(pending.task.role,),
                                          detail=task_id, text=pending.task.title))

    def _check_player_tasks(self) -> None:
        for task_id, pending in list(self.pending.items()):
            task = pending.task
            role = task.role
            for step in self._steps_of(task):
                sql = step.step.happened
                rows = self._check_rows(sql, self._params(role, sql, {"failed": 0}),
                                        fail_closed=True)
                if rows and step.happened_at is None:
                    step.happened_at = self.minute
                    step.happened_seq = len(self.events)
                    self._emit(ev.RaceStep(step=step.step.id, title=step.step.title,
                                           by_player=True))
            if task.done_when and BROKEN_WORLD not in self._violated:
                rows = self._check_rows(task.done_when, self._params(role, task.done_when))
                if rows:
                    del self.pending[task_id]
                    self.facts.tasks_done[task_id] = self.minute
                    self._emit(ev.TaskDone(role=role, task=task_id, title=task.title,
                                           points=task.points))


class _Missing(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
