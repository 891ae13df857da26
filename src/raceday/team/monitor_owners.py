"""Whose monitor is whose in a team session: a monitor belongs to the seat that saved it.

Any seat could remove or overwrite another seat's monitor (the remove carried no role, and
two seats may share a role). The host keeps, for each saved monitor, the seat whose command
saved it (rebuilt from the transcript on resume: each seat's command is recorded just before
what it did), and refuses another seat's remove or save of that name."""

from __future__ import annotations

from collections.abc import Iterable

from raceday.transcript import events as ev


class MonitorOwners:
    """Monitor name -> the seat that saved it."""

    def __init__(self) -> None:
        self._seat_of: dict[str, str] = {}

    def refusal(self, seat: str, role: str, name: str, owner_role: str | None) -> str | None:
        """Why `seat` may not remove or overwrite monitor `name` (None: it may). A monitor
        whose seat is not known (saved before seats were recorded) is its role's."""
        name = name.strip()
        if owner_role is None:  # no such monitor: saving it makes it the seat's
            return None
        owner = self._seat_of.get(name)
        if owner == seat or (owner is None and owner_role == role):
            return None
        whose = f"seat {owner}'s" if owner is not None else f"role {owner_role}'s"
        return f"monitor {name!r} is {whose}: only the seat that saved it may change or remove it"

    def note(self, seat: str, event: ev.Event | None) -> None:
        """What a seat's monitor command did: a save makes the monitor the seat's."""
        if isinstance(event, ev.MonitorSaved):
            self._seat_of[event.name] = seat
        elif isinstance(event, ev.MonitorRemoved):
            self._seat_of.pop(event.name, None)

    def rebuild(self, events: Iterable[ev.Event]) -> None:
        """From a transcript: each MonitorSaved follows its seat's command."""
        seat: str | None = None
        for event in events:
            if isinstance(event, ev.SeatCommand):
                seat = event.seat if event.action in ("monitor", "remove_monitor") else None
            elif isinstance(event, ev.MonitorRemoved):
                self._seat_of.pop(event.name, None)
            elif isinstance(event, ev.MonitorSaved) and seat is not None:
                self._seat_of[event.name] = seat
                seat = None
