"""The briefing's first frame is read from exercise.yaml without YAML: what it reads is what
the loader reads, and any form it is not sure of is left to the loader (None)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import DATA

from raceday.engine.load import load_exercise
from raceday.tui.briefing_head import BriefingHead, read_head

EXERCISES = sorted(p.parent for p in (Path(__file__).parents[2] / "exercises").glob(
    "*/exercise.yaml")) + [DATA / "mini-dns", DATA / "mini-race"]


@pytest.mark.parametrize("folder", EXERCISES, ids=lambda p: p.name)
def test_the_first_frame_reads_what_the_loader_reads(folder: Path) -> None:
    head = read_head(folder)
    assert head is not None  # every exercise we ship opens without waiting for its load
    assert head == BriefingHead.of(load_exercise(folder, check_sql=False))


BASE = """\
id: t
title: {title}
summary: {summary}
clock:
  start: {start}
  end: "02:00"
  zone: PDT
"""


@pytest.mark.parametrize(("title", "summary", "start", "expected"), [
    ('"A: quoted"', "plain words, here", '"23:00"', ("A: quoted", "plain words, here", "23:00")),
    ("'It''s'", ">-\n  folded\n  over lines\n\n  and a paragraph", '"9:05"',
     ("It's", "folded over lines and a paragraph", "09:05")),
    ("Plain title  # a comment", "|\n  literal\n    kept indented", "'23:00'",
     ("Plain title", "literal kept indented", "23:00")),
])
def test_plain_forms_are_read(tmp_path: Path, title: str, summary: str, start: str,
                              expected: tuple[str, str, str]) -> None:
    (tmp_path / "exercise.yaml").write_text(BASE.format(title=title, summary=summary,
                                                        start=start))
    assert read_head(tmp_path) == BriefingHead(*expected, "PDT")


@pytest.mark.parametrize(("title", "summary", "start"), [
    ('"tab\\tescaped"', "s", '"23:00"'),  # an escape
    ("yes", "s", '"23:00"'),  # YAML reads a boolean
    ("t", "s", "23:00"),  # YAML reads a number (the loader says to quote it)
    ("&anchor t", "s", '"23:00"'),
    ("t", "two\n  lines", '"23:00"'),  # a plain scalar over two lines
    ("t", "s", '"25:00"'),  # not a time
    ("|\n  block title", "s", '"23:00"'),  # a block title keeps its line breaks
])
def test_forms_it_is_not_sure_of_are_left_to_the_loader(
        tmp_path: Path, title: str, summary: str, start: str) -> None:
    (tmp_path / "exercise.yaml").write_text(BASE.format(title=title, summary=summary,
                                                        start=start))
    assert read_head(tmp_path) is None


@pytest.mark.parametrize("text", [
    "---\n" + BASE.format(title="t", summary="s", start='"23:00"'),
    BASE.format(title="t", summary="s", start='"23:00"') + "title: again\n",
    BASE.format(title="t", summary="s", start='"23:00"').replace("clock:\n", "clock: {}\n"),
    "- a list\n",
    "",
])
def test_documents_it_is_not_sure_of_are_left_to_the_loader(tmp_path: Path, text: str) -> None:
    (tmp_path / "exercise.yaml").write_text(text)
    assert read_head(tmp_path) is None
