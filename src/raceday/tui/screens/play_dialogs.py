"""The play screen's dialogs: a monitor (F7), a finding (F8), a hint (F9, ctrl+y pastes it),
the next stop (ctrl+n), and the facilitator's menu (ctrl+f: injects, notes, the clock).
Each asks, then hands the answer to the session as one action."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from raceday.engine.actions import Declare, RevealHint, SaveMonitor, Wait
from raceday.engine.clock import Pace
from raceday.engine.task_progress import automation_work
from raceday.exercise.model import MAX_OWN_WORDS, OWN_WORDS
from raceday.inert import inert
from raceday.transcript import events as ev
from raceday.tui.screens.play_base import PlayBase

if TYPE_CHECKING:
    from raceday.engine.snapshot import PendingView
    from raceday.tui.screens.dialogs import InjectRequest, MonitorRequest, NoteRequest

SKIP_TOAST_SECONDS = 6.0
"""ctrl+n says what is still due at most once in this many seconds."""


class PlayDialogs(PlayBase):
    """The keys that open a dialog (or, ctrl+n and ctrl+t, act at once)."""

    FACILITATOR_RULES = False
    """A facilitator can rule on a finding in the player's own words (a team seat, whose
    host's console rules): only then does F8 offer one, as it could never count otherwise."""

    def action_monitor(self) -> None:
        self.editor.call_later(self._monitor_typed)  # after the keys typed ahead (F5's reason)

    def _monitor_typed(self) -> None:
        if self._ready(self._monitor_typed) is None:
            return
        role = self.role
        sql = self.editor.submission()

        def save(request: MonitorRequest | None) -> None:
            if request is not None:
                self._perform("monitor",
                              SaveMonitor(role=role, name=request.name, sql=request.sql))

        from raceday.tui.screens.dialogs import MonitorDialog  # imported by the prepare job
        self.app.push_screen(MonitorDialog(sql, role), save)

    def action_declare(self) -> None:
        if self._ready(self.action_declare) is None:
            return
        role = self.role
        # alphabetical, so the menu's order says nothing about which findings are true
        options = sorted(((f.id, f.text) for f in self.exercise.findings),
                         key=lambda o: o[1].casefold())
        if self.FACILITATOR_RULES:
            options.append((OWN_WORDS, "In my own words…"))

        def in_words(words: str | None) -> None:
            if words:
                self.declare(role, OWN_WORDS, words)

        def chosen(finding: str | None) -> None:
            if finding == OWN_WORDS:
                from raceday.tui.screens.dialogs import OwnWordsDialog  # imported by the prepare job
                self.app.push_screen(OwnWordsDialog(role, MAX_OWN_WORDS), in_words)
            elif finding is not None:
                self.declare(role, finding)

        from raceday.tui.screens.dialogs import ChoiceDialog  # imported by the prepare job
        self.app.push_screen(ChoiceDialog(
            f"Declare a finding (as {role})", options,
            note="What is wrong? A right finding counts as detection when it is so now; a "
                 "wrong one, or one that is not so yet, costs points."
                 + (" In your own words, the facilitator rules on it."
                    if self.FACILITATOR_RULES else ""), confirm="Declare",
            at_once=frozenset({OWN_WORDS})), chosen)

    def declare(self, role: str, finding: str, text: str = "") -> None:
        self._perform("declare", Declare(role=role, finding=finding, text=text))

    def action_hint(self) -> None:
        """F9: choose which hint to reveal, each with its cost, before anything is shown.
        The list is the seat's: hints about its own role's tasks, about the automation's
        (which nobody at this keyboard plays, so the one here hardens it; each says whose
        task it is) and about none; another seat's are its own (F2 passes the keyboard).
        Its order is the exercise's, every time: hints taken or about a task already done
        stay in their place, greyed, so the same keys reach the same hint."""
        if self._ready(self.action_hint) is None:
            return
        tasks = {t.id: t for t in self.exercise.tasks}
        others = {seat.role for seat in self.seats} - {self.role}
        hints = [h for h in self.exercise.hints
                 if h.task not in tasks or tasks[h.task].role not in others]
        done = self.done_tasks | self.handled_tasks()
        later = {h.id: below for h in hints
                 if (below := self.exercise.rung_below(h.id)) and below.id not in self.revealed}
        closed = frozenset(h.id for h in hints
                           if h.id in self.revealed or h.id in later
                           or (h.task is not None and h.task in done))
        if len(closed) == len(hints):
            self.notify("No hint left to reveal." if hints else
                        "This exercise has no hints." if not self.exercise.hints else
                        f"No hint for {self.role}: F2 passes the keyboard to the others.",
                        timeout=4)
            return
        due_now = [p.task for p in self.my_outstanding()]
        options = []
        for hint in hints:
            task = tasks.get(hint.task or "")
            if task is None:
                about = hint.id.replace("-", " ").replace("_", " ")
            elif task.role == self.role:
                about = task.title
            else:
                about = f"{self._role_name(task.role)}'s task: {task.title}"
            ladder = [h.id for h in hints if hint.task and h.task == hint.task]
            if len(ladder) > 1:
                about += f" ({ladder.index(hint.id) + 1} of {len(ladder)})"
            cost = f"-{hint.cost} point{'s' if hint.cost != 1 else ''}"
            state = ("  (taken: ctrl+y puts it in the editor)" if hint.id in self.revealed
                     else "  (task done)" if hint.task in done
                     else "  (take the one above first)" if hint.id in later
                     else "  (due now)" if hint.task in due_now else "")
            options.append((hint.id, f"{cost} · {inert(about, one_line=True)}{state}"))
        first = next((h.id for h in hints if h.id not in closed and h.task in due_now),
                     next(h.id for h in hints if h.id not in closed))
        role = self.role

        def reveal(hint_id: str | None) -> None:
            if hint_id is not None:
                self._perform("hint", RevealHint(hint=hint_id, role=role))

        from raceday.tui.screens.dialogs import ChoiceDialog  # imported by the prepare job
        self.app.push_screen(ChoiceDialog(
            "Reveal a hint (it costs the points shown)", options,
            note="Enter reads the one chosen; the score shows what hints cost. Esc: none.",
            selected=first, disabled=closed), reveal)

    def _role_name(self, role: str) -> str:
        return self.exercise.role(role).name if role in self.exercise.role_ids else role

    def action_paste_hint(self) -> None:
        """ctrl+y: the newest hint taken into the editor, its SQL alone when it has some
        (one edit: ctrl+z takes it out again)."""
        taken = [h for h in self.exercise.hints if h.id in self.revealed]
        if not taken:
            self.notify("No hint taken yet: F9 reveals one.", timeout=4)
            return
        newest = self._newest_hint or taken[-1].id
        hint = next(h for h in taken if h.id == newest)
        editor = self.editor
        editor.replace(hint_sql(hint.text), editor.document.start, editor.document.end)
        editor.select_all()
        editor.focus()

    def action_next(self) -> None:
        """ctrl+n: let the clock run to the next inject, or sooner to the next time a task of
        a role played here falls due: one press, whatever is due. What is still due is said
        in one toast (not one per press). A story task a person holds (the automation's own
        work, which nobody else will do) is never passed without asking: left undone, the
        night stops where it is."""
        if self._ready(self.action_next) is None:
            return
        until = self._next_stop()
        held = self._held_story_tasks()
        if held:
            self._ask_to_pass(held, until)
            return
        mine = self.my_outstanding()
        now = self.raceday.wall()
        if mine and now - self._skip_toast_at > SKIP_TOAST_SECONDS:
            self._skip_toast_at = now
            self.notify(f"Still due for {self.role}: {mine[0].title}"
                        + (f" (and {len(mine) - 1} more)" if len(mine) > 1 else "")
                        + ". The Tasks tab keeps them.", timeout=SKIP_TOAST_SECONDS)
        self._perform("wait", Wait(until=until))

    def _held_story_tasks(self) -> list[PendingView]:
        """The automation's own tasks, held by a seat here, due and not handled, that the
        player has not already chosen to leave undone."""
        story = automation_work(self.exercise)
        return [p for seat in self.seats for p in self.my_outstanding(seat.role)
                if p.task in story and (p.task, p.minute) not in self._left_undone]

    def _ask_to_pass(self, held: list[PendingView], until: int | None) -> None:
        first = held[0]
        where = f"{first.role}: {first.title}" + (f" (due {first.due})" if first.due else "")
        more = f" and {len(held) - 1} more" if len(held) > 1 else ""
        stay = "Stay and do it" + ("" if first.role == self.role
                                    else f" (F2 passes the keyboard to {first.role})")
        from raceday.engine.clock import clock_time

        to = "the next inject" if until is None else clock_time(self.exercise.clock.start,
                                                                  until)
        options = [("stay", stay), ("pass", f"Let the clock run to {to}, leaving it undone")]

        def chosen(choice: str | None) -> None:
            if choice == "pass":
                self._left_undone.update((p.task, p.minute) for p in held)
                self._perform("wait", Wait(until=until))

        from raceday.tui.screens.dialogs import ChoiceDialog  # imported by the prepare job
        self.app.push_screen(ChoiceDialog(
            "Still due, and nobody else will do it", options,
            note=f"{where}{more}.\nThe automation leaves it to you, and until it is done the "
                 "night waits on it. Leaving it undone is a choice the score and the debrief "
                 "see.", selected="stay"), chosen)

    def _next_stop(self) -> int | None:
        """The next minute a played role's task falls due, if before the next inject."""
        snap = self.snapshot
        if snap is None:
            return None
        held = {seat.role for seat in self.seats}
        # the normal night's own tasks never fall due tonight (an on-time Enactor every 2 min)
        normal = set(self.exercise.replay.normal) if self.exercise.replay else set()
        times = [m for t in self.exercise.tasks if t.role in held and t.id not in normal
                 for m in t.times() if m > snap.minute]
        task_at = min(times, default=None)
        inject_at = snap.next_inject
        if task_at is None:
            return None
        if inject_at is not None and inject_at <= task_at:
            return None
        return task_at

    def action_pause(self) -> None:
        if self.settings.pace is not Pace.LIVE:
            self.notify("The turns pace has no running clock: time moves when you act "
                        "(ctrl+n waits for the next event).", timeout=5)
            return
        now = self.raceday.wall()
        if self.live.paused:
            self.live.resume(now)
            self.notify("Clock running.", timeout=2)
            self._facilitation(ev.Facilitation(action="resume"))
        else:
            self.live.pause(now)
            self.notify("Clock paused.", timeout=2)
            self._facilitation(ev.Facilitation(action="pause"))
        self._show_header()

    def action_speed(self) -> None:
        if self.settings.pace is not Pace.LIVE:
            self.notify("Speed applies to the live pace only.", timeout=4)
            return
        options = self._speed_options()
        night = self.exercise.clock.length_minutes

        def chosen(value: str | None) -> None:
            if value is not None:
                self.set_speed(float(value))

        from raceday.tui.screens.dialogs import ChoiceDialog  # imported by the prepare job
        self.app.push_screen(ChoiceDialog(
            "Clock speed: how long the whole night lasts", options,
            note=f"The exercise is {night} simulated minutes; a game day fits it into 60 "
                 "to 90 real minutes. What is left of it now is shown beside each speed.",
            selected=f"{self.live.speed:g}"), chosen)

    def _speed_options(self) -> list[tuple[str, str]]:
        from raceday.engine.clock import real_minutes, speed_choices

        night = self.exercise.clock.length_minutes
        left = max(0, night - (self.snapshot.minute if self.snapshot else 0))
        options = []
        for choice in speed_choices(night, self.live.speed, self.settings.speed):
            label = choice.label()
            if left < night:
                label += f"  (the rest: {real_minutes(left, choice.speed):.0f} min)"
            if abs(choice.speed - self.live.speed) < 1e-9:
                label += "  ← now"
            options.append((f"{choice.speed:g}", label))
        return options

    def set_speed(self, speed: float) -> None:
        from raceday.engine.clock import length_words, real_minutes

        self.live.set_speed(speed, self.raceday.wall())
        self._show_header()
        night = self.exercise.clock.length_minutes
        self._facilitation(ev.Facilitation(
            action="speed", speed=speed,
            detail=f"the whole night lasts {length_words(real_minutes(night, speed))}"))

    def action_facilitate(self) -> None:
        """ctrl+f: the facilitator's menu (injects, the clock), on the players' screen."""
        if self._ready(self.action_facilitate) is None:
            return
        options = [("inject", "Send an inject (to one role or the team, now or at a time)")]
        if self.settings.pace is Pace.LIVE:
            options += [("pause", "Resume the clock" if self.live.paused else "Pause the clock"),
                        ("speed", "Clock speed / the session's length")]
        options += [("next", "Skip to the next inject"),
                    ("note", "Write an observer's note (ctrl+o)")]
        actions: dict[str, Callable[[], None]] = {
            "inject": self.action_inject, "pause": self.action_pause,
            "speed": self.action_speed, "next": self.action_next, "note": self.action_note,
        }

        def chosen(key: str | None) -> None:
            if key in actions:
                actions[key]()

        from raceday.tui.screens.dialogs import ChoiceDialog  # imported by the prepare job
        self.app.push_screen(ChoiceDialog("Facilitator", options), chosen)

    def action_inject(self) -> None:
        if self._ready(self.action_inject) is None:
            return

        def send(request: InjectRequest | None) -> None:
            if request is None:
                return
            if request.at is None:
                self._act("inject", lambda s: s.send_inject(request.title, request.text,
                                                             request.to))
            else:
                at = request.at
                self._act("inject", lambda s: s.schedule_inject(request.title, request.text,
                                                                 at, request.to))

        from raceday.tui.screens.dialogs import InjectDialog  # imported by the prepare job
        self.app.push_screen(InjectDialog(self.exercise.role_ids, self._minute_of,
                                          classes="dialog-screen"), send)

    def _minute_of(self, text: str) -> int:
        """'23:55' (the next time the clock shows it) or '+10m', as a minute of the session."""
        from raceday.exercise.times import parse_duration, parse_time

        now = self.snapshot.minute if self.snapshot else 0
        text = text.strip()
        if text.startswith("+"):
            return now + parse_duration(text[1:])
        try:
            return parse_time(text, self.exercise.clock.start, now)
        except ValueError:
            raise ValueError(f'"{text}" is not a time: write 23:55, or +10m') from None

    def action_note(self) -> None:
        """ctrl+o: an observer's note, stamped with the clock, into the transcript."""
        if self._ready(self.action_note) is None:
            return
        clock = self.snapshot.clock_face if self.snapshot else ""

        def save(request: NoteRequest | None) -> None:
            if request is None:
                return
            self.note_author = request.author
            self._act("note", lambda s: s.note(request.text, author=request.author))

        from raceday.tui.screens.dialogs import NoteDialog  # imported by the prepare job
        self.app.push_screen(NoteDialog(clock, self.note_author, classes="dialog-screen"), save)


_SQL_START = re.compile(r"\b(?:SELECT|UPDATE|INSERT|DELETE|CREATE|ALTER|DROP|WITH|BEGIN|"
                        r"REPLACE)\b")


def hint_sql(text: str) -> str:
    """A hint for the editor: its SQL from the first SQL keyword, the words before it and a
    note after it (set off by two spaces and a parenthesis) as SQL comments, so F5 runs only
    the SQL; a hint without SQL becomes a comment."""
    body, _, note = text.strip().partition("  (")
    body = " ".join(body.split())
    found = _SQL_START.search(body)
    lead, sql = (body, "") if found is None else (body[:found.start()], body[found.start():])
    note = note.strip().removesuffix(")").strip()
    lines = [f"-- {lead.strip()}" if lead.strip() else "", sql, f"-- {note}" if note else ""]
    return "\n".join(line for line in lines if line)
