"""The score as the terminal, the end screen and `review` show it, read from a score event.

A score event still carries the verdict as scoring wrote it, a JSON mapping (`event.score`).
This module is the one place a consumer picks that mapping apart; everything else reads a
`ScoreView`. (When scoring gives typed verdicts, they replace this.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from raceday.transcript.events import ScoreEvent

PARTS = ("detection", "guards", "recovery", "tasks")


@dataclass(frozen=True)
class Part:
    """One section of the score: its name and points."""

    name: str
    points: int
    max: int


@dataclass(frozen=True)
class StepVerdict:
    """One race step as scoring judged it."""

    id: str
    title: str
    status: str  # prevented | happened | not reached
    detail: str = ""


@dataclass(frozen=True)
class ScoreView:
    total: int
    max: int
    reason: str
    fault_occurred: bool
    fault_started_at: str | None
    parts: tuple[Part, ...]
    steps: tuple[StepVerdict, ...]
    hints_revealed: tuple[str, ...]
    hint_cost: int
    reasons: tuple[str, ...]
    detection_latency: int | None = None
    detection_event_minutes: int | None = None
    minutes_to_restore: int | None = None
    recovery_event_minutes: int | None = None

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts if p.name == name), None)

    @property
    def race_prevented(self) -> bool:
        """Every race step prevented outright (so there was no fault to detect)."""
        return bool(self.steps) and all(s.status == "prevented" for s in self.steps)

    @property
    def detection_full(self) -> bool:
        part = self.part("detection")
        return part is not None and part.points == part.max


def read_score(event: ScoreEvent) -> ScoreView:
    """The score event's mapping, read once (a missing or odd section reads as absent)."""
    score = event.score
    fault = _section(score, "fault")
    parts = tuple(Part(name, _int(s.get("points")), _int(s.get("max")))
                  for name in PARTS if (s := _section(score, name)))
    guards = _section(score, "guards")
    steps = tuple(
        StepVerdict(id=str(s.get("id", "")), title=str(s.get("title") or s.get("id", "")),
                    status=str(s.get("status", "")), detail=str(s.get("detail") or ""))
        for s in _list(guards.get("steps")) if isinstance(s, Mapping))
    hints = _section(score, "hints")
    detection = _section(score, "detection")
    recovery = _section(score, "recovery")
    return ScoreView(
        total=_int(score.get("total")),
        max=_int(score.get("max")),
        reason=event.reason,
        fault_occurred=bool(fault.get("occurred")),
        fault_started_at=_text(fault.get("started_at")),
        parts=parts,
        steps=steps,
        hints_revealed=tuple(str(h) for h in _list(hints.get("revealed"))),
        hint_cost=_int(hints.get("cost")),
        reasons=tuple(str(r) for r in _list(score.get("reasons"))),
        detection_latency=_opt_int(detection.get("latency_minutes")),
        detection_event_minutes=_opt_int(detection.get("event_minutes")),
        minutes_to_restore=_opt_int(recovery.get("minutes_to_restore")),
        recovery_event_minutes=_opt_int(recovery.get("event_minutes")),
    )


def _section(score: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = score.get(name)
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
