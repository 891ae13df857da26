"""What a changed race needs (the variant's nights) is started the moment a player first
changes the schema or a statement, once, and never for a team that changed neither: the
automation's own DDL, a failed statement and a read are no change."""

from __future__ import annotations

from collections.abc import Callable

from raceday.engine.race_changes import changes_race, on_first_change
from raceday.transcript import events as ev


class FakeSession:
    def __init__(self, events: list[ev.Event] | None = None) -> None:
        self.events: list[ev.Event] = events or []
        self.listeners: list[Callable[[ev.Event], None]] = []

    def subscribe(self, listener: Callable[[ev.Event], None]) -> None:
        self.listeners.append(listener)

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        for listener in self.listeners:
            listener(event)


def ddl(*, automated: bool = False, ok: bool = True) -> ev.Statement:
    return ev.Statement(role="responder", sql="CREATE INDEX i ON plan (id)", ok=ok,
                        schema_changed=ok, automated=automated,
                        error=None if ok else "syntax error")


def test_only_a_players_schema_change_or_an_edit_changes_the_race() -> None:
    assert changes_race(ddl())
    assert changes_race(ev.Edit(role="responder", statement="apply", sql="SELECT 1",
                                before="SELECT 2"))
    assert not changes_race(ddl(automated=True))  # the exercise's own: in its race too
    assert not changes_race(ddl(ok=False))
    assert not changes_race(ev.Statement(role="responder", sql="SELECT 1", ok=True))
    assert not changes_race(ev.Statement(role="responder", sql="UPDATE plan SET id = id",
                                         ok=True, writes=("plan",)))  # rows: not the race's


def test_started_once_on_the_first_change_and_not_before() -> None:
    session, started = FakeSession(), []
    on_first_change(session, lambda: started.append(len(session.events)))
    session.emit(ev.Statement(role="responder", sql="SELECT 1", ok=True))
    session.emit(ddl(automated=True))
    assert started == []
    session.emit(ddl())
    session.emit(ev.Edit(role="responder", statement="apply", sql="SELECT 1", before=""))
    assert started == [3]


def test_a_resumed_session_that_changed_the_race_starts_at_once() -> None:
    session, started = FakeSession([ddl()]), []
    on_first_change(session, lambda: started.append(True))
    assert started == [True] and session.listeners == []


def test_a_start_that_fails_is_not_the_sessions_failure() -> None:
    session = FakeSession()

    def broken() -> None:
        raise RuntimeError("no server")

    on_first_change(session, broken)
    session.emit(ddl())  # logged; the replay plays the nights itself
    session.emit(ddl())
