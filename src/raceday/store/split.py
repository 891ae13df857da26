"""Splitting a player's submission into statements, and a light look at SQL text.

Python's `execute()` takes one statement at a time and `executescript()` must never see
player SQL (it commits first and runs everything), so a submission is split here and each
piece is authorized and run on its own. Where a statement ends is decided by
`sqlite3.complete_statement`, which knows strings, comments and `CREATE TRIGGER ... BEGIN
...; END`; the small tokenizer below only finds the candidate semicolons (those outside
strings, quoted names and comments) and tells comment-only pieces from real ones.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

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


def split_statements(sql: str) -> list[str]:
    """Split a submission into statements, in order, without blank or comment-only pieces.

    Each piece keeps its text as typed (leading comments, trailing semicolon), stripped of
    surrounding whitespace. Text after the last complete statement is returned as a last
    piece when it holds anything but comments, so that SQLite reports it ("incomplete
    input") instead of it vanishing. Raises ValueError for NUL characters and
    UnicodeEncodeError for lone surrogates (`complete_statement` cannot take them): callers
    check for those first.
    """
    if ";" not in sql:
        return [] if is_blank(sql) else [sql.strip()]
    pieces: list[str] = []
    start = 0
    for match in _tokens(sql):
        if match.lastgroup != "semi":
            continue
        end = match.end()
        candidate = sql[start:end]
        if sqlite3.complete_statement(candidate):
            if not is_blank(candidate):
                pieces.append(candidate.strip())
            start = end
    rest = sql[start:]
    if rest and not is_blank(rest):
        pieces.append(rest.strip())
    return pieces


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
