"""The briefing's points, taken from the rubric the judge scores by.

A briefing says what each part of the score is worth; written by hand, those numbers drifted
from the rubric (the flagship's said guards were 30 + 10 while the judge gave 20 + 5 and three
practice nights of 5). A briefing writes `{{guards}}` for a part's points, `{{guards:HARM}}`
for a harm kept away on the race nights, `{{guards:HARM@NIGHT}}` on a practice night,
`{{guards:nights}}` for how many practice nights are judged, `{{collateral}}` for what one
refused good write costs, and `{{recovery:ITEM}}` for a recovery item; raceday fills them in
when it reads the exercise, and a name the rubric does not have is the exercise's error.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from raceday.exercise.model import Scoring

_TOKEN = re.compile(r"\{\{\s*([a-z-]+)(?::([A-Za-z0-9_.@-]+))?\s*\}\}")


def expand_rubric(text: str, scoring: Scoring, problem: Callable[[int, str], None]) -> str:
    """`text` with every rubric token replaced by its figure; each unknown one reported to
    `problem` with its line (and left as written)."""

    def figure(match: re.Match[str]) -> str:
        part, detail = match.group(1), match.group(2) or ""
        value = _figure(scoring, part, detail)
        if value is None:
            line = text.count("\n", 0, match.start()) + 1
            problem(line, f"{match.group(0)} names nothing in the exercise's scoring")
            return match.group(0)
        return value

    return _TOKEN.sub(figure, text)


def _figure(scoring: Scoring, part: str, detail: str) -> str | None:
    guards, recovery, detection = scoring.guards, scoring.recovery, scoring.detection
    if part == "detection" and not detail and detection is not None:
        return str(detection.points)
    if part == "collateral" and not detail and guards is not None:
        return str(guards.collateral)
    if part == "recovery" and recovery is not None:
        if not detail:
            return str(recovery.points)
        return next((str(i.points) for i in recovery.items if i.id == detail), None)
    if part != "guards" or guards is None:
        return None
    if not detail:
        return str(guards.points)
    if detail == "nights":
        return str(len({h.night for h in guards.harms if h.night}))
    harm, _, night = detail.partition("@")
    worth = [h.points for h in guards.harms if h.invariant == harm and h.night == night]
    return str(sum(worth)) if worth else None
