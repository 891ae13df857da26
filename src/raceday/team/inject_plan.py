"""The master scenario events list: the exercise's own injects, the facilitator's prepared ones
(`--injects FILE`) and the ones added live, in one list the console shows. The facilitator's
own can be moved earlier or later, sent now or cancelled while they wait; the exercise's are
shown with the rest, as the night brings them.

The host keeps the list and sends a waiting inject when its time comes (at a minute, or when a
harm has held for its `after`, in its current spell or, with `within`, in all its spells of
that window); it learns which harms hold, and held, from the session's events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from raceday.exercise.model import Exercise
from raceday.judge.harms import HarmClock
from raceday.team.inject_file import PreparedInject
from raceday.transcript import events as ev

PLANNED, SENT, CANCELLED = "planned", "sent", "cancelled"
PREPARED_FILE = "injects.json"
"""The facilitator's prepared injects, kept in the session folder for a resumed host."""


@dataclass(frozen=True)
class PlanEntry:
    """One line of the master list; `key` names it for the console's keys."""

    key: str
    source: str  # exercise | prepared | live
    inject: PreparedInject
    state: str = PLANNED
    sent_at: str = ""

    @property
    def movable(self) -> bool:
        return self.source != "exercise" and self.state == PLANNED


class InjectPlan:
    """The list, replaced whole on each change (the console reads it from another thread)."""

    def __init__(self, exercise: Exercise) -> None:
        self.exercise = exercise
        self.entries: tuple[PlanEntry, ...] = tuple(
            PlanEntry(f"exercise:{i.id}", "exercise", PreparedInject(
                id=i.id, title=i.title, text=i.text, kind=i.kind.value, to=tuple(i.to),
                at=i.at, when=i.on_fault, after=i.after, within=i.within, expect=i.expect,
                objective=i.objective))
            for i in exercise.injects)
        self.harms = HarmClock()
        """When each harm held tonight, as the session's faults and clears say."""
        self._live = 0

    def add(self, inject: PreparedInject, source: str) -> PlanEntry:
        if source == "live":
            self._live += 1
            key = f"live:{self._live}"
        else:
            key = f"{source}:{inject.id}"
        if any(e.key == key for e in self.entries):
            raise ValueError(f"inject {inject.id!r} is in the list already")
        entry = PlanEntry(key, source, inject)
        self.entries = (*self.entries, entry)
        return entry

    def get(self, key: str) -> PlanEntry:
        found = next((e for e in self.entries if e.key == key), None)
        if found is None:
            raise KeyError(f"no inject {key!r} in the list")
        return found

    def _put(self, entry: PlanEntry) -> PlanEntry:
        self.entries = tuple(entry if e.key == entry.key else e for e in self.entries)
        return entry

    def note(self, event: ev.Event, time: str) -> None:
        """Follow the world (which harms hold) and the exercise's own injects going out."""
        if isinstance(event, (ev.Fault, ev.InvariantClear)):
            self.harms.observe(event.invariant, event.minute, isinstance(event, ev.Fault))
        elif isinstance(event, ev.Inject) and event.id != "adhoc":
            entry = next((e for e in self.entries if e.key == f"exercise:{event.id}"), None)
            if entry is not None and entry.state == PLANNED:
                self._put(replace(entry, state=SENT, sent_at=time))

    def _due_at(self, entry: PlanEntry, now: int) -> int | None:
        """The minute a waiting inject of the facilitator's is due, as it looks at `now`
        (None: its harm does not hold, so no minute yet)."""
        i = entry.inject
        if i.at is not None:
            return i.at
        runs = self.harms.stretches.get(i.when)
        if not runs or runs[-1][1] is not None:
            return None
        since = runs[-1][0]
        assert since is not None
        if not i.within:
            return since + i.after
        return now + max(0, i.after - self.harms.held(i.when, now - i.within, now))

    def due(self, minute: int) -> list[PlanEntry]:
        """The facilitator's injects to send at `minute`, in the list's order."""
        return [e for e in self.entries if e.movable
                and (at := self._due_at(e, minute)) is not None and at <= minute]

    def next_minute(self, after: int) -> int | None:
        """The next minute after `after` a waiting inject of the facilitator's is due (if
        the harms that hold at `after` go on holding)."""
        later = [at for e in self.entries if e.movable
                 and (at := self._due_at(e, after)) is not None and at > after]
        return min(later) if later else None

    def move(self, key: str, minutes: int, now: int) -> PlanEntry:
        """Earlier (negative) or later: a timed inject's minute (never before the next
        minute), or how long into its harm a conditional one waits (never below 0)."""
        entry = self.get(key)
        if not entry.movable:
            raise ValueError("only the facilitator's waiting injects move (the exercise's "
                             "come as the night brings them)")
        i = entry.inject
        if i.at is not None:
            moved = replace(i, at=max(now + 1, i.at + minutes))
        else:
            longest = i.within or i.after + max(minutes, 0)  # held in its window, at most
            moved = replace(i, after=min(max(0, i.after + minutes), longest))
        return self._put(replace(entry, inject=moved))

    def cancel(self, key: str) -> PlanEntry:
        entry = self.get(key)
        if not entry.movable:
            raise ValueError("only the facilitator's waiting injects can be cancelled")
        return self._put(replace(entry, state=CANCELLED))

    def sent(self, key: str, time: str) -> PlanEntry:
        return self._put(replace(self.get(key), state=SENT, sent_at=time))


