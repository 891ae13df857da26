"""What the session taught, in three lines: the practices done, the ones left, what next.

Read from the checklist the debrief already built (each practice's status rests on its own
evidence), so the three lines cannot credit what the checklist does not: a newcomer reads
them first, and the checklist below says why.
"""

from __future__ import annotations

from collections.abc import Sequence

from raceday.transcript import events as ev
from raceday.transcript.debrief.model import NOT_SEEN, ChecklistItem


def learned_lines(exercise: str, items: Sequence[ChecklistItem],
                  practices: Sequence[ev.PracticeInfo]) -> tuple[str, ...]:
    """Three lines (none when the exercise has no checklist): practised, still to practise,
    and the next step (the first practice left's action, or the next exercise)."""
    judged = [i for i in items if i.status in ("done", "partly done", "not done", NOT_SEEN)]
    if not judged:
        return ()
    done = [i.practice for i in judged if i.status == "done"]
    partly = [i.practice for i in judged if i.status == "partly done"]
    left = [i for i in judged if i.status != "done"]
    if done or partly:
        practised = "You practised: " + _joined(done) if done else "You practised"
        if partly:
            practised += ("; partly: " if done else " partly: ") + _joined(partly)
    else:
        practised = "You practised none of this exercise's practices yet"
    if left:
        still = "Still to practise: " + _joined([i.practice for i in left])
    else:
        still = f"Still to practise: nothing here; all {len(judged)} practices are done"
    actions = {p.id: p.action for p in practices}
    action = next((actions.get(i.id, "") for i in left if actions.get(i.id)), "")
    if left and action:
        then = f"Next: play it again (raceday play {exercise}) and {_lower(action)}"
    elif left:
        then = f"Next: play it again (raceday play {exercise}) for {left[0].practice}"
    else:
        then = "Next: raceday opens the launcher on the exercise to play next"
    return tuple(_sentence(line) for line in (practised, still, then))


def _joined(names: Sequence[str]) -> str:
    """Titles joined with semicolons: a title may hold commas ("Read, decide, write later")."""
    return "; ".join(names)


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _sentence(text: str) -> str:
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."
