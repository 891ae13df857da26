"""What the guards' reasons say of how they were judged (engine to judge, a tiny night)."""

from __future__ import annotations

from collections.abc import Callable

from raceday.engine.session import Session


def test_the_guards_reasons_say_how_they_were_judged_once_and_name_an_unbuilt_guard(
        make_session: Callable[..., Session]) -> None:
    """A failed schema change is named in the guards' reasons; and a night judged without a
    replay is not also said to be one that "could not be replayed"."""
    plain = make_session()
    plain.start()
    score = plain.end()
    assert score.guards is not None
    said = "\n".join(score.guards.reasons)
    assert "could not be replayed" not in said and "schema change" not in said, said
    session = make_session()
    session.start()
    session.execute("operator", "CREATE TRIGGER nope BEFORE UPDATE ON no_such_table "
                    "BEGIN SELECT 1; END")
    score = session.end()
    assert score.guards is not None
    said = "\n".join(score.guards.reasons)
    assert "could not be replayed" not in said, said
    assert ("guards: 1 schema change of the team's failed and built nothing (first: CREATE "
            "TRIGGER nope BEFORE … at 00:00: no such table: main.no_such_table): judged "
            "without them") in said, said
