"""Task points the final replay does not bear out.

A task that `proves` race steps (or `keeps` harms away) reads as done when the job's row in
the world says so; that row says what the job did, not why (a no-op edit, or a job that did
nothing, reads the same). It counts only when the final replay shows its steps prevented,
the customers spared, and no good write of the normal night refused.
"""

from __future__ import annotations

from raceday.exercise.model import Exercise
from raceday.judge.facts import Facts


def unproven_tasks(exercise: Exercise, facts: Facts) -> dict[str, str]:
    """Each done task the replay does not bear out, with why (in words for the score)."""
    unproven: dict[str, str] = {}
    result = facts.replay
    for task in exercise.tasks:
        if not (task.proves or task.keeps) or task.id not in facts.tasks_done:
            continue
        why = None
        if result is None:
            why = "the race could not be replayed, so nothing proves the guard"
        elif result.blocked_good_writes or any(not ok for _i, _t, ok, _w in facts.good_path):
            why = ("the guards or edits also refuse good writes of the normal night "
                   "(see guards): a job stopped that way proves nothing")
        else:
            status = {st.id: st.status for st in result.steps}
            missed = [p for p in task.proves if status.get(p) != "prevented"]
            # the customers' view decides, not a step's pattern over rows the team's edited
            # statements write
            harmed = [h for h in result.harms if h.harm in task.keeps
                      and not h.practice and h.minutes and h.baseline]
            if missed:
                why = f"the replay shows {', '.join(missed)} not prevented"
            elif harmed:
                fault = next((i.fault for i in exercise.invariants
                              if i.id == harmed[0].harm), harmed[0].harm)
                why = (f"the replay shows '{fault}' still reaching the customers "
                       f"({harmed[0].minutes} minutes in {harmed[0].night})")
        if why is not None:
            unproven[task.id] = why
    return unproven
