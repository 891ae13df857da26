"""The exercise's own checks of the world: the truth its checks rest on, the invariants
(faults and their clearing), milestones; each statement recorded and what it changed, so
a trusted read is answered again only when what it read was written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from raceday.engine.core import BROKEN_WORLD, SessionCore
from raceday.engine.statement_text import (
    changes_schema,
    commits,
    controls,
    params_key,
    reads_only,
    short_rows,
    steady,
)
from raceday.errors import MachineError, RacedayError
from raceday.exercise.customers import with_tables
from raceday.exercise.model import Invariant
from raceday.store.results import StatementResult
from raceday.transcript import events as ev


class WorldChecks(SessionCore):
    """Checks the world after every change; keeps trusted answers while they still hold."""

    def _check_rows(self, sql: str, params: Mapping[str, Any] | None = None, *,
                    fail_closed: bool = False) -> list[Any]:
        """Rows of one of the exercise's own checks.

        A check the team's schema broke is reported once. A check whose rows mean harm (an
        invariant, a race step) fails closed: it reads as the harm being there, with the error
        as its row. Any other check (a milestone, a kill switch, a task done) reads as no rows.
        """
        try:
            return self.world_query(sql, params)[1]
        except MachineError:
            raise
        except RacedayError as exc:
            if sql not in self._broken_checks:
                self._broken_checks.add(sql)
                self._emit(ev.CheckFailed(sql=sql, error=str(exc), fail_closed=fail_closed))
            return [(f"the check could not run: {exc}",)] if fail_closed else []

    def world_query(self, sql: str, params: Mapping[str, Any] | None = None,
                    ) -> tuple[tuple[str, ...], list[Any]]:
        """A trusted read of the world (an exercise's check, the world panel), as the
        store's `app_query` gives it and raises; the answer is kept while none of the tables
        it read has been written since, nor the schema changed (`_check_key`)."""
        if not reads_only(sql):  # a check that may write (WITH ... DELETE)
            self._unnamed_writes += 1
        key = self._check_key(sql, params)
        asked = params_key(params) if key is not None else ()
        if self._still_kept(sql, asked, key):
            kept = self._check_kept[sql]
            return kept[2], list(kept[3])
        self._check_kept.pop(sql, None)
        answer = self._asked_ahead.pop(sql, None) if params is None else None
        if isinstance(answer, RacedayError):
            raise answer
        columns, rows = answer if answer is not None else self.store.app_query(
            self._trusted(sql), params)
        if key is not None:
            self._check_kept[sql] = (asked, key, columns, list(rows))
        return columns, list(rows)

    def _trusted(self, sql: str) -> str:
        """`sql` as raceday runs it: each table of the customers' view it names given as a
        WITH table of the rows raceday keeps, which nothing in the world can shadow."""
        if not self.exercise.customers:
            return sql
        done = self._trusted_sql.get(sql)
        if done is None:
            done = self._trusted_sql[sql] = with_tables(sql, self.exercise.customers)
        return done

    def _still_kept(self, sql: str, asked: tuple[Any, ...], key: tuple[int, ...] | None) -> bool:
        """Whether the answer kept for `sql` is the one asking again would give (`asked`: its
        parameters' `params_key`; `key`: `_check_key` now)."""
        kept = self._check_kept.get(sql)
        return key is not None and kept is not None and kept[1] == key and kept[0] == asked

    def _check_key(self, sql: str, params: Mapping[str, Any] | None) -> tuple[int, ...] | None:
        """What a check's answer depends on (`_world_key` of the tables it reads), or None
        when it may change with nothing written (it writes, reads the clock, calls random(),
        or the store cannot say what it reads): then it runs every time it is asked. Its
        answer is kept only while the same key holds, so it is the answer a run would give."""
        if not self.store.writes_complete or not reads_only(sql) or not steady(sql):
            return None
        # what a query reads follows the schema
        stamp = (self._schema_epoch, self._commits, self.store.catalog_writes)
        known = self._check_reads.get(sql)
        if known is None or known[0] != stamp:
            read = self.store.reads_of(self._trusted(sql), params)
            known = self._check_reads[sql] = (
                stamp, None if read is None else tuple(sorted(read)))
        tables = known[1]
        return None if tables is None else self._world_key(tables)

    def _world_key(self, tables: Sequence[str]) -> tuple[int, ...]:
        """What a read of `tables` depends on: the schema, the writes to each of them, and the
        changes no table was named for."""
        writes = self._table_writes
        return (self._schema_epoch, self.store.catalog_writes, self._unnamed_writes,
                *(writes.get(t, 0) for t in tables))

    def _record_statement(self, role: str, result: StatementResult, *, automated: bool,
                          task: str | None = None, statement: str | None = None) -> None:
        if result.error_kind == "machine":  # the world cannot be written: play cannot go on
            raise MachineError(result.error or "the world cannot be written")  # (not recorded)
        self._asked_ahead.clear()  # answered before this statement: stale now
        break_glass = bool(result.break_glass)  # decided by the store (StoreBase._with_break_glass)
        self._emit(ev.Statement(
            role=role,
            sql=result.sql,
            ok=result.ok,
            rowcount=result.rowcount,
            rows=len(result.rows) if result.columns else None,
            truncated=result.truncated,
            error=result.error,
            error_kind=result.error_kind,
            elapsed_ms=round(result.elapsed_ms, 3),
            automated=automated,
            task=task or None,
            statement=statement if task else None,
            break_glass=break_glass,
            schema_changed=result.schema_changed,
            writes=tuple(result.writes),
            made_writes=tuple(result.made_writes) if result.ok else (),
        ))
        if result.schema_changed:
            self._schema_epoch += 1
        if not automated and not result.ok and changes_schema(result.sql):
            head = " ".join(result.sql.split()[:4])
            self.facts.failed_schema.append((self.minute, head, result.error or ""))
        if automated and result.ok and commits(result.sql):
            # what the transaction wrote shows to other connections only now: every answer
            # kept while it was open (a check's, a monitor's) is stale, and so is what a
            # query reads if it changed the schema
            self._commits += 1
            self._unnamed_writes += 1
        if result.writes or result.schema_changed or (result.rowcount or 0) > 0:
            self._world_changes += 1
        # a failed statement may have kept some rows (OR FAIL), where the store says
        # (`kept_in`): the answers that read elsewhere still hold (the flagship's refused
        # clean-ups had every check asked again)
        placed = result.writes if result.ok else result.kept_in or ()
        for table in placed:
            table = table.lower()
            self._table_writes[table] = self._table_writes.get(table, 0) + 1
        if (not result.ok and result.kept_in is None) or (
                not result.writes and (result.rowcount or 0) > 0):
            self._unnamed_writes += 1  # changed, where? (a failure no store could place)
        if result.ok and result.writes and not automated:
            self.facts.player_writes.append((self.minute, role, tuple(result.writes)))
            self._note_forged(result.writes)
        if result.ok and result.made_writes:  # the team's triggers, in anyone's statement
            for made in result.made_writes:
                self.facts.made_writes.setdefault(made, self.minute)
            self._note_forged(table for _trigger, table in result.made_writes)
        if result.ok and automated and self._violated_since:
            self._fault_writes.update(t.lower() for t in result.writes)
        self._note_transaction(role, result, automated=automated)

    def _note_transaction(self, role: str, result: StatementResult, *, automated: bool) -> None:
        """What an automated role's transaction wrote, kept until its COMMIT: a fault that
        shows at the COMMIT (PostgreSQL's held transactions) began with all of it, so its
        job's own log written before the COMMIT is written since the fault (`_set_violation`),
        as it is where each statement commits on its own (SQLite's isolation lab)."""
        self._committed_writes = set()
        if not automated or not result.ok:
            return
        written = self._open_writes.setdefault(role, set())
        written.update(t.lower() for t in result.writes)
        if commits(result.sql):
            self._committed_writes = self._open_writes.pop(role)
        elif controls(result.sql):  # BEGIN or ROLLBACK: nothing of before will show
            self._open_writes[role] = set()

    def _note_forged(self, tables: Iterable[str]) -> None:
        """Remember the first minute anything but the service wrote a table only the service
        may bring back: from then on every harm of the night counts as present (`_check_each`),
        whatever the rows say, so hiding a harm that way keeps nothing from the customers."""
        recovery = self.exercise.scoring.recovery
        if self._forged_at is None and recovery is not None and recovery.forged and any(
                t.lower() in recovery.forged for t in tables):
            self._forged_at = self.minute

    def _check_world(self, *, if_changed: bool = False) -> None:
        """Check the truth, invariants and milestones. They take no parameters, so their
        answers can only change when the world does; `if_changed` skips the check when nothing
        was written."""
        if not (self.judge_world or self.track_harms) or (
                if_changed and self._checked_at == self._world_changes):
            return
        self._checked_at = self._world_changes
        self._ask_ahead()
        try:
            self._check_each()
        finally:
            self._asked_ahead.clear()  # answers for this round only

    def _ask_ahead(self) -> None:
        """The round's checks (each harm's, each milestone still to come) asked of the store
        at once, where that is cheaper than one by one (a server's round trips); `world_query`
        takes their answers. Only what it would ask: not one whose kept answer still holds,
        nor one that may write, nor one known to fail (asked alone, it reports itself)."""
        if not self.store.asks_together:
            return
        wanted = [invariant.went_back or invariant.sql for invariant in self.exercise.invariants
                  if self.judge_world or invariant.outage]
        if self.judge_world:
            wanted += [m.sql for m in self.exercise.milestones
                       if m.id not in self.facts.milestones]
        ask = [sql for sql in dict.fromkeys(wanted)
               if sql not in self._broken_checks and reads_only(sql)
               and not self._still_kept(sql, (), self._check_key(sql, None))]
        if len(ask) > 1:
            self._asked_ahead = dict(zip(
                ask, self.store.app_queries([self._trusted(sql) for sql in ask]), strict=True))

    def _check_each(self) -> None:
        forged = self._forged_at is not None
        if not self.judge_world:
            for invariant in self.exercise.invariants:
                if invariant.outage:
                    self.harm_clock.observe(invariant.id, self.minute,
                                            forged or bool(self._harm_rows(invariant)))
            return
        truth = self.exercise.truth
        if truth is not None:
            problems = self._truth_problems()
            self._set_violation(BROKEN_WORLD, "The world is broken: " + "; ".join(problems)
                                if problems else "The world is broken",
                                [[p] for p in problems])
        for invariant in self.exercise.invariants:
            rows = self._harm_rows(invariant)
            self.harm_clock.observe(invariant.id, self.minute, forged or bool(rows))
            if invariant.outage:
                self._set_violation(invariant.id, invariant.fault, rows)
        for milestone in self.exercise.milestones:
            if milestone.id in self.facts.milestones:
                continue
            if milestone.again and self.facts.fault_started is None:
                continue  # it can only come back once the fault has begun
            rows = self._check_rows(milestone.sql)
            if milestone.again and milestone.id not in self._gone:
                if not rows:
                    self._gone.add(milestone.id)  # gone since the fault: now it can come back
                continue
            if rows:
                self.facts.milestones[milestone.id] = self.minute
                self._emit(ev.Milestone(id=milestone.id, label=milestone.label))

    def _harm_rows(self, invariant: Invariant) -> list[Any]:
        """The rows that show the invariant's harm now; a `went_back` harm compares each
        key's value with the highest raceday has seen it have tonight."""
        if not invariant.went_back:
            return self._check_rows(invariant.sql, fail_closed=True)
        failed = len(self._broken_checks)
        rows = self._check_rows(invariant.went_back, fail_closed=True)
        if len(self._broken_checks) != failed or (
                rows and len(rows[0]) == 1 and invariant.went_back in self._broken_checks):
            return rows  # the check could not run: the harm reads as present (fail closed)
        return self._history.went_back(invariant.id, rows)

    def _set_violation(self, ident: str, fault: str, rows: Sequence[Any]) -> None:
        if rows and ident not in self._violated:
            if not self._violated:
                self.facts.outages.append([self.minute, None])
            self._violated.add(ident)
            self._ever_violated.add(ident)
            self._violated_since.setdefault(ident, len(self.events))
            self._fault_writes |= self._committed_writes  # shown by the same COMMIT
            relapse = self.facts.restored_at is not None
            if self.facts.fault_started is None:
                self.facts.fault_started = self.minute
                self.facts.fault_invariant = ident
                self.facts.fault_text = fault
                acting = self._acting
                if acting is not None and not self.exercise.role(acting[0]).automated:
                    self.facts.caused_by = acting
            if relapse:
                self.facts.relapses.append(self.minute)
            objects = tuple(str(r[0]) for r in rows) if ident == BROKEN_WORLD else ()
            self._faults[ident] = fault
            self._emit(ev.Fault(invariant=ident, fault=fault, relapse=relapse, rows=short_rows(rows),
                                objects=objects))
            if self._on_fault:
                self._fault_began(ident)
        elif not rows and ident in self._violated:
            self._violated.discard(ident)
            self._emit(ev.InvariantClear(invariant=ident, fault=fault))
            if not self._violated:
                self.facts.restored_at = self.minute
                self.facts.restores.append(self.minute)
                if self.facts.outages:
                    self.facts.outages[-1][1] = self.minute
                self._emit(ev.Restored(note="no invariant is violated any more"))

    def _record_truth(self) -> None:
        """Remember the columns each truth table has in the world as the exercise built it."""
        truth = self.exercise.truth
        if truth is None:
            return
        for table in truth.tables:
            try:
                _, rows = self.store.app_query(
                    "SELECT name FROM pragma_table_info(:t)", {"t": table})
            except MachineError:
                raise
            except RacedayError:
                rows = []
            self._truth_columns[table] = tuple(str(r[0]) for r in rows)
        for view in truth.views:
            try:
                _, rows = self.store.app_query(
                    "SELECT sql FROM sqlite_master WHERE type = 'view' AND lower(name) = :v",
                    {"v": view.name.lower()})
            except MachineError:
                raise
            except RacedayError:
                rows = []
            self._truth_view_sql[view.name.lower()] = str(rows[0][0]) if rows else None

    def _truth_problems(self) -> list[str]:
        """What the team did to the objects the checks rest on; [] when all is as it should be.

        The answer is kept until the schema changes again when it cannot change before: a
        slow object (one time-out, not one a minute), or views that are still the exercise's
        own (only a view the team redefined is compared with its definition row by row, after
        every change to the tables either reads: `world_query`)."""
        truth = self.exercise.truth
        if truth is None:
            return []
        if self._truth_cache is not None and self._truth_cache[0] == self._schema_epoch:
            return self._truth_cache[1]
        try:
            _, rows = self.store.app_query(
                "SELECT lower(name), type, sql FROM sqlite_master WHERE type IN ('table', 'view')")
        except MachineError:
            raise
        except RacedayError as exc:
            return [f"the world's schema cannot be read ({exc})"]
        kinds = {str(r[0]): str(r[1]) for r in rows}
        sqls = {str(r[0]): r[2] for r in rows}
        problems: list[str] = []
        slow = False
        static = True
        for table in truth.tables:
            kind = kinds.get(table.lower())
            if kind is None:
                problems.append(f"table {table} is gone (dropped or renamed)")
                continue
            if kind != "table":
                problems.append(f"table {table} was replaced by a {kind}")
                continue
            try:
                _, cols = self.store.app_query(
                    "SELECT name FROM pragma_table_info(:t)", {"t": table})
            except MachineError:
                raise
            except RacedayError as exc:
                problems.append(f"table {table} cannot be read ({exc})")
                continue
            have = {str(c[0]).lower() for c in cols}
            missing = [c for c in self._truth_columns.get(table, ()) if c.lower() not in have]
            if missing:
                problems.append(f"table {table} lost its column{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(missing)}")
        for view in truth.views:
            kind = kinds.get(view.name.lower())
            if kind is None:
                problems.append(f"view {view.name} is gone (dropped or renamed)")
                continue
            if kind != "view":
                problems.append(f"view {view.name} was replaced by a {kind}")
                continue
            original = self._truth_view_sql.get(view.name.lower())
            if original is not None and sqls.get(view.name.lower()) == original:
                continue  # the exercise's own view, over tables checked above
            static = False
            name = view.name.replace('"', '""')
            same = (f'SELECT (SELECT count(*) FROM "{name}") = (SELECT count(*) FROM ({view.sql})) '
                    f'AND NOT EXISTS (SELECT * FROM "{name}" EXCEPT SELECT * FROM ({view.sql})) '
                    f'AND NOT EXISTS (SELECT * FROM ({view.sql}) EXCEPT SELECT * FROM "{name}")')
            try:  # kept while the view's tables are not written (a 10k world: a scan each)
                _, answer = self.world_query(same)
            except MachineError:
                raise
            except RacedayError as exc:
                if getattr(exc, "kind", "") == "timeout":
                    slow = True
                    problems.append(f"view {view.name} is too slow to read (over the time limit)")
                else:
                    problems.append(f"view {view.name} cannot be checked ({exc})")
                continue
            if not answer or not answer[0][0]:
                problems.append(f"view {view.name} no longer gives what its definition says "
                                "(it was replaced)")
        self._truth_cache = (self._schema_epoch, problems) if slow or static else None
        return problems
