"""One statement of a text and where it sits: what both dialects' splitters give."""

from __future__ import annotations

from raceday.value import Value, frozen


@frozen
class Piece(Value):
    """One statement of a text, and where it sits in it."""

    start: int
    """Offset of its first character (surrounding whitespace left out)."""
    end: int
    """Offset just past its last character (its semicolon, when it has one)."""
    line: int
    """1-based line of its first word (leading comments skipped), for error messages."""
    sql: str
    """Its text as typed: `text[start:end]`, leading comments and semicolon included."""
    lead: int = 0
    """Length of the comments and whitespace before its first word."""

    @property
    def body(self) -> str:
        """The statement from its first word on (without leading comments)."""
        return self.sql[self.lead :]


def make_piece(sql: str, start: int, end: int, first_word: int) -> Piece:
    """The piece `sql[start:end]`, whitespace stripped; `first_word` is the offset of its
    first word in `sql[start:end].strip()` (after any leading comments)."""
    text = sql[start:end]
    stripped = text.strip()
    begin = start + (len(text) - len(text.lstrip()))
    return Piece(
        start=begin,
        end=begin + len(stripped),
        line=sql.count("\n", 0, begin + first_word) + 1,
        sql=stripped,
        lead=first_word,
    )
