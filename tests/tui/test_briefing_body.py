"""The briefing's first screenful kept for the next start: found only for the same file,
settings and width, never for a file written since, and a damaged one is a miss."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from rich.console import Console
from rich.markdown import Markdown
from rich.segment import Segment

from raceday.tui.briefing_body import keep_body, read_body

VIEW = "solo turns 60.0 None truecolor"


def _segments(width: int = 80) -> list[Segment]:
    console = Console(width=width, color_system="truecolor")
    text = "# Mini DNS race\n\nAbout 15 minutes · level **intro**\n\n| role | who |\n|---|---|\n" \
           "| planner | the [Planner](https://example.com) |\n\n```sql\nSELECT 1;\n```\n"
    return list(console.render(Markdown(text), console.options))


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An exercise file written before this process began (an hour ago)."""
    monkeypatch.setenv("RACEDAY_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "exercise.yaml"
    path.write_text("id: mini\n", encoding="utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def _drawn(segments: list[Segment]) -> list[tuple[str, str]]:
    """What a screen draws of them (no style and an empty style draw the same)."""
    return [(s.text, str(s.style or "")) for s in segments]


def test_a_kept_screenful_reads_back_as_drawn(source: Path) -> None:
    segments = _segments()
    assert keep_body(source, VIEW, 80, segments)
    back = read_body(source, VIEW, 80)
    assert back is not None and _drawn(back) == _drawn(segments)
    assert any("link https://example.com" in str(s.style) for s in back)  # links kept


def test_another_width_settings_or_file_is_a_miss(source: Path) -> None:
    assert keep_body(source, VIEW, 80, _segments())
    assert read_body(source, VIEW, 100) is None
    assert read_body(source, "solo live 60.0 None truecolor", 80) is None
    source.write_text("id: mini\ntitle: edited\n", encoding="utf-8")
    assert read_body(source, VIEW, 80) is None


def test_a_file_written_since_this_process_began_is_not_kept(source: Path) -> None:
    source.write_text("id: mini\n", encoding="utf-8")  # now: maybe after it was loaded
    assert not keep_body(source, VIEW, 80, _segments())
    assert read_body(source, VIEW, 80) is None


@pytest.mark.parametrize("damage", ['[["a", "bold"', '{"a": 1}', '[["a", 3]]',
                                    '[["a", "not-a-style-at-all("]]'])
def test_a_damaged_kept_file_is_a_miss(source: Path, tmp_path: Path, damage: str) -> None:
    assert keep_body(source, VIEW, 80, _segments())
    (kept,) = (tmp_path / "cache" / "briefing-bodies").iterdir()
    kept.write_text(damage, encoding="utf-8")
    assert read_body(source, VIEW, 80) is None


def test_no_cache_folder_keeps_nothing(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RACEDAY_CACHE_DIR", "")
    assert not keep_body(source, VIEW, 80, _segments())
    assert read_body(source, VIEW, 80) is None
