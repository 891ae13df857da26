"""Do the team's guards stop the race's steps now? Tonight's race (and the variant, when the
race shows a guard at work) played on a copy of the team's world, so the task panel can close
a guard task the moment the guard is in place, without a ctrl+r. A "guard" that also stops
the normal night's good writes (a dropped table, a trigger refusing everything) stops
nothing here, as the judge rules at the end.

Nothing is recorded and nothing scores: the score's verdicts come from the final replay. The
answer is the same `prevented` set a ctrl+r replay would show for the race steps.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from raceday.engine import collector
from raceday.engine.night import Night, replay_until
from raceday.engine.replay import copy_world, normal_nights_aside, play_night
from raceday.engine.replay_exercises import variant_of, with_statements
from raceday.engine.replay_outcomes import merge_steps, step_replays
from raceday.store.replay_world import build_replay_world


def has_guard_tasks(session: Night) -> bool:
    """Only an exercise with guard tasks (`proves`) on a world raceday can copy needs it."""
    return (session.store.world_file is not None
            and any(task.proves for task in session.exercise.tasks)
            and bool(session.facts.race_steps(session.exercise)))


def prevented_now(session: Night) -> frozenset[str]:
    """The race steps the team's world and edits would stop if the race were played now."""
    if not has_guard_tasks(session):
        return frozenset()
    exercise = session.exercise
    team_exercise = with_statements(exercise, session.statement_sql)
    until = replay_until(session)
    with collector.paused(), tempfile.TemporaryDirectory(prefix="guards-",
                                                         dir=session.folder) as scratch:
        folder = Path(scratch)
        live = folder / "team-now.db"
        session.store.backup_to(live)
        race_world = folder / "race.db"
        build_replay_world(live, exercise.world_sql, race_world)
        kind = type(session)
        nights = None
        if exercise.replay is not None and exercise.replay.delayed:
            copy_world(race_world, folder / "normal-team.db")
            nights = normal_nights_aside(kind, exercise, team_exercise,
                                          folder / "normal-team.db", folder, until, "", (),
                                          False, [])  # played here: no child from a thread
        race = play_night(kind, team_exercise, race_world, folder / "race", until, transcript=False)
        steps = step_replays(exercise, race)
        if nights is not None:
            blocked, _checks, harmed = nights()
            if blocked or harmed:  # it stops the service doing its job: nothing is in place
                return frozenset()
        shift = session.variant
        if shift is not None and any(s.status == "prevented" for s in steps):
            shifted_world = folder / "shifted.db"
            build_replay_world(live, exercise.world_sql, shifted_world, shift.seed)
            shifted = play_night(kind, variant_of(team_exercise, shift), shifted_world,
                            folder / "shifted", until, transcript=False)
            steps = merge_steps(steps, step_replays(variant_of(exercise, shift), shifted), "",
                                 reveal=False)
    return frozenset(s.id for s in steps if s.status == "prevented")
