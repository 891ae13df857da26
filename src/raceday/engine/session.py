"""A session: one exercise played from start to score.

The session turns actions (a statement, a wait, a declaration) into events. It owns no
timers and no threads: the caller says what time it is (`advance_to`) or spends time by
acting (the `turns` pace). Every event is written to the transcript before it is returned
or shown to anyone.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, assert_never, overload

from raceday.engine.actions import (
    Action,
    AskReplay,
    Declare,
    EditStatement,
    RemoveMonitor,
    RevealHint,
    RunSql,
    SaveMonitor,
    Wait,
)
from raceday.engine.automation import Automation
from raceday.engine.clock import Pace
from raceday.engine.core import (
    BROKEN_WORLD,
    DUE_INJECT,
    DUE_TASK,
    HANDED,
    MAX_ACTIONS_PER_MINUTE,
    MAX_MONITORS,
    E,
    Monitor,
    PendingTask,
    SessionError,
)
from raceday.engine.customers import with_customers_read
from raceday.engine.directives import directive_problem
from raceday.engine.looks import declared_why, short_sql
from raceday.engine.statement_text import param_names
from raceday.engine.unknown_night import DrawnNight, judge_as_drawn, night_revealed
from raceday.errors import MachineError
from raceday.exercise.model import MAX_OWN_WORDS, OWN_WORDS, Exercise, Inject, InjectKind, Task
from raceday.inert import has_controls
from raceday.judge.detection import judge_diagnoses, sort_alerts
from raceday.judge.facts import Look, step_statuses
from raceday.judge.score import Score, replay_guards, score_session
from raceday.judge.tasks import unproven_tasks
from raceday.store import end_world
from raceday.store.protocol import Store
from raceday.store.results import StatementResult
from raceday.store.transactions import NotControl, transaction_control
from raceday.transcript import events as ev
from raceday.transcript.events import Event
from raceday.transcript.log import EventLog, TranscriptWriteError

__all__ = ["BROKEN_WORLD", "HANDED", "MAX_ACTIONS_PER_MINUTE", "MAX_MONITORS", "Monitor",
           "PendingTask", "Session", "SessionError"]

# What callers around the session may record: nothing that decides a score.
Performed = list[StatementResult] | Event | None
"""What an action gave: a submission's results, else the event it recorded (None: a monitor
removed, a wait: what they did is in the events that follow)."""

_OUTSIDE_EVENTS = (ev.Cast, ev.Facilitation, ev.SeatJoined, ev.SeatLeft, ev.SeatCommand,
                   ev.CommandRefused, ev.SessionResumed, ev.SeatReady)


class Session(Automation):
    """Plays one exercise. Build it with `open_session`; drive it with the public methods."""

    def __init__(self, exercise: Exercise, store: Store, log: EventLog, players: Sequence[str],
                 pace: Pace = Pace.TURNS, night: DrawnNight | None = None) -> None:
        # the customers' view is read at load; here for an exercise made in code (the core
        # stays clear of the world's builder, which the team's seats may not reach)
        super().__init__(with_customers_read(exercise), store, log, players, pace, night)

    def start(self) -> Event:
        """Record the start and fire whatever is due at the first minute."""
        ex = self.exercise
        event = self._emit(ev.SessionStart(
            schema=ev.SCHEMA_VERSION,
            exercise=ex.id,
            title=ex.title,
            players=self.players,
            automated=tuple(r for r in ex.role_ids if r not in self.players),
            pace=self.pace.value,
            clock_start=ex.clock.start.isoformat(),
            zone=ex.clock.zone,
            summary=ex.summary,
            roles={r.id: r.name for r in ex.roles},
            event_timeline=tuple(
                ev.Reveal(at=self.time_of(i.at), title=i.title, source=i.source or "",
                          phase=i.phase or None, event_at=i.event_at or None)
                for i in ex.injects if i.kind.value == "reveal" and i.at is not None
            ),
            event_figures={
                "detection_minutes": d.event_minutes if (d := ex.scoring.detection) else None,
                "restore_minutes": r.event_minutes if (r := ex.scoring.recovery) else None,
            },
            findings={f.id: ev.FindingInfo(text=f.text, correct=f.correct) for f in ex.findings},
            length_minutes=self.end_minute,
            **_debrief_content(ex),
            origin=self.origin,
            unknown=self.night.seed if self.night is not None else None,
        ))
        self._record_truth()
        self._check_world()
        self._fire_due(self.minute)
        self._minute_checks()
        return event

    # -- time ----------------------------------------------------------------------------

    def advance_to(self, minute: int) -> None:
        """Let the clock run to `minute`, firing everything due on the way, in order."""
        target = min(minute, self.end_minute)
        while self.minute < target and not self.ended:
            self.minute += 1
            self._fire_due(self.minute)
            self._minute_checks()
            if self.unattended:
                self._play_unattended()
            if self.minute >= self.end_minute and not self.timeline_over:
                self.timeline_over = True
                self._emit(ev.TimelineEnd(note="the exercise's timeline has run out"))

    def wait(self, until: int | None = None) -> None:
        """Run to a time, or (None) to the next inject anyone will see, or the end. An inject
        a fault brings has no time until the fault begins: waiting for the next inject stops
        at the first that arrives, one brought by a fault on the way included."""
        if until is not None:
            self._emit(ev.Wait(until=self.time_of(min(until, self.end_minute))))
            self.advance_to(until)
            return
        bound = self._next_inject_bound()
        self._emit(ev.Wait(until=self.time_of(bound), next_inject=True))
        self.run_to_next_inject(bound)

    def _next_inject_bound(self) -> int:
        upcoming = self.next_inject_minute()
        return self.end_minute if upcoming is None else min(upcoming, self.end_minute)

    def run_to_next_inject(self, bound: int | None = None) -> None:
        """Let the clock run to the next inject anyone will see: the next timed one, or
        sooner the first a fault brings on the way (or to the end). Records nothing itself:
        `wait` records the wait."""
        bound = self._next_inject_bound() if bound is None else bound
        heard = self.injects_heard
        while self.minute < bound and not self.ended and self.injects_heard == heard:
            self.advance_to(self.minute + 1)

    def next_task_due(self, roles: Sequence[str]) -> tuple[int | None, Task | None]:
        """The next minute a task of one of `roles` falls due, and that task (the normal
        night's own tasks never fall due tonight; a handed-over role's routine tasks are the
        automation's)."""
        normal = set(self.live.replay.normal) if self.live.replay else set()
        best: tuple[int | None, Task | None] = (None, None)
        for task in self.live.tasks:
            if task.role not in roles or task.id in normal or task.id in self._stopped_tasks:
                continue
            if task.role in self.handed and task.every is not None:
                continue
            later = [m for m in task.times() if m > self.minute]
            if later and (best[0] is None or later[0] < best[0]):
                best = (later[0], task)
        return best

    def next_inject_minute(self) -> int | None:
        later = [d.minute for d in self._agenda if d.phase == DUE_INJECT and d.minute > self.minute]
        return min(later) if later else None

    def _spend(self, *, look: bool = False) -> None:
        if self.pace is Pace.TURNS:
            clock = self.exercise.clock
            cost = (clock.minutes_per_look if look and clock.minutes_per_look is not None
                    else clock.minutes_per_statement)
            if cost:
                self.advance_to(self.minute + cost)

    def _fire_due(self, minute: int) -> None:
        while self._agenda and self._agenda[0].minute <= minute:
            due = heapq.heappop(self._agenda)
            if due.phase == DUE_INJECT:
                if not due.item.on_fault:
                    self._send(due.item)
                elif self._still(due.item, due.attempt):
                    self._fault_inject_due(due.item, due.attempt)
            else:
                self._due_task(due.item, due.attempt)

    def execute(self, role: str, sql: str) -> list[StatementResult]:
        """Run a player's submission as `role`; every statement becomes an event."""
        self._require_player(role)
        flood = self._flooded("sql", role)
        if flood is not None:
            return [StatementResult(sql=sql[:200], error=flood.error, error_kind="refused")]
        results = self.store.execute(role, sql)
        self._submitted(role, results)
        return results

    def _submitted(self, role: str, results: Sequence[StatementResult]) -> None:
        if not results:
            return
        for i, result in enumerate(results):
            self._record_statement(role, result, automated=False)
            # asked again at once only while nothing after it in the submission wrote
            self._note_reads(result, role, recheck=not any(
                r.writes or r.schema_changed for r in results[i + 1:]))
        wrote = next((r for r in results if r.ok and (r.writes or r.schema_changed)), None)
        self._acting = (role, wrote.sql) if wrote is not None else None
        try:
            self._check_world()
        finally:
            self._acting = None
        self._check_player_tasks()
        if any(r.ok for r in results):  # a typo, a refusal or a cancel did nothing: no time
            looked = not any(r.writes or r.schema_changed or r.is_write for r in results)
            self._spend(look=looked)

    # -- one door for a player's actions ---------------------------------------------------

    @overload
    def perform(self, action: RunSql) -> list[StatementResult]: ...

    @overload
    def perform(self, action: SaveMonitor | Declare | RevealHint) -> Event: ...

    @overload
    def perform(self, action: EditStatement) -> ev.Edit | ev.Refused: ...

    @overload
    def perform(self, action: AskReplay) -> ev.Replay: ...

    @overload
    def perform(self, action: RemoveMonitor) -> Event | None: ...

    @overload
    def perform(self, action: Wait) -> None: ...

    @overload
    def perform(self, action: Action) -> Performed: ...

    def perform(self, action: Action) -> Performed:
        """Do a player's action, whichever way it came (the play screen, a team seat, a
        script, `raceday resume`): each path builds the same value and comes through here."""
        if isinstance(action, RunSql):
            return self.execute(action.role, action.sql)
        if isinstance(action, SaveMonitor):
            return self.save_monitor(action.role, action.name, action.sql)
        if isinstance(action, RemoveMonitor):
            return self.remove_monitor(action.name, action.role)
        if isinstance(action, Declare):
            if action.finding == OWN_WORDS:
                return self.declare_own_words(action.role, action.text)
            return self.declare(action.role, action.finding)
        if isinstance(action, EditStatement):
            return self.edit_statement(action.role, action.statement, action.sql)
        if isinstance(action, RevealHint):
            return self.reveal_hint(action.hint, action.role, action.to)
        if isinstance(action, AskReplay):
            return self.replay()
        if isinstance(action, Wait):
            self.wait(action.until)
            return None
        assert_never(action)

    # -- resume: the recorded actions done again ---------------------------------------------

    def redo_submission(self, role: str, recorded: Sequence[ev.Statement]) -> None:
        """Do a recorded submission again (`raceday resume`): the statements that ran are run
        again, one by one; one that failed changed nothing in the world (SQLite takes a
        failed statement back whole), so its outcome is taken as recorded."""
        self._require_player(role)
        self._flooded("sql", role)  # counted as it was (it was under the cap then)
        results: list[StatementResult] = []
        for statement in recorded:
            if statement.ok:
                again = self.store.execute(role, statement.sql)
                results.extend(again[:1])
                if not again or not again[0].ok:
                    break  # the world differs from the one recorded: the caller sees it
            else:
                results.append(StatementResult(
                    sql=statement.sql, rowcount=statement.rowcount, truncated=statement.truncated,
                    elapsed_ms=statement.elapsed_ms, error=statement.error,
                    error_kind=statement.error_kind, writes=statement.writes,
                    schema_changed=statement.schema_changed))
        self._submitted(role, results)

    def pass_through(self, event: ev.Refused | ev.Replay) -> Event:
        """Record again an event whose cause is not done again while a session is resumed:
        a refusal (it changed nothing) or a replay asked for during play (its result is
        kept as it was; the replay's worlds are gone)."""
        if isinstance(event, ev.Replay) and event.result is not None:
            self.facts.replay = event.result
        if isinstance(event, ev.Refused) and "actions in one simulated minute" in event.error:
            self._flood_noted = self.minute
        return self._emit(event)

    def declare(self, role: str, finding_id: str) -> Event:
        """Declare a finding; judged at once against the world as it is now.

        A correct finding counts only when its evidence is present (the fault it names is
        there now, or the race step it names has happened): otherwise it is a false alarm.
        The same finding declared again counts once.
        """
        self._require_player(role)
        flood = self._flooded("declare", role)
        if flood is not None:
            return flood
        finding = self.exercise.finding(finding_id)
        if finding is None:
            known = ", ".join(f.id for f in self.exercise.findings)
            return self._emit(ev.Refused(
                role=role,
                action="declare",
                error=f"no finding {finding_id!r}; findings are {known}",
            ))
        self._check_world(if_changed=True)
        credited = {f for _, f in self.facts.confirmed}
        look: Look | None = None
        unshown = ""
        if not finding.correct:
            verdict = "wrong"
        elif finding.id in credited:
            verdict = "repeat"
        elif not self._evidence_present(finding.evidence):
            verdict = "false_alarm"
        else:
            look, unshown = self._shown_by(finding.evidence)
            verdict = "unseen" if unshown else "confirmed"
            if unshown:
                self.facts.unseen.append((self.minute, finding.id, unshown))
        event = self._emit(ev.Declaration(
            role=role, finding=finding.id, text=finding.text, correct=finding.correct,
            verdict=verdict, why=declared_why(
                verdict, f"{self.time_of(look.minute)} ({short_sql(look.sql)})" if look else "",
                unshown, d.wrong_finding_cost if (d := self.exercise.scoring.detection) else 0,
                replayed=self.exercise.replay is not None),
        ))
        self.facts.declarations.append((self.minute, finding.id, finding.correct))
        if verdict == "confirmed":
            self.facts.confirmed.append((self.minute, finding.id))
            self._remember_looks(finding.id, finding.evidence)
            self._detect(f"declared '{finding.text}'")
        elif verdict == "repeat" and not self._shown_by(finding.evidence)[1]:
            # a later look may be the real one, should the first be taken back at the end
            self._remember_looks(finding.id, finding.evidence)
        elif verdict == "false_alarm":
            self.facts.false_alarms.append((self.minute, finding.id))
        self._spend()
        return event

    def declare_own_words(self, role: str, text: str) -> Event:
        """Declare a finding in the player's own words. The judge cannot check words, so it is
        recorded to be ruled (verdict "to_rule"): the facilitator's ruling decides whether it
        counts (right), costs (wrong) or neither (partly, or never ruled)."""
        self._require_player(role)
        flood = self._flooded("declare", role)
        if flood is not None:
            return flood
        words = " ".join(text.split())
        problem = ("a finding in your own words needs words" if not words else
                   f"a finding in your own words is at most {MAX_OWN_WORDS} characters, not "
                   f"{len(words)}" if len(words) > MAX_OWN_WORDS else
                   "a finding in your own words is one line of printable characters"
                   if has_controls(words, one_line=True) else "")
        if problem:
            return self._emit(ev.Refused(role=role, action="declare", error=problem))
        self._check_world(if_changed=True)
        cost = d.wrong_finding_cost if (d := self.exercise.scoring.detection) else 0
        event = self._emit(ev.Declaration(
            role=role, finding=OWN_WORDS, text=words, correct=False, verdict="to_rule",
            why=declared_why("to_rule", "", "", cost, replayed=False)))
        self.facts.own_words.append((self.minute, words))
        self._spend()
        return event

    def bound_parameters(self, role: str) -> tuple[str, ...]:
        """The named parameters the automation binds for `role`'s statements."""
        names = ["now", "now_hhmm"]
        for task in self.exercise.tasks:
            if task.role == role:
                names.extend(n for n in task.remember if n not in names)
        return tuple(names)

    def edit_statement(self, role: str, statement_id: str, sql: str) -> ev.Edit | ev.Refused:
        """Replace a named automation statement for the rest of the session."""
        self._require_player(role)
        flood = self._flooded("edit", role)
        if flood is not None:
            return flood
        if statement_id not in self.statement_sql:
            known = ", ".join(self.statement_sql)
            return self._emit(ev.Refused(
                role=role,
                action="edit",
                statement=statement_id,
                error=f"no automation statement {statement_id!r}; statements are {known}",
            ))
        if not self.exercise.role(role).schema:
            return self._emit(ev.Refused(
                role=role,
                action="edit",
                statement=statement_id,
                error=f"role {role} may not edit the automation (it may not change the schema)",
            ))
        if self.exercise.statement(statement_id).history:
            return self._emit(ev.Refused(
                role=role, action="edit", statement=statement_id,
                error=f"{statement_id} is what the night left behind, not automation: it "
                      "cannot be edited (recover from it instead)"))
        if not sql.strip():
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error="the new SQL is empty"))
        runs_as = self.exercise.statement(statement_id).role
        bound = self.bound_parameters(runs_as)
        unbound = [n for n in dict.fromkeys(param_names(sql)) if n not in bound]
        if unbound:
            names = ", ".join(f":{n}" for n in unbound)
            return self._emit(ev.Refused(
                role=role, action="edit", statement=statement_id,
                error=f"the automation does not bind {names}; {runs_as}'s "
                      f"statements can use {', '.join(f':{n}' for n in bound)}"))
        problem = directive_problem(sql)
        if problem is not None:
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error=problem))
        try:
            control = transaction_control(sql)
        except NotControl as exc:
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error=str(exc)))
        tried = (self.store.probe(runs_as, [sql], self._params(runs_as, sql))  # rolled back
                 if control is None else [])
        broken = next((r for r in tried if r.error_kind == "syntax"), None)
        if broken is not None:
            return self._emit(ev.Refused(role=role, action="edit", statement=statement_id,
                                         error=f"the new SQL does not parse: {broken.error}"))
        before = self.statement_sql[statement_id]
        self.statement_sql[statement_id] = sql
        self.facts.edits.append((self.minute, statement_id))
        return self._emit(ev.Edit(role=role, statement=statement_id, sql=sql, before=before))

    def reveal_hint(self, hint_id: str | None = None, role: str | None = None,
                    to: Sequence[str] = ()) -> Event:
        """Reveal a hint (the next unrevealed one when no id is given); it costs points. `to`:
        the roles the facilitator gives it to (empty: everyone)."""
        flood = self._flooded("hint", role)
        if flood is not None:
            return flood
        revealed = {h for _, h in self.facts.hints}
        hints = [h for h in self.exercise.hints if h.id not in revealed]
        if hint_id is not None:
            hints = [h for h in self.exercise.hints if h.id == hint_id]
        elif role is not None:
            pending_tasks = {p.task.id for p in self.pending.values()}
            preferred = [h for h in hints if h.task in pending_tasks]
            hints = preferred or hints
        if not hints:
            return self._emit(ev.Refused(action="hint", error="no hint left to reveal"))
        hint = hints[0]
        below = self.exercise.rung_below(hint.id)
        if role is not None and below is not None and below.id not in revealed:
            return self._emit(ev.Refused(action="hint", error=(
                f'hint "{hint.id}" comes after "{below.id}" on its task\'s ladder: take that '
                f"one first")))
        if hint.id not in revealed:
            self.facts.hints.append((hint.cost, hint.id))
        return self._emit(ev.Hint(id=hint.id, text=hint.text, cost=hint.cost, task=hint.task,
                                  to=tuple(to)))

    def send_inject(self, title: str, text: str = "", to: Sequence[str] = (),
                    kind: str = "message", *, inject_id: str = "adhoc",
                    expect: Sequence[str] = (), objective: str = "") -> Event:
        """A facilitator's ad-hoc inject (`kind`: message, status or alarm). A prepared one
        that expects something of the team (`expect`, as an exercise inject's) is named by
        its own `inject_id`, so the facilitator's marks name it."""
        flood = self._flooded("inject")
        if flood is not None:
            return flood
        return self._emit(ev.Inject(
            id=inject_id, inject_kind=InjectKind(kind).value, title=title, text=text,
            to=tuple(to), source="facilitator", expect=tuple(expect), objective=objective,
        ))

    def note(self, text: str, role: str | None = None, author: str | None = None) -> Event:
        flood = self._flooded("note", role)
        if flood is not None:
            return flood
        return self._emit(ev.Note(role=role, text=text, author=author))

    def record(self, event: E) -> E:
        """Record what the people around the session did (the cast, the facilitator's
        clock, a team host's seats and their commands): it changes nothing in play, it goes
        into the transcript at the session's clock like every event."""
        if not isinstance(event, _OUTSIDE_EVENTS):
            raise SessionError(f"{event.kind} events are the session's own to record")
        if isinstance(event, (ev.SeatCommand, ev.CommandRefused)) and self._cap_reached():
            self._flood_refusal(event.kind, event.role)  # a seat's flood: no line per command
            return replace(event, sim_time=self.clock_face, minute=self.minute)
        return self._emit(event)

    def hand_over(self, role: str, to_automation: bool) -> Event:
        """The facilitator hands a player's routine (repeating) tasks to the automation, which
        runs them as the exercise's own automation would, or takes them back for the player;
        a one-off (story) task stays the player's either way. Recorded."""
        self._require_player(role)
        if to_automation:
            self.handed.add(role)
            for task_id, pending in list(self.pending.items()):
                if pending.task.role == role and pending.task.every is not None:
                    del self.pending[task_id]  # the automation runs its next time
        else:
            self.handed.discard(role)
        return self._emit(ev.Facilitation(
            action="handover", to=(role,),
            detail=HANDED if to_automation else "back to the player"))

    def hold_task(self, task_id: str, hold: bool) -> Event:
        """The facilitator holds a task (the night's fault step) so it does not run when due,
        or releases it: one that fell due while held runs at the next minute. Recorded."""
        task = next((t for t in self.exercise.tasks if t.id == task_id), None)
        if task is None:
            raise SessionError(f"no task {task_id!r} in this exercise")
        if hold:
            self.held.setdefault(task_id, False)
        elif self.held.pop(task_id, False):
            self._schedule(self.minute + 1, DUE_TASK, task)
        return self._emit(ev.Facilitation(action="hold" if hold else "release", to=(task.role,),
                                          detail=task_id, text=task.title))

    def schedule_on_fault(self, title: str, text: str, harm: str, after: int = 0,
                          to: Sequence[str] = (), kind: str = "message") -> Event:
        """A facilitator's inject that follows the world: it arrives when the harm's fault
        holds (`after` minutes into it), as the exercise's own alarms do, and never if the
        fault never begins."""
        harms = [i.id for i in self.exercise.invariants]
        if harm not in harms:
            raise SessionError(f"unknown harm {harm!r}; harms are {', '.join(harms)}")
        try:
            inject_kind = InjectKind(kind or "message")
        except ValueError:
            raise SessionError(f"unknown inject kind {kind!r}; kinds are message, status, "
                               "alarm") from None
        flood = self._flooded("schedule")
        if flood is not None:
            return flood
        self._counter += 1
        inject = Inject(id=f"facilitator-{self._counter}", at=None, title=title, text=text,
                        kind=inject_kind, to=tuple(to), source="facilitator", on_fault=harm,
                        after=max(0, after))
        event = self._emit(ev.Facilitation(action="schedule", to=tuple(to), detail=title,
                                           text=text, when=harm, after=inject.after,
                                           inject_kind=inject_kind.value))
        self._on_fault.setdefault(harm, []).append(inject)
        if harm in self._violated:  # it holds now: this spell of the fault sends it
            if inject.after <= 0:
                self._on_fault[harm].remove(inject)
                self._send(inject)
            else:
                self._schedule(self.minute + inject.after, DUE_INJECT, inject,
                               self._onsets.get(harm, 0))
        return event

    def schedule_inject(self, title: str, text: str, at: int,
                        to: Sequence[str] = ()) -> Event:
        """A facilitator's inject for a later minute: it arrives like the exercise's own."""
        if at <= self.minute:
            return self.send_inject(title, text, to)
        flood = self._flooded("schedule")
        if flood is not None:
            return flood
        self._counter += 1
        inject = Inject(id=f"facilitator-{self._counter}", at=at, title=title, text=text,
                        kind=InjectKind.MESSAGE, to=tuple(to), source="facilitator")
        self._schedule(at, DUE_INJECT, inject)
        return self._emit(ev.Facilitation(action="schedule", at=self.time_of(at), to=tuple(to),
                                          detail=title, text=text))

    def replay(self, *, final: bool = False) -> ev.Replay:
        """Replay the race against a copy of the team's database; guards are judged by it.

        The team may ask for a replay at any time to see what its guards do; the one that
        scores is the `final` replay `end` runs on the database as the night left it."""
        from raceday.engine.replay import replay_race  # its modules load at the first replay

        rubric = self.exercise.scoring.guards
        if not self.facts.race_steps(self.exercise) and not (rubric and rubric.harms
                                                             and self.exercise.replay):
            return self._emit(ev.Replay(available=False, final=final,
                                        note="this exercise defines no race to replay"))
        if final:
            self.facts.replay = None  # guard points come from this replay alone
        try:
            # each probe once: a look the team made before two declarations is listed twice
            probes = tuple(dict.fromkeys(self.alert_sql + self.look_sql)) if final else ()
            result = replay_race(self, probes,
                                 keep_world=not final, reveal=final)
        except Exception as exc:  # the live session must survive a replay that cannot be built
            from raceday.store.replay_world import remove_earlier_worlds  # sqlite3: only here

            remove_earlier_worlds(self.folder / "replay")  # what it built (a full disk?) goes
            if isinstance(exc, MachineError):  # a full disk: stop, resume once there is room
                raise
            return self._emit(ev.Replay(available=False, final=final,
                                        error=f"the replay failed: {exc}"))
        self.facts.replay = result
        if final:
            self.final_replay = result
        return self._emit(ev.Replay(available=True, final=final, result=result,
                                    guards=replay_guards(self.exercise, result)))

    def _minute_checks(self) -> None:
        if self.probes:
            self._run_probes()
        if self.team_left_at is None:
            for monitor in list(self.monitors.values()):
                self._run_monitor(monitor)
        self._check_world(if_changed=True)
        self._check_player_tasks()

    def end(self, reason: str = "ended") -> Score:
        """Play out the rest of the night, replay the race, judge the good paths, score,
        write the score event and close the transcript.

        When the team ends before the clock runs out, the rest of the night plays itself out
        with only the automation (every role automated, no monitors), so what is judged is
        what the night would have done; those events carry `after_team_left`. Writing the
        debrief is the caller's step: the engine decides, it does not render.
        """
        if self.score is not None:
            return self.score
        if self.log.broken is not None:  # nothing more can be recorded: no score, say why
            self.close()
            raise TranscriptWriteError(self.log.broken)
        self._check_player_tasks()
        if reason != "aborted" and not self.timeline_over:
            self._emit(ev.TeamLeft(note="the team has left: the rest of the night plays itself "
                                    "out with only the automation",
                               until=self.time_of(self.end_minute)))
            self.team_left_at = self.minute
            self.facts.team_left_at = self.minute
            self.advance_to(self.end_minute)
        self.team_left_at = None  # the closing events are the judge's, not the night's
        if reason != "aborted":
            from raceday.engine.charts import chart_events  # the night's charts, for the debrief

            for chart in chart_events(self):
                self._emit(chart)
        if reason != "aborted" and self.exercise.replay is not None:
            self.replay(final=True)
            self._judge_alerts()
            self._judge_looks()
        good_path: list[tuple[str, str, bool, str]] = []
        guards = self.exercise.scoring.guards
        for path in guards.good_path if guards else ():
            results = self.store.probe(path.role, path.sql, self._params(path.role, " ".join(path.sql)))
            failed = next((r for r in results if not r.ok), None)
            changed = sum(r.rowcount or 0 for r in results if r.is_write)
            ok = failed is None and changed > 0
            why = failed.error or "" if failed else ("" if ok else "it changed 0 rows")
            good_path.append((path.id, path.title, ok, why or ""))
        self.facts.good_path = good_path
        recovery = self.exercise.scoring.recovery
        for net in recovery.safety_nets if recovery else ():
            rows = self._check_rows(net.broken)
            if rows:
                self.facts.nets_torn.append((net.id, ", ".join(str(v) for v in rows[0])))
        self._judge_tasks()
        self.facts.healthy_at_end = self.healthy
        self.facts.faults_at_end = [self._faults.get(i, i) for i in sorted(self._violated)]
        self.facts.reached_end = self.timeline_over
        self.facts.ended_at = self.minute
        self.facts.night_end = self.end_minute
        self.facts.live_steps = step_statuses(self.facts.race_steps(self.exercise))
        if self.night is not None:
            judge_as_drawn(self.night, self.facts, self.events)
        self.score = score_session(self.exercise, self.facts, self.time_of)
        if self.night is not None:
            self._emit(night_revealed(self.night, self.facts, self.score, self.time_of))
        self._emit(ev.ScoreEvent(reason=reason, score=self.score))
        self.ended = True
        end_world(self.store, self.folder)  # on PostgreSQL: dropped unless --keep-world
        self.log.close()
        _add_to_history(self.folder, self.events)
        return self.score

    def _judge_tasks(self) -> None:
        for task_id, why in unproven_tasks(self.exercise, self.facts).items():
            del self.facts.tasks_done[task_id]
            self.facts.tasks_unproven[task_id] = why

    def _judge_alerts(self) -> None:
        result = self.final_replay
        if result is None:
            return
        kept, noisy = sort_alerts(self.facts.monitor_alerts, result, self.time_of)
        self.facts.monitor_alerts = kept
        for name, (minute, why) in noisy.items():
            if name not in self.facts.noisy_monitors:
                self.facts.noisy_monitors[name] = minute
                self.facts.noise_reasons[name] = why

    def _judge_looks(self) -> None:
        result = self.final_replay
        if result is None or not self._declared_looks:
            return
        self.facts.confirmed, blind = judge_diagnoses(
            self._declared_looks, self.facts.confirmed, set(self.facts.noisy_monitors), result,
            self.time_of)
        self.facts.blind.extend(blind)

    def close(self) -> None:
        """Close the world and the transcript without a score (the transcript cannot be
        written, or the program is going away): `raceday resume` goes on from here."""
        self.store.close()
        self.log.close()


