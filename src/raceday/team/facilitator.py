"""The facilitator's own actions on a hosted session: start the night from the lobby, pause,
resume, change speed, skip, hand a seat to the automation, send a hint, what the projector and
the shared console show, notes. Every one is recorded in the transcript.

They are a part of the host (`Host` mixes them in) and run in its thread: call them through
`Host.call`, or from the host thread itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from raceday.engine.clock import LiveClock
from raceday.engine.session import Session, SessionError
from raceday.transcript import events as ev

if TYPE_CHECKING:
    from raceday.team.inject_file import PreparedInject
    from raceday.team.inject_plan import InjectPlan, PlanEntry
    from raceday.team.seat import Seat


FALLS_DUE = " falls due: "
"""How a skip says where it stops before the task's title (which the players' screens leave
out: a player's next task is a spoiler on a projector)."""


class FacilitatorActions:
    """What the facilitator can do to a running session; mixed into `Host`."""

    seats: dict[str, Seat]
    live: LiveClock
    wall: Callable[[], float]
    in_lobby: bool
    projector_sql: bool
    _own_clock: bool
    _private: bool
    injects: InjectPlan

    @property
    def roles(self) -> tuple[str, ...]:
        raise NotImplementedError

    def need(self) -> Session:
        raise NotImplementedError

    def facilitated(self, action: str, **fields: Any) -> ev.Event:
        """Record the facilitator's hand on the session (the transcript keeps every one)."""
        return self.need().record(ev.Facilitation(action=action, **fields))

    def lobby_state(self) -> tuple[list[str], list[str], list[str]]:
        """The ready check: who is ready, who joined but is not ready yet (both as
        "player (role)"), and which seats nobody has taken."""
        ready = [f"{s.player} ({s.role})" for s in self.seats.values() if s.player and s.ready]
        waiting = [f"{s.player} ({s.role})" for s in self.seats.values()
                   if s.player and not s.ready]
        missing = [s.name for s in self.seats.values() if not s.player]
        return ready, waiting, missing

    def lobby_words(self) -> str:
        """Who was ready, who had joined without saying so, who was missing: the start's
        record ('ready: Ana (enactor-a); not ready: Bo (enactor-b); missing: responder')."""
        ready, waiting, missing = self.lobby_state()
        words = [f"ready: {', '.join(ready)}" if ready else "nobody ready"]
        if waiting:
            words.append(f"not ready: {', '.join(waiting)}")
        words.append(f"missing: {', '.join(missing)}" if missing else "every seat taken")
        return "; ".join(words)

    def start_clock(self) -> bool:
        """Leave the lobby: the live clock starts from where the night begins (False when it
        had already started)."""
        if not self.in_lobby:
            return False
        self.in_lobby = False
        self.facilitated("start", speed=self.live.speed, detail=self.lobby_words())
        if self._own_clock:
            self.live.start(self.wall(), self.need().minute)
        return True

    def pause(self) -> None:
        if self.in_lobby or self.live.paused:
            return  # held already: nothing changes, nothing to record
        self.live.pause(self.wall())
        self.facilitated("pause")

    def resume(self) -> None:
        """Run the clock again (in the lobby: start it)."""
        if self.start_clock() or not self.live.paused:
            return
        self.live.resume(self.wall())
        self.facilitated("resume")

    def set_speed(self, speed: float) -> None:
        from raceday.engine.clock import length_words, real_minutes

        if speed <= 0:
            raise SessionError(f"a speed must be above 0, not {speed:g}")
        if self._own_clock:
            self.live.set_speed(speed, self.wall())
        session = self.need()
        left = max(0, session.end_minute - session.minute)
        self.facilitated("speed", speed=speed,
                         detail=f"the rest of the night lasts "
                                f"{length_words(real_minutes(left, speed))}")

    def next_stop(self) -> tuple[int | None, str]:
        """Where the facilitator's skip stops: the next minute a seated role's task falls
        due, or the next inject, whichever comes first (None: the next inject, as the session
        finds it, a fault's included); and why, in words."""
        session = self.need()
        task_at, task = session.next_task_due(self.roles)
        inject_at = session.next_inject_minute()
        planned = self.injects.next_minute(session.minute)
        if planned is not None and (inject_at is None or planned < inject_at):
            inject_at = planned
        if task_at is not None and (inject_at is None or task_at < inject_at):
            assert task is not None
            return task_at, (f"{session.time_of(task_at)}, when {task.role}'s task"
                             f"{FALLS_DUE}{task.title}")
        if planned is not None and planned == inject_at:
            return planned, f"{session.time_of(planned)}, the next inject"
        return None, "the next inject"

    def skip(self) -> None:
        """Let the clock run to the next inject or, sooner, to the next time a seat's task
        falls due (the facilitator's "next"); recorded."""
        session = self.need()
        if self.in_lobby:
            raise SessionError("the clock is held in the lobby: start it first")
        stop, why = self.next_stop()
        self.facilitated("skip", detail=why)
        session.wait(stop)
        self.live.jump_to(session.minute, self.wall())
        self.send_due_injects()

    def hand_over(self, seat_name: str, to_automation: bool) -> ev.Event:
        """Hand a seat's routine tasks to the automation (its story tasks stay the player's),
        or give them back; recorded."""
        seat = self.seats.get(seat_name)
        if seat is None:
            raise SessionError(f"no seat {seat_name!r} in this session")
        return self.need().hand_over(seat.role, to_automation)

    def automate_task(self, task_id: str) -> ev.Event:
        """Have the automation do a seat's due story task now (a quiet player, a stalled
        night); recorded."""
        return self.need().automate_task(task_id)

    def skip_step(self, task_id: str) -> ev.Event:
        """Let the night go on without a seat's due story task (not played tonight: the
        judge scores its fault as not played); recorded."""
        return self.need().skip_step(task_id)

    def give_hint(self, hint_id: str, role: str | None = None) -> ev.Event:
        """A hint the facilitator chose to send, to one role's seat or (None) to everyone
        (recorded as theirs, then revealed; the team pays for it either way)."""
        to = (role,) if role else ()
        self.facilitated("hint", to=to, detail=hint_id)
        return self.need().reveal_hint(hint_id, role, to)

    def rule(self, declaration: int, ruling: str, note: str = "") -> ev.Event:
        """The facilitator's ruling on a declaration (its event number): right, partly or
        wrong, with a note; recorded, and put in the facts the judge scores from."""
        from raceday.team.rulings import rule

        return rule(self.need(), declaration, ruling, note)

    def mark_expected(self, inject: str, number: int, mark: str) -> ev.Event:
        """The facilitator's mark (met, partly, not met) of what an inject expected of the
        team (its `number`th expectation); recorded, for the AAR (never the score)."""
        from raceday.team.rulings import mark_expected

        return mark_expected(self.need(), inject, number, mark)

    # -- the night's fault step ---------------------------------------------------------

    def fault_task(self) -> str | None:
        """The task of the night's first race step (the fault's), when the exercise has one."""
        guards = self.need().exercise.scoring.guards
        return guards.steps[0].task if guards and guards.steps else None

    def hold_fault(self, hold: bool) -> ev.Event:
        """Hold the night's fault step (a human Enactor is late, or early: the story waits),
        or release it (it runs at the next minute if it fell due meanwhile); recorded."""
        task = self.fault_task()
        if task is None:
            raise SessionError("this exercise names no race step to hold")
        session = self.need()
        if hold == (task in session.held):
            raise SessionError("the fault step is held already" if hold else
                               "the fault step is not held")
        return session.hold_task(task, hold)

    # -- the master list of injects --------------------------------------------------------

    def plan_injects(self, prepared: tuple[PreparedInject, ...], where: str) -> None:
        """Put the facilitator's prepared injects (read from `where`) in the master list."""
        from raceday.team.inject_plan import save_prepared

        for inject in prepared:
            self.injects.add(inject, "prepared")
        save_prepared(self.need().folder, prepared)  # a resumed host lists them again
        self.facilitated("plan", detail=f"{len(prepared)} prepared inject"
                         f"{'' if len(prepared) == 1 else 's'} from {where}")

    def plan_live(self, inject: PreparedInject) -> PlanEntry:
        """An inject the facilitator adds during play (at a minute, or when a harm holds)."""
        entry = self.injects.add(inject, "live")
        self.facilitated("schedule-live", detail=inject.title, text=inject.text, to=inject.to,
                         inject_kind=inject.kind, when=inject.when, after=inject.after,
                         at=self.need().time_of(inject.at) if inject.at is not None else None,
                         inject=entry.key)
        self.send_due_injects()
        return entry

    def move_inject(self, key: str, minutes: int) -> PlanEntry:
        """Move a waiting inject of the facilitator's `minutes` later (negative: earlier)."""
        from raceday.team.inject_plan import when_words

        session = self.need()
        try:
            entry = self.injects.move(key, minutes, session.minute)
        except (KeyError, ValueError) as exc:
            raise SessionError(str(exc).strip("'\"")) from None
        at = entry.inject.at
        self.facilitated("move", detail=f"{entry.inject.title}: now "
                         f"{when_words(entry, session.time_of)}", inject=key,
                         at=session.time_of(at) if at is not None else None,
                         after=entry.inject.after)
        self.send_due_injects()
        return entry

    def cancel_inject(self, key: str) -> PlanEntry:
        try:
            entry = self.injects.cancel(key)
        except (KeyError, ValueError) as exc:
            raise SessionError(str(exc).strip("'\"")) from None
        self.facilitated("cancel", detail=entry.inject.title, inject=key)
        return entry

    def send_inject_now(self, key: str) -> PlanEntry:
        """Send a waiting inject of the facilitator's at once."""
        try:
            entry = self.injects.get(key)
        except KeyError as exc:
            raise SessionError(str(exc).strip("'\"")) from None
        if not entry.movable:
            whose = ", the exercise's" if entry.source == "exercise" else ""
            raise SessionError(f"'{entry.inject.title}' is not waiting (it is "
                               f"{entry.state}{whose})")
        return self._send_planned(entry)

    def send_due_injects(self) -> None:
        """Send every waiting inject whose time has come (the host calls it each pump)."""
        session = self.need()
        if session.ended or self.in_lobby:
            return
        for entry in self.injects.due(session.minute):
            self._send_planned(entry)

    def _send_planned(self, entry: PlanEntry) -> PlanEntry:
        session = self.need()
        i = entry.inject
        title = f"Question for discussion: {i.title}" if i.kind == "question" else i.title
        # named by its own id when it expects something of the team: the marks name it
        session.send_inject(title, i.text, i.to,
                            "message" if i.kind == "question" else i.kind,
                            inject_id=i.id if i.expect else "adhoc", expect=i.expect,
                            objective=i.objective)
        return self.injects.sent(entry.key, session.clock_face)

    def show_sql_on_projector(self, shown: bool) -> None:
        """Let the projector show the statements' SQL (the hot wash), or hide it again."""
        if shown != self.projector_sql:
            self.projector_sql = shown
            self.facilitated("projector", detail="players' SQL shown on the projector"
                             if shown else "players' SQL hidden from the projector")

    def screen_share(self, hidden: bool) -> None:
        """The console's answer key and verdicts hidden (or shown again) for screen sharing."""
        self.facilitated("screen", detail="answer key and live verdicts hidden" if hidden
                         else "answer key and live verdicts shown")

    def wait_until(self, minute: int | None) -> None:
        session = self.need()
        session.wait(minute)
        self.live.jump_to(session.minute, self.wall())

    def advance_to(self, minute: int) -> None:
        session = self.need()
        session.advance_to(minute)
        self.live.jump_to(session.minute, self.wall())

    def observer_note(self, text: str) -> ev.Event:
        """A note for the debrief; players do not see it."""
        self._private = True
        try:
            return self.need().note(text)
        finally:
            self._private = False
