"""The Markdown and HTML debriefs cannot be broken out of by what the players typed.

A session is played with hostile text everywhere a player can put some (SQL, notes, the
cast's names, monitor names): runs of backticks and tildes longer than any fence, pipes,
raw HTML, script tags, event handlers, links. The Markdown is then parsed as CommonMark
(markdown-it, the parser Textual's own Markdown widget uses) and the HTML with the standard
library's parser, and what they see is checked: every SQL block comes back whole inside
one fence, every table row has its header's number of cells, and no HTML from the data
becomes an element."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from raceday.engine.headless import open_session
from raceday.engine.load import load_exercise
from raceday.transcript import events as ev
from raceday.transcript.debrief.files import load_debrief, render

# The module plays its session once (a module fixture): its tests run on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_debrief_breakout")

FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
EVIL = "<script>alert(1)</script><img src=x onerror=alert(2)>"
FENCES = "````````` ~~~~~~~~~ ``` ~~~"
HOSTILE_SQL = [
    f"SELECT '{FENCES}' AS fence, '|a|b|' AS pipes, '{EVIL}' AS html",
    "SELECT 1 -- ```\n```\n~~~~\n<!-- a comment -->\n</pre></code></td></table> | x |`",
    "SELECT '````' || '`' AS ticks /* [x](javascript:alert(3)) http://evil.example */",
]
FAILING_SQL = "SELECT * FROM no_such_table WHERE n = '```` | x | </td></table><script>alert(6)</script>'"
HOSTILE_NOTE = f"note {EVIL} | pipe | ``` {FENCES} [click](javascript:alert(4))"
HOSTILE_NAME = "Eve <b onmouseover=alert(5)>|`"
EDIT_TAIL = f"/* {FENCES}\n```\n~~~~\n{EVIL} */"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exercise = load_exercise(FLAGSHIP)
    session = open_session(exercise, ("responder",), tmp_path_factory.mktemp("t"))
    session.record(ev.Cast(names={"responder": HOSTILE_NAME}))
    for sql in HOSTILE_SQL:
        session.execute("responder", sql)
    session.execute("responder", FAILING_SQL)
    session.note(HOSTILE_NOTE, "responder", author=HOSTILE_NAME)
    session.save_monitor("responder", "mon `<i>` | ~~~", "SELECT name FROM endpoint WHERE 0")
    session.edit_statement("responder", exercise.statements[0].id,
                           exercise.statements[0].sql + f" {EDIT_TAIL}")
    session.end()
    return session.folder


def test_markdown_keeps_sql_and_notes_whole_and_no_html_from_data(played: Path) -> None:
    text = render(load_debrief(played), "md")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    flat = _walk(tokens)
    fences = [t.content for t in flat if t.type == "fence"]
    assert any(EDIT_TAIL in block for block in fences)  # the edit's SQL, inside one block
    spans = [t.content for t in flat if t.type == "code_inline"]
    assert FAILING_SQL in spans  # a statement that failed: shown as one code span
    shown = " ".join(t.content for t in flat if t.type == "text")
    assert " ".join(HOSTILE_NOTE.split()) in shown  # the note, as text, whole
    assert HOSTILE_NAME in shown
    for token in flat:
        if token.type in ("html_block", "html_inline"):
            pytest.fail(f"raw HTML from the data in the Markdown: {token.content!r}")
        assert token.type != "link_open", token
    _rows_have_their_headers_cells(text)


def test_html_has_no_element_and_no_handler_from_data(played: Path) -> None:
    text = render(load_debrief(played), "html")
    seen = _Elements()
    seen.feed(text)
    assert "script" not in seen.tags and "img" not in seen.tags and "i" not in seen.tags
    assert not seen.handlers, seen.handlers
    assert "<script>" not in text and "onerror=" not in text.replace("onerror=alert", "")
    assert "&lt;script&gt;" in text  # shown, as text


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.handlers += [f"{tag} {k}" for k, _ in attrs if k.lower().startswith("on")]


def _walk(tokens: list) -> list:  # type: ignore[type-arg]
    out = []
    for token in tokens:
        out.append(token)
        out += _walk(token.children or [])
    return out


def _rows_have_their_headers_cells(text: str) -> None:
    """GitHub splits a table row at every pipe not escaped by a backslash (inside code spans
    too): every row must have as many as its table's header, or a cell broke out."""
    header: int | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        pipes = len(re.findall(r"(?<!\\)\|", line))
        if header is None:
            header = pipes
        assert pipes == header, line
