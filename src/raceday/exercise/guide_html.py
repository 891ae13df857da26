"""The facilitator guide as one HTML page: every text escaped, a print stylesheet (the MSEL's
cards and the tables kept whole on a page), and a narrow screen's tables turned into cards."""

from __future__ import annotations

import re
from html import escape

from raceday.exercise.guide_doc import Block, Card, Commands, Guide, Items, Para, Sub, Table

_CSS = """
:root { --ink: #1b1f23; --dim: #5d6670; --rule: #d5d9de; --warn: #b9770e; --panel: #f5f7f9; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       background: #fff; max-width: 1040px; margin: 0 auto; padding: 24px;
       overflow-wrap: break-word; }
h1 { font-size: 1.7em; margin: 0 0 .3em; }
h2 { font-size: 1.3em; border-bottom: 2px solid var(--rule); padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 .4em; }
.lede, .note { background: #fdf2e9; border-left: 4px solid var(--warn); padding: .6em 1em; }
.facts { color: var(--dim); font-style: italic; }
nav ol { columns: 2; margin: .4em 0; }
table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; font-size: .92em; }
th, td { border: 1px solid var(--rule); padding: .3em .5em; text-align: left; vertical-align: top; }
th { background: var(--panel); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
pre { background: var(--panel); padding: .5em .8em; overflow-x: auto; white-space: pre-wrap;
      margin: .2em 0 .8em; }
.card { border: 1px solid var(--rule); border-radius: 4px; padding: .2em 1em .6em; margin: .8em 0; }
.card h3 { margin-top: .6em; }
.card dl { display: grid; grid-template-columns: 11em 1fr; gap: .2em 1em; margin: 0; }
.card dt { font-weight: 600; color: var(--dim); }
.card dd { margin: 0; }
.card dd ol, .card dd ul { margin: 0; padding-left: 1.3em; }
@media (max-width: 640px) {
  body { padding: 12px; overflow-wrap: anywhere; }
  nav ol { columns: 1; }
  table, thead, tbody, tr, th, td { display: block; width: 100%; }
  thead { position: absolute; left: -9999px; }
  tr { border: 1px solid var(--rule); margin-bottom: .5em; }
  td { border: none; padding: .15em .5em; }
  td:first-child { background: var(--panel); font-weight: 600; }
  td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: var(--dim);
                           font-size: .85em; }
  td:first-child::before { content: none; }
  .card dl { grid-template-columns: 1fr; }
  .card dd { margin-bottom: .3em; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3 { break-after: avoid; page-break-after: avoid; }
  tr, pre, .card, .note { break-inside: avoid; page-break-inside: avoid; }
  th, pre, .lede, .note { background: none; }
  a { color: inherit; text-decoration: none; }
}
"""

_ATTRIBUTE_LIKE = re.compile(r"\b(src|href|srcset)=", re.IGNORECASE)
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")


def _escape(text: str) -> str:
    """Escaped, and an address or `href=` in exercise text written with entities: it reads
    the same but never looks like a reference (as the debrief's HTML writes them)."""
    html = escape(text, quote=True).replace("://", ":&#47;&#47;")
    return _ATTRIBUTE_LIKE.sub(r"\1&#61;", html)


def _inline(text: str) -> str:
    """Escaped text with its `code`, **bold** and *emphasis* as tags (the marks are ours)."""
    html = _escape(text)
    html = _CODE.sub(r"<code>\1</code>", html)
    html = _BOLD.sub(r"<strong>\1</strong>", html)
    return _ITALIC.sub(r"<em>\1</em>", html)


def _list(items: tuple[str, ...], ordered: bool) -> str:
    tag = "ol" if ordered else "ul"
    return f"<{tag}>" + "".join(f"<li>{_inline(x)}</li>" for x in items) + f"</{tag}>"


def _table(block: Table) -> str:
    head = "".join(f"<th>{_inline(h)}</th>" for h in block.header)
    rows = []
    for row in block.rows:
        cells = "".join(f'<td data-label="{escape(block.header[i], quote=True)}">'
                        f"{_inline(c)}</td>" for i, c in enumerate(row))
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _card(card: Card) -> str:
    parts = [f'<section class="card" id="{escape(card.anchor, quote=True)}">',
             f"<h3>{_inline(card.title)}</h3><dl>"]
    for field in card.fields:
        value = (_inline(field.lines[0]) if len(field.lines) == 1 and not field.ordered
                 else _list(field.lines, field.ordered))
        parts.append(f"<dt>{_inline(field.label)}</dt><dd>{value}</dd>")
    return "".join(parts) + "</dl></section>"


def _block(block: Block) -> str:
    if isinstance(block, Para):
        return f'<p class="note">{_inline(block.text)}</p>' if block.note \
            else f"<p>{_inline(block.text)}</p>"
    if isinstance(block, Items):
        return _list(block.items, block.ordered)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Commands):
        return "<pre><code>" + _escape("\n".join(block.lines)) + "</code></pre>"
    if isinstance(block, Sub):
        return f"<h3>{_inline(block.title)}</h3>"
    return _card(block)


def guide_html(guide: Guide) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape(guide.title)}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>{_inline(guide.title)}</h1>",
             f'<p class="lede"><strong>{_inline(guide.lede)}</strong></p>',
             f'<p class="facts">{_inline(guide.facts)}</p>',
             "<nav><ol>" + "".join(f'<li><a href="#{s.id}">{_inline(s.title)}</a></li>'
                                   for s in guide.sections) + "</ol></nav>"]
    for n, section in enumerate(guide.sections, start=1):
        parts.append(f'<section id="{escape(section.id, quote=True)}">'
                     f"<h2>{n}. {_inline(section.title)}</h2>")
        parts += [_block(b) for b in section.blocks]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
