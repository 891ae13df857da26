"""The exercise format's keys (each kind's required and optional ones) and its fixed words.

exercise.schema.json is checked against FIELDS (tests/exercise/test_schema.py)."""

from __future__ import annotations

import re
from datetime import date
from enum import Enum
from typing import TypeVar

FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "exercise": (
        ("id", "title", "summary", "length", "level", "clock", "world", "briefing", "roles"),
        (
            "default_roles",
            "statements",
            "tasks",
            "injects",
            "invariants",
            "milestones",
            "customers",
            "findings",
            "hints",
            "scoring",
            "replay",
            "debrief",
            "truth",
            "panel",
            "sources",
            "phases",
        ),
    ),
    "clock": (("start", "end"), ("date", "zone", "minutes_per_statement", "minutes_per_look")),
    "role": (
        ("id", "name"),
        ("briefing", "read", "write", "break_glass", "schema", "automated", "example"),
    ),
    "statement": (("id", "role", "sql"), ("description", "history")),
    "task": (
        ("id", "role", "at", "title"),
        (
            "statements",
            "every",
            "until",
            "when",
            "skipped",
            "remember",
            "on_zero_rows",
            "on_error",
            "retry",
            "done_when",
            "context",
            "hint",
            "points",
            "proves",
            "keeps",
        ),
    ),
    "retry": (("every",), ("until", "limit")),
    "inject": (("id", "title"),
               ("at", "on_fault", "after", "within", "text", "kind", "to", "source", "phase", "event_at",
                "expect", "objective")),
    "invariant": (("id", "fault"), ("when", "sql", "went_back", "outage")),
    "customer_table": (("id", "from"), ()),
    "milestone": (("id", "label"), ("when", "sql", "again")),
    "finding": (("id", "text", "correct"), ("explanation", "evidence")),
    "truth": (("tables",), ("views",)),
    "truth_view": (("id", "sql"), ()),
    "panel_item": (("id", "label", "sql"), ("show", "onboarding", "count")),
    "hint": (("id", "text"), ("task", "cost", "shown", "play", "earns")),
    "scoring": ((), ("tasks", "detection", "guards", "recovery")),
    "replay": ((), ("until", "delayed", "normal", "shifted", "practice",
                      "practice_baselines", "nights")),
    "nights": (("draw",), ("situation",)),
    "family_night": (("night",), ("weight", "later")),
    "practice_night": (("id", "title", "changes"), ()),
    "practice_change": (("task", "at"), ("bind", "bind_sql", "skip", "then")),
    "shifted": (("start",), ("later", "seed", "renumber", "swap", "count_from")),
    "detection": (
        ("points", "invariant", "full_within", "zero_after"),
        ("match", "wrong_finding_cost", "event_minutes"),
    ),
    "guards": ((), ("points", "steps", "good_path", "harms", "collateral")),
    "harm": (("invariant", "points"), ("grade", "night")),
    "race_step": (("id", "task"), ("when", "happened", "title", "points", "after")),
    "good_path": (("id", "title", "role", "sql", "penalty"), ()),
    "recovery": ((), ("points", "items", "event_minutes", "forged", "safety_nets")),
    "safety_net": (("id", "title", "broken", "penalty"), ()),
    "recovery_item": (
        ("id", "title", "points"),
        ("milestone", "before", "healthy_at_end", "no_relapse", "outage", "full_within"),
    ),
    "debrief": ((), ("shared", "night", "sources", "phases", "checklist")),
    "shared_debrief": ((), ("night", "sources", "phases", "checklist")),
    "phase": (("id", "label", "team"), ("milestone",)),
    "checklist": (("practices",), ("title",)),
    "practice": (("id", "title", "text"),
                 ("action", "judge", "steps", "statements", "harms", "nights", "elsewhere")),
}
"""Every object of the format: (required keys, optional keys). The JSON Schema mirrors it."""

OBJECTIVES = ("detection", "guards", "recovery", "tasks")
"""The objectives an inject's expectations may rate: the parts of the score."""
MAX_EXPECT = 120
"""An expected action or answer is a short line ("names the lock")."""

MOVED: dict[str, dict[str, str]] = {
    "invariant": {"sql": "when"},
    "milestone": {"sql": "when"},
    "race_step": {"happened": "when"},
}
"""Keys that moved, by object: old -> new. A condition (a query whose rows mean "yes") is
`when` everywhere. The old key still loads; giving both is an error; the new key is required
where the old one was, and `raceday check --strict` says where each old key is."""
HINT_SHOWN = ("on-request", "with-task")
HINT_EARNS = ("guards", "recovery", "detection")

LEVELS = ("beginner", "intermediate", "advanced")
SHARED_DIR = "shared"
"""Where files several exercises share live: `exercises/shared/<name>.yaml`, beside them."""
BUILTIN_PARAMETERS = ("now", "now_hhmm")
HAPPENED_PARAMETERS = ("failed", "rowcount")
DEFAULT_DATE = date(2000, 1, 1)

ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
UNQUOTED_TIME = re.compile(r"\d{1,2}:\d{2}")

E = TypeVar("E", bound=Enum)
