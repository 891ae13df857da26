"""The debrief: what a team reads when the exercise ends, built from the transcript alone.

`build_debrief` turns a session's typed events into a `Debrief` (frozen values, no I/O): the
summary and score with every reason, the team's timeline beside the real night's, every
statement that changed the world, the monitors and declarations, the guards and the replay,
the exercise's checklist with what the team was seen doing, and an after-action skeleton.
Where a transcript cannot tell, the debrief says so ("not seen in this session").

The modules, each one concept:

- `model`: the frozen values a debrief is made of.
- `reading`: the events read once (the clock, the fault, stop, repair, runs, guards in
  place), with the score's typed verdicts (`transcript.verdicts`).
- `guards`, `timeline`, `checklist`, `report`: one section each; `build` puts them together.
- `review`: the world so far, event by event (`raceday review`).
- `words`: wordings the builders and renderers share.
- `files`: render (md, html, json), load, write, and the `raceday debrief` command.

The renderers (`markdown`, `html`,
`terminal`) import only `model` and `words`; `render_markdown`,
`render_terminal`, `terminal_renderables` and `review`'s `WorldSoFar` and `world_states`
are re-exported here, imported when first asked for (a headless `raceday run` needs only
Markdown).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.debrief.files import (
    DEBRIEF_FILE,
    FORMATS,
    debrief_command,
    load_debrief,
    render,
    render_json,
    save_debrief,
    with_edits,
    write_debrief,
)
from raceday.transcript.debrief.model import NOT_SEEN, Debrief
from raceday.transcript.debrief.words import duration

if TYPE_CHECKING:  # at run time `__getattr__` imports them, when first asked for
    from raceday.transcript.debrief.markdown import render_markdown as render_markdown
    from raceday.transcript.debrief.review import WorldSoFar as WorldSoFar
    from raceday.transcript.debrief.review import world_states as world_states
    from raceday.transcript.debrief.terminal import render_terminal as render_terminal
    from raceday.transcript.debrief.terminal import (
        terminal_renderables as terminal_renderables,
    )

__all__ = [
    "DEBRIEF_FILE", "FORMATS", "NOT_SEEN", "Debrief", "WorldSoFar", "build_debrief",
    "debrief_command", "duration", "load_debrief", "render", "render_json", "render_markdown",
    "render_terminal", "save_debrief", "terminal_renderables", "with_edits", "world_states",
    "write_debrief",
]

_RENDERERS = {"render_markdown": "debrief.markdown", "render_terminal": "debrief.terminal",
              "terminal_renderables": "debrief.terminal", "WorldSoFar": "debrief.review",
              "world_states": "debrief.review"}


def __getattr__(name: str) -> object:
    module = _RENDERERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"raceday.transcript.{module}"), name)