def _add_to_history(folder: Path, events: Sequence[Event]) -> None:
    """Index the finished session into the history beside its folder. The transcript stands
    whatever happens here: `raceday history` indexes any session the history lacks."""
    from raceday.history.index import record_session  # sqlite-utils, needed only at the end

    try:
        record_session(folder, events)
    except Exception as exc:  # derived data: a warning, never the session's failure
        logging.getLogger(__name__).warning("raceday: history not updated: %s", exc)


def _debrief_content(ex: Exercise) -> dict[str, Any]:
    """What the debrief needs from the exercise, carried in `session_start` so that a
    transcript alone rebuilds it."""
    content = ex.debrief
    guards = ex.scoring.guards
    return {
        "night": content.night or None,
        "sources": {s.tag: s.title for s in content.sources},
        "phases": tuple(ev.PhaseInfo(id=p.id, label=p.label, team=p.team.value,
                                     milestone=p.milestone) for p in content.phases),
        "race_steps": tuple(ev.StepInfo(id=s.id, title=s.title, task=s.task, after=s.after)
                            for s in (guards.steps if guards else ())),
        "checklist_title": content.checklist_title or None,
        "checklist": tuple(ev.PracticeInfo(id=p.id, title=p.title, text=p.text, action=p.action,
                                           judge=p.judge.value, steps=p.steps,
                                           statements=p.statements, harms=p.harms,
                                           nights=p.nights, elsewhere=p.elsewhere)
                           for p in content.checklist),
    }
