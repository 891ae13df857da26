"""The facilitator guide as a document: sections of a few kinds of block, built once from the
exercise (`guide.py`) and rendered as Markdown (`guide_markdown.py`) or HTML (`guide_html.py`),
so the two formats cannot say different things.

Text may mark `code` with backticks and **bold** with double stars, as Markdown does; the HTML
renderer escapes the text first and then turns those two marks into tags.
"""

from __future__ import annotations

from raceday.value import Value, frozen


@frozen
class Para(Value):
    """A paragraph; `note` sets it apart (a warning the facilitator must not miss)."""

    text: str
    note: bool = False


@frozen
class Items(Value):
    """A list of short lines, numbered when their order matters (a script, a procedure)."""

    items: tuple[str, ...]
    ordered: bool = False


@frozen
class Table(Value):
    """Rows under a header; on a narrow screen each row becomes a card of labelled cells."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@frozen
class Commands(Value):
    """Shell lines to type as they stand (a comment after `#` says what each does)."""

    lines: tuple[str, ...]


@frozen
class Field(Value):
    """One labelled part of a card: a line, or a list of them."""

    label: str
    lines: tuple[str, ...]
    ordered: bool = False


@frozen
class Card(Value):
    """One inject of the MSEL: a heading and its labelled parts, kept together on paper."""

    title: str
    anchor: str
    fields: tuple[Field, ...]


@frozen
class Sub(Value):
    """A heading inside a section."""

    title: str


Block = Para | Items | Table | Commands | Card | Sub


@frozen
class Section(Value):
    id: str
    title: str
    blocks: tuple[Block, ...]


@frozen
class Guide(Value):
    """The whole guide: a title, the line under it, the facts line and the sections."""

    title: str
    lede: str
    facts: str
    sections: tuple[Section, ...]


def flat(text: str) -> str:
    """Exercise text on one line (a table cell, a list item): folded YAML keeps its breaks."""
    return " ".join(text.split())
