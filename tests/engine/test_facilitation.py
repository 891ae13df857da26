"""What the people around a session do goes into its transcript: the cast, the
facilitator's clock and injects, observers' notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from raceday.engine.clock import Pace
from raceday.engine.headless import open_session
from raceday.engine.load import load_named_exercise
from raceday.engine.session import SessionError
from raceday.transcript import events as ev
from raceday.transcript.log import read_events


def test_the_cast_the_facilitator_and_observer_notes_are_recorded(tmp_path: Path) -> None:
    exercise = load_named_exercise("dynamodb-dns-race")
    session = open_session(exercise, ["planner", "responder"], tmp_path, Pace.LIVE)
    session.record(ev.Cast(names={"planner": "Ana", "responder": "Cy"}))
    session.record(ev.Facilitation(action="pause"))
    planned = session.schedule_inject("Exec asks", "Status?", at=10, to=("responder",))
    assert isinstance(planned, ev.Facilitation) and planned.at == "23:10"
    session.note("the planner hesitated", author="Dee (observer)")
    session.wait(None)  # the planned inject is the next one anyone sees
    injects = [e for e in session.events if isinstance(e, ev.Inject)]
    assert injects[-1].title == "Exec asks" and injects[-1].minute == 10
    assert injects[-1].to == ("responder",) and injects[-1].source == "facilitator"
    with pytest.raises(SessionError):
        session.record(ev.Fault(fault="x", invariant="y"))
    read = read_events(session.folder).events
    cast = next(e for e in read if isinstance(e, ev.Cast))
    assert dict(cast.names) == {"planner": "Ana", "responder": "Cy"}
    note = next(e for e in read if isinstance(e, ev.Note))
    assert note.author == "Dee (observer)" and note.sim_time == "23:00"
