"""SQLite's SQL text: where statements end, the first keyword, the functions called.

Python's `execute()` takes one statement at a time and `executescript()` must never see
player SQL (it commits first and runs everything), so a submission is split here and each
piece is authorized and run on its own. The world builder (world.py), the exercise check
(prepare.py) and the editor (sqltext.py) split with it too, so none of them can disagree
about where a statement ends (PostgreSQL's dialect is postgres.py beside it). Where a
statement ends is decided by `sqlite3.complete_statement`, which knows strings, comments and
`CREATE TRIGGER ... BEGIN ...; END`; the small tokenizer below only finds the candidate
semicolons (those outside strings, quoted names and comments) and tells comment-only pieces
from real ones.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterator

from raceday.store.dialect.piece import Piece, make_piece

# One alternative per token kind. Unterminated strings, quoted names and block comments run
# to the end of the text, as SQLite's own tokenizer treats them.
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*'?)
  | (?P<quoted>"(?:[^"]|"")*"?|\[[^\]]*\]?|`(?:[^`]|``)*`?)
  | (?P<word>[^\W\d]\w*|\$\w*)
  | (?P<semi>;)
  | (?P<other>.)
    """,
    re.DOTALL | re.VERBOSE,
)


def _tokens(sql: str) -> Iterator[re.Match[str]]:
    return _TOKEN.finditer(sql)


def _name(match: re.Match[str]) -> str | None:
    """The identifier a word or quoted-name token spells (lower case), else None."""
    kind = match.lastgroup
    text = match.group()
    if kind == "word":
        return text.lower()
    if kind == "quoted":
        opener = text[0]
        closer = "]" if opener == "[" else opener
        inner = text[1:-1] if len(text) >= 2 and text.endswith(closer) else text[1:]
        if opener != "[":
            inner = inner.replace(closer * 2, closer)
        return inner.lower()
    return None


def is_blank(sql: str) -> bool:
    """True when the text holds only whitespace, comments and semicolons (nothing to run)."""
    if "--" not in sql and "/*" not in sql:
        return not sql.replace(";", "").strip()
    return all(m.lastgroup in ("ws", "comment", "semi") for m in _tokens(sql))


def statement_pieces(sql: str) -> list[Piece]:
    """Split a text into statements, in order, without blank or comment-only pieces.

    Text after the last complete statement is a last piece when it holds anything but
    comments, so that SQLite reports it ("incomplete input") instead of it vanishing. Raises
    ValueError for NUL characters and UnicodeEncodeError for lone surrogates
    (`complete_statement` cannot take them): callers check for those first.

    The automation runs the same few statements all night: a short text's pieces are kept.
    """
    if len(sql) > _KEPT_CHARS:
        return _split(sql)
    return list(_kept_pieces(sql))


_KEPT_CHARS = 4096


@functools.lru_cache(maxsize=256)
def _kept_pieces(sql: str) -> tuple[Piece, ...]:
    return tuple(_split(sql))


def _split(sql: str) -> list[Piece]:
    pieces: list[Piece] = []
    if ";" not in sql:
        if not is_blank(sql):
            pieces.append(_piece(sql, 0, len(sql)))
        return pieces
    start = 0
    for match in _tokens(sql):
        if match.lastgroup != "semi":
            continue
        end = match.end()
        candidate = sql[start:end]
        if sqlite3.complete_statement(candidate):
            if not is_blank(candidate):
                pieces.append(_piece(sql, start, end))
            start = end
    rest = sql[start:]
    if rest and not is_blank(rest):
        pieces.append(_piece(sql, start, len(sql)))
    return pieces


def _piece(sql: str, start: int, end: int) -> Piece:
    stripped = sql[start:end].strip()
    first_word = 0
    for match in _tokens(stripped):
        if match.lastgroup not in ("ws", "comment"):
            first_word = match.start()
            break
    return make_piece(sql, start, end, first_word)


def split_statements(sql: str) -> list[str]:
    """The statements of `sql` as typed (see `statement_pieces`), stripped of whitespace."""
    return [piece.sql for piece in statement_pieces(sql)]


# A word right at the start: what the tokenizer's first token is then (its "word" kind).
_LEADING_WORD = re.compile(r"[^\W\d]\w*")


def first_keyword(sql: str) -> str:
    """The first word of a statement, upper case ('' if none): EXPLAIN, VACUUM, WITH, ..."""
    leading = _LEADING_WORD.match(sql)
    if leading is not None:
        return leading.group().upper()
    for match in _tokens(sql):
        kind = match.lastgroup
        if kind in ("ws", "comment"):
            continue
        return match.group().upper() if kind == "word" else ""
    return ""


def called_functions(sql: str) -> set[str]:
    """Names (lower case) written as function calls, `name(`, outside strings and comments.

    SQLite does not pass every expression of a DDL statement to the authorizer (an
    `ALTER TABLE ... ADD COLUMN ... CHECK (...)` or a column DEFAULT is stored unseen), so
    the sandbox also looks at the text for the functions it forbids.
    """
    found: set[str] = set()
    if "(" not in sql:
        return found
    pending: str | None = None
    for match in _tokens(sql):
        kind = match.lastgroup
        if kind in ("ws", "comment"):
            continue
        if pending is not None and match.group() == "(":
            found.add(pending)
        pending = _name(match)
    return found