def save_prepared(folder: Path, prepared: Sequence[PreparedInject]) -> None:
    (folder / PREPARED_FILE).write_text(
        json.dumps([asdict(i) for i in prepared], ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")


def load_prepared(folder: Path) -> tuple[PreparedInject, ...]:
    """The prepared injects a session started with (none when it had no file); the file is
    the host's own, written at the start: one that does not read is none, and said so."""
    path = folder / PREPARED_FILE
    if not path.is_file():
        return ()
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return tuple(PreparedInject(**{**row, "to": tuple(row.get("to", ())),
                                       "expect": tuple(row.get("expect", ()))})
                     for row in rows)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{path}: the prepared injects cannot be read again ({exc})") from None


def rebuild(plan: InjectPlan, events: Sequence[ev.Event], minute_of: Callable[[str, int], int],
            ) -> None:
    """The list as the transcript left it: the live injects added, the moves and
    cancellations, and which of the facilitator's went out (an adhoc inject of theirs is the
    first waiting entry with its title and roles)."""
    for e in events:
        plan.note(e, e.sim_time)
        if isinstance(e, ev.Facilitation) and e.inject:
            if e.action == "schedule-live":
                plan.add(PreparedInject(
                    id="live", title=e.detail, text=e.text, kind=e.inject_kind or "message",
                    to=e.to, at=minute_of(e.at, e.minute) if e.at else None, when=e.when,
                    after=e.after), "live")
            elif e.action == "move" and any(x.key == e.inject for x in plan.entries):
                entry = plan.get(e.inject)
                moved = (replace(entry.inject, at=minute_of(e.at, e.minute)) if e.at
                         else replace(entry.inject, after=e.after))
                plan._put(replace(entry, inject=moved))
            elif e.action == "cancel" and any(x.key == e.inject for x in plan.entries):
                plan._put(replace(plan.get(e.inject), state=CANCELLED))
        elif isinstance(e, ev.Inject) and e.source == "facilitator":
            waiting = next((x for x in plan.entries if x.movable and x.inject.to == e.to
                            and e.id in ("adhoc", x.inject.id)
                            and e.title in (x.inject.title,
                                            f"Question for discussion: {x.inject.title}")),
                           None)
            if waiting is not None:
                plan.sent(waiting.key, e.sim_time)


def when_words(entry: PlanEntry, time_of: Callable[[int], str]) -> str:
    """'23:40', 'when regional-dns-answers holds, 5 min into it', 'when
    capacity-below-floor has held 180 min of the last 240', 'sent 23:41'."""
    i = entry.inject
    if entry.state == SENT:
        return f"sent {entry.sent_at}"
    if entry.state == CANCELLED:
        return "cancelled"
    if i.at is not None:
        return time_of(i.at)
    if i.within:
        return f"when {i.when} has held {i.after} min of the last {i.within}"
    later = f", {i.after} min into it" if i.after else ""
    return f"when {i.when} holds{later}"
