"""The facilitator guide as Markdown: it prints, and reads as plain text on paper."""

from __future__ import annotations

from raceday.exercise.guide_doc import (
    Block,
    Card,
    Commands,
    Guide,
    Items,
    Para,
    Sub,
    Table,
    flat,
)


def _cell(text: str) -> str:
    return flat(text).replace("|", "\\|")


def _block(block: Block) -> list[str]:
    if isinstance(block, Para):
        return [f"> **Note.** {block.text}" if block.note else block.text, ""]
    if isinstance(block, Items):
        return [f"{n}. {x}" if block.ordered else f"- {x}"
                for n, x in enumerate(block.items, start=1)] + [""]
    if isinstance(block, Table):
        out = ["| " + " | ".join(_cell(h) for h in block.header) + " |",
               "|" + "---|" * len(block.header)]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
        return out + [""]
    if isinstance(block, Commands):
        return ["```sh", *block.lines, "```", ""]
    if isinstance(block, Sub):
        return [f"### {block.title}", ""]
    return _card(block)


def _card(card: Card) -> list[str]:
    out = [f"### {card.title}", ""]
    for field in card.fields:
        if len(field.lines) == 1 and not field.ordered:
            out.append(f"- **{field.label}**: {field.lines[0]}")
            continue
        out.append(f"- **{field.label}**:")
        out += [f"    {n}. {x}" if field.ordered else f"    - {x}"
                for n, x in enumerate(field.lines, start=1)]
    return out + [""]


def guide_markdown(guide: Guide) -> str:
    out = [f"# {guide.title}", "", f"> **{guide.lede}**", "", f"*{guide.facts}*", "",
           "Contents: " + " · ".join(f"{n}. {s.title}"
                                     for n, s in enumerate(guide.sections, start=1)), ""]
    for n, section in enumerate(guide.sections, start=1):
        out += [f"## {n}. {section.title}", ""]
        for block in section.blocks:
            out += _block(block)
    return "\n".join(out).rstrip("\n") + "\n"
