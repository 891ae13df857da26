"""The score event's verdict, read once into typed values.

`ScoreEvent.score` is still the JSON mapping scoring writes (`Score.to_json`). This module is
the only place in the debrief that looks inside it; every other module reads a `ScoreView`.
A value of the wrong shape reads as absent, never as a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from raceday.transcript.events import ScoreEvent

SECTIONS = ("detection", "guards", "recovery", "tasks")


@dataclass(frozen=True)
class SectionView:
    name: str
    points: int
    max: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class StepVerdict:
    """A race step as scoring judged it: happened, prevented or "never reached"."""

    id: str
    title: str
    status: str
    detail: str


@dataclass(frozen=True)
class GoodPathVerdict:
    id: str
    title: str
    ok: bool
    why: str


@dataclass(frozen=True)
class ScoreView:
    total: int
    max: int
    ended: str
    fault_occurred: bool
    fault_started_at: str | None
    sections: tuple[SectionView, ...]
    steps: tuple[StepVerdict, ...]
    prevented: tuple[str, ...]
    happened: tuple[str, ...]
    good_path: tuple[GoodPathVerdict, ...]
    hints: tuple[str, ...]
    hint_cost: int
    reasons: tuple[str, ...]


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _items(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list | tuple) else []


_STATUS = {"not reached": "never reached"}


def score_view(event: ScoreEvent) -> ScoreView:
    """The score event as typed values."""
    data = event.score
    fault = _map(data.get("fault"))
    guards = _map(data.get("guards"))
    hints = _map(data.get("hints"))
    sections = tuple(
        SectionView(name, _int(section.get("points")), _int(section.get("max")),
                    _strs(section.get("reasons")))
        for name in SECTIONS if (section := _map(data.get(name))))
    steps = tuple(
        StepVerdict(_str(s.get("id")), _str(s.get("title")),
                    _STATUS.get(_str(s.get("status")), _str(s.get("status"))),
                    _str(s.get("detail")))
        for s in _items(guards.get("steps")) if _str(s.get("id")))
    good = tuple(GoodPathVerdict(_str(p.get("id")), _str(p.get("title")), bool(p.get("ok")),
                                 _str(p.get("why")))
                 for p in _items(guards.get("good_path")))
    started = fault.get("started_at")
    return ScoreView(
        total=_int(data.get("total")),
        max=_int(data.get("max")),
        ended=event.reason,
        fault_occurred=bool(fault.get("occurred")),
        fault_started_at=started if isinstance(started, str) else None,
        sections=sections,
        steps=steps,
        prevented=_strs(guards.get("prevented")),
        happened=_strs(guards.get("happened")),
        good_path=good,
        hints=_strs(hints.get("revealed")),
        hint_cost=_int(hints.get("cost")),
        reasons=_strs(data.get("reasons")),
    )
