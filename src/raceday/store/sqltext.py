"""SQL text helpers for the editor: which statement is under the cursor, completion, colours.

Where a statement ends is decided by the dialect's own splitter (store/dialect/), the one the
stores use, so the editor and the engine never disagree. Nothing here knows Textual.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from raceday.store.dialect import postgres as pgsql
from raceday.store.dialect.sqlite import statement_pieces
from raceday.value import Value, frozen

KEYWORDS = (
    "ABORT ACTION ADD AFTER ALL ALTER AND AS ASC BEFORE BEGIN BETWEEN BY CASCADE CASE CAST "
    "CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT_TIMESTAMP DEFAULT "
    "DELETE DESC DISTINCT DROP EACH ELSE END ESCAPE EXCEPT EXISTS EXPLAIN FAIL FOR FOREIGN "
    "FROM FULL GLOB GROUP HAVING IF IGNORE IN INDEX INNER INSERT INSTEAD INTERSECT INTO IS "
    "JOIN KEY LEFT LIKE LIMIT NEW NOT NULL OF OFFSET OLD ON OR ORDER OUTER PRIMARY QUERY "
    "RAISE RECURSIVE REFERENCES REPLACE RESTRICT RETURNING RIGHT ROLLBACK ROW SELECT SET "
    "TABLE TEMP THEN TO TRANSACTION TRIGGER UNION UNIQUE UPDATE USING VALUES VIEW WHEN "
    "WHERE WITH WITHOUT"
).split()

FUNCTIONS = (
    "abs avg coalesce count group_concat ifnull iif instr length lower max min nullif "
    "replace round substr sum total trim typeof upper"
).split()
"""Functions completion offers: never one the sandbox refuses (printf, format)."""

_KEYWORD_SET = frozenset(KEYWORDS)
_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*'?)
  | (?P<quoted>"(?:[^"]|"")*"?)
  | (?P<number>\b\d+(?:\.\d+)?\b)
  | (?P<param>[:@$][A-Za-z_]\w*)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<op>[-+*/%<>=!|]+|[(),;.])
    """,
    re.DOTALL | re.VERBOSE,
)
_WORD_BEFORE = re.compile(r"[A-Za-z_][\w.]*$")


@frozen
class Span(Value):
    """A statement's place in the editor's text, as character offsets."""

    start: int
    end: int
    sql: str


def statement_spans(text: str) -> list[Span]:
    """Every statement of `text` with where it sits, in order (blank pieces left out).

    A PostgreSQL function body in dollar quotes holds semicolons that end nothing; SQLite has
    no dollar quotes, so text with one is cut by PostgreSQL's dialect (from its first word:
    comments before it are not the statement's)."""
    if "$" in text and any(t.kind == "dollar" for t in pgsql.tokens(text)):
        return [Span(p.start + p.lead, p.end, p.body) for p in pgsql.statement_pieces(text)]
    try:
        pieces = statement_pieces(text)
    except (ValueError, UnicodeEncodeError):
        stripped = text.strip()
        return [Span(text.find(stripped), text.find(stripped) + len(stripped), stripped)]
    return [Span(piece.start, piece.end, piece.sql) for piece in pieces]


def statement_at(text: str, offset: int) -> str:
    """The statement the cursor at `offset` is in or just after; '' when there is none."""
    spans = statement_spans(text)
    if not spans:
        return ""
    chosen = spans[0]
    for span in spans:
        if span.start <= offset:
            chosen = span
        else:
            break
    return chosen.sql


def offset_of(text: str, row: int, column: int) -> int:
    """The character offset of (row, column) in `text`."""
    lines = text.split("\n")
    row = max(0, min(row, len(lines) - 1))
    return sum(len(line) + 1 for line in lines[:row]) + min(column, len(lines[row]))


def word_before(line: str, column: int) -> str:
    """The identifier (maybe `table.col`) that ends at `column`, for completion."""
    match = _WORD_BEFORE.search(line[:column])
    return match.group() if match else ""


@frozen
class Completion(Value):
    """What completing a prefix gives: the text to insert and the choices left."""

    insert: str
    choices: tuple[str, ...]


def complete(prefix: str, names: Iterable[str], columns: dict[str, tuple[str, ...]]) -> Completion:
    """Complete `prefix` from table names, their columns, keywords and common functions.

    `table.co` completes from that table's columns. Keywords are offered in the case typed.
    """
    if not prefix:
        return Completion("", ())
    if "." in prefix:
        table, _, part = prefix.rpartition(".")
        pool: list[str] = list(columns.get(table.split(".")[-1].lower(), ()))
        stem = part
    else:
        seen: dict[str, None] = {}
        for name in names:
            seen.setdefault(name, None)
        for cols in columns.values():
            for col in cols:
                seen.setdefault(col, None)
        upper = prefix[:1].isupper()
        for word in KEYWORDS:
            seen.setdefault(word if upper else word.lower(), None)
        for func in FUNCTIONS:
            seen.setdefault(func, None)
        pool = list(seen)
        stem = prefix
    low = stem.lower()
    matches = sorted({c for c in pool if c.lower().startswith(low) and c.lower() != low},
                     key=lambda c: (len(c), c))
    if not matches:
        return Completion("", ())
    if len(matches) == 1:
        return Completion(matches[0][len(stem):], ())
    common = _common_prefix([m.lower() for m in matches])
    return Completion(matches[0][len(stem):len(common)], tuple(matches))


def _common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    n = 0
    while n < len(first) and n < len(last) and first[n] == last[n]:
        n += 1
    return first[:n]


def highlight_spans(text: str) -> list[tuple[int, int, int, str]]:
    """(row, start byte, end byte, highlight name) for a plain SQL colouring.

    Used when tree-sitter is not installed. Names follow the tree-sitter capture names the
    TextArea themes know (keyword, string, comment, number, function, variable).
    """
    out: list[tuple[int, int, int, str]] = []
    line_starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(i + 1)
    lines = text.split("\n")

    def place(offset: int) -> tuple[int, int]:
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        column = offset - line_starts[lo]
        return lo, len(lines[lo][:column].encode("utf-8"))

    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        name: str | None
        if kind == "word":
            word = match.group()
            if word.upper() in _KEYWORD_SET:
                name = "keyword"
            elif text[match.end():match.end() + 1] == "(":
                name = "function"
            else:
                name = None
        elif kind == "quoted":
            name = None
        elif kind == "op":
            name = "operator" if match.group() not in "(),;." else None
        elif kind == "param":
            name = "variable"
        else:
            name = kind
        if name is None:
            continue
        start_row, start_byte = place(match.start())
        end_row, end_byte = place(match.end())
        if start_row == end_row:
            out.append((start_row, start_byte, end_byte, name))
            continue
        out.append((start_row, start_byte, len(lines[start_row].encode("utf-8")), name))
        for row in range(start_row + 1, end_row):
            out.append((row, 0, len(lines[row].encode("utf-8")), name))
        out.append((end_row, 0, end_byte, name))
    return out
