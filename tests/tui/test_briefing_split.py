"""The briefing's body is drawn a screenful first, then whole: the two halves, rendered
apart and joined, read exactly as the whole rendered at once, for every bundled exercise."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from rich.markdown import Markdown
from rich.segment import Segment

from raceday.engine.clock import Pace
from raceday.engine.load import find_exercises
from raceday.tui.screens.briefing import first_screenful, situation_markdown
from raceday.tui.settings import Settings

pytestmark = pytest.mark.tui


def _lines(console: Console, text: str, width: int) -> list[Segment]:
    options = console.options.update_width(width).update(highlight=False)
    return list(console.render(Markdown(text), options))


@pytest.mark.parametrize("width", [60, 116])
def test_the_first_screenful_and_the_rest_read_as_the_whole(width: int) -> None:
    console = Console(width=width + 2, color_system="truecolor", force_terminal=True)
    cut_some = False
    for entry in find_exercises(check_sql=False):
        assert entry.exercise is not None
        text = situation_markdown(entry.exercise, Settings("solo", Pace.TURNS, 60.0,
                                                           Path("transcripts")))
        cut = first_screenful(text)
        if not cut:
            continue
        cut_some = True
        assert text[cut:].startswith("\n## ")
        joined = [*_lines(console, text[:cut], width), Segment.line(),
                  *_lines(console, text[cut:], width)]
        assert joined == _lines(console, text, width), entry.exercise.id
    assert cut_some  # the flagship's briefing is longer than a screenful


def test_a_heading_inside_a_fenced_block_is_not_a_cut() -> None:
    text = "x" * 1600 + "\n```\n## not a heading\n```\n" + "\n## Roles\n\ntext\n"
    assert text[first_screenful(text):].startswith("\n## Roles")
    assert first_screenful("# short\n\n## Roles\n") == 0
