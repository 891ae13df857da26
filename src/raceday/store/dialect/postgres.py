"""PostgreSQL's SQL text: where statements end, named parameters, the first keyword.

SQLite's splitter (sqlite.py beside it) cannot be used for PostgreSQL: a function body in dollar
quotes (`$$ ... ; ... $$`), an `E'...\\''` string or a nested block comment hold semicolons
that do not end anything. This tokenizer knows those. It only decides where raceday cuts a
submission; each piece is then sent with the extended protocol, which refuses more than one
statement, so a mistake here fails closed ("cannot insert multiple commands").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from raceday.store.dialect.piece import Piece, make_piece
from raceday.value import Value, frozen

# Dollar-quote tag: $$ or $tag$ (a tag is an identifier without $).
_DOLLAR = re.compile(r"\$([^\W\d]\w*)?\$")
_WORD = re.compile(r"[^\W\d][\w$]*")
_PARAM = re.compile(r":([^\W\d]\w*)")


TokenKind = Literal["ws", "comment", "string", "quoted", "dollar", "word", "param", "semi", "other"]


@frozen
class Token(Value):
    kind: TokenKind
    text: str
    start: int


_KEPT_CHARS = 4_000
"""Texts up to this long have their tokens kept (`_lexed`): a night asks the same few
checks and automation statements thousands of times, and each is cut, bound and looked at
(first keyword, target, query or not) every time."""


def tokens(sql: str) -> Iterator[Token]:
    """PostgreSQL's lexical units, enough to split and to find parameters.

    An unterminated string, quoted name, dollar quote or comment runs to the end of the
    text (the server then reports it).
    """
    return iter(_lexed(sql)) if len(sql) <= _KEPT_CHARS else _lex(sql)


@lru_cache(maxsize=1024)
def _lexed(sql: str) -> tuple[Token, ...]:
    return tuple(_lex(sql))


def _lex(sql: str) -> Iterator[Token]:
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        start = i
        if ch.isspace():
            while i < n and sql[i].isspace():
                i += 1
            yield Token("ws", sql[start:i], start)
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            yield Token("comment", sql[start:i], start)
        elif sql.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            yield Token("comment", sql[start:i], start)
        elif ch in "eE" and sql.startswith("'", i + 1):
            i = _string_end(sql, i + 2, backslash=True)
            yield Token("string", sql[start:i], start)
        elif ch == "'":
            i = _string_end(sql, i + 1, backslash=False)
            yield Token("string", sql[start:i], start)
        elif ch == '"':
            i += 1
            while i < n:
                if sql[i] == '"':
                    if sql.startswith('"', i + 1):
                        i += 2
                        continue
                    i += 1
                    break
                i += 1
            yield Token("quoted", sql[start:i], start)
        elif ch == "$" and (m := _DOLLAR.match(sql, i)) is not None:
            tag = m.group()
            end = sql.find(tag, m.end())
            i = n if end < 0 else end + len(tag)
            yield Token("dollar", sql[start:i], start)
        elif ch == ":" and sql.startswith("::", i):
            i += 2
            yield Token("other", "::", start)
        elif ch == ":" and (m := _PARAM.match(sql, i)) is not None:
            i = m.end()
            yield Token("param", m.group(1), start)
        elif (m := _WORD.match(sql, i)) is not None:
            i = m.end()
            yield Token("word", m.group(), start)
        elif ch == ";":
            i += 1
            yield Token("semi", ";", start)
        else:
            i += 1
            yield Token("other", ch, start)


def _string_end(sql: str, i: int, *, backslash: bool) -> int:
    n = len(sql)
    while i < n:
        ch = sql[i]
        if backslash and ch == "\\":
            i += 2
            continue
        if ch == "'":
            if sql.startswith("'", i + 1):
                i += 2
                continue
            return i + 1
        i += 1
    return n


def statement_pieces(sql: str) -> list[Piece]:
    """The statements of a text and where each sits, without blank or comment-only pieces.

    The store runs them (`split`); the editor finds the one under the cursor (sqltext.py).
    """
    pieces: list[Piece] = []
    start = 0
    first = -1  # where the piece's first real token is, or -1: nothing but blanks yet
    for token in tokens(sql):
        if token.kind == "semi":
            if first >= 0:
                pieces.append(_piece(sql, start, token.start + 1, first))
            start, first = token.start + 1, -1
        elif token.kind not in ("ws", "comment") and first < 0:
            first = token.start
    if first >= 0:
        pieces.append(_piece(sql, start, len(sql), first))
    return pieces


def _piece(sql: str, start: int, end: int, first: int) -> Piece:
    text = sql[start:end]
    begin = start + (len(text) - len(text.lstrip()))
    return make_piece(sql, start, end, first - begin)


def split(sql: str) -> list[str]:
    """The statements of a submission, stripped, without blank or comment-only pieces."""
    return [piece.sql for piece in statement_pieces(sql)]


def words(sql: str) -> list[str]:
    """The statement's bare words, upper case, in order (strings and comments left out)."""
    return [t.text.upper() for t in tokens(sql) if t.kind == "word"]


def first_keyword(sql: str) -> str:
    for token in tokens(sql):
        if token.kind in ("ws", "comment"):
            continue
        return token.text.upper() if token.kind == "word" else ""
    return ""


class MissingParameter(Exception):
    """A statement names `:name` and no value was given."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def bind(sql: str, params: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """Turn `:name` parameters (the exercise format's, as in SQLite) into psycopg's `%s`.

    Literal `%` is doubled for psycopg; `::type` casts are left alone. Raises
    MissingParameter for a name with no value.
    """
    text, wanted = _bound(sql) if len(sql) <= _KEPT_CHARS else _bind_text(sql)
    given = params or {}
    for name in wanted:
        if name not in given:
            raise MissingParameter(name)
    return text, [given[name] for name in wanted]


@lru_cache(maxsize=1024)
def _bound(sql: str) -> tuple[str, tuple[str, ...]]:
    return _bind_text(sql)


def _bind_text(sql: str) -> tuple[str, tuple[str, ...]]:
    """psycopg's text of `sql` and the names of its parameters, in order."""
    wanted: list[str] = []
    out: list[str] = []
    for token in tokens(sql):
        if token.kind == "param":
            wanted.append(token.text)
            out.append("%s")
        else:
            out.append(token.text.replace("%", "%%"))
    return "".join(out), tuple(wanted)


def names(sql: str) -> Sequence[str]:
    """The named parameters a statement uses, in order, once each."""
    seen: dict[str, None] = {}
    for token in tokens(sql):
        if token.kind == "param":
            seen.setdefault(token.text, None)
    return tuple(seen)


_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})


def is_query(sql: str) -> bool:
    """A statement a server-side cursor can hold: SELECT, VALUES, TABLE, or a WITH that
    writes nothing (DECLARE refuses a data-modifying WITH)."""
    found = words(sql)
    if not found:
        return False
    if found[0] == "SELECT":
        return "INTO" not in found or not _select_into(sql)
    if found[0] in ("VALUES", "TABLE"):
        return True
    if found[0] == "WITH":
        return not (_DML & set(found))
    return False


def _select_into(sql: str) -> bool:
    """SELECT ... INTO new_table is DDL, not a query (DECLARE refuses it)."""
    depth = 0
    for token in tokens(sql):
        if token.kind == "other" and token.text == "(":
            depth += 1
        elif token.kind == "other" and token.text == ")":
            depth -= 1
        elif token.kind == "word" and depth == 0 and token.text.upper() == "INTO":
            return True
    return False


def dml_target(sql: str) -> str | None:
    """The table a plain INSERT/UPDATE/DELETE/MERGE names (lower case), or None.

    Used to count a write that changed no rows as a write of that table (rows a statement
    or its triggers changed are counted by the server itself).
    """
    seq = [t for t in tokens(sql) if t.kind not in ("ws", "comment")]
    if not seq or seq[0].kind != "word":
        return None
    first = seq[0].text.upper()
    if first not in _DML:
        return None
    i = 1
    if first in ("INSERT", "MERGE"):
        if len(seq) < 2 or seq[1].text.upper() != "INTO":
            return None
        i = 2
    elif first == "DELETE":
        if len(seq) < 2 or seq[1].text.upper() != "FROM":
            return None
        i = 2
    if i < len(seq) and seq[i].kind == "word" and seq[i].text.upper() == "ONLY":
        i += 1
    name: str | None = None
    while i < len(seq) and seq[i].kind in ("word", "quoted"):
        name = _ident(seq[i])
        if i + 1 < len(seq) and seq[i + 1].text == ".":
            i += 2
            continue
        break
    return name


def _ident(token: Token) -> str:
    if token.kind == "quoted":
        return token.text[1:-1].replace('""', '"')
    return token.text.lower()
