"""The schema browser: tables and views, their columns, constraints and triggers, kept
up to date as the players add guards."""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Tree

from raceday.store.results import TableInfo

_CONSTRAINT = re.compile(r"\b(REFERENCES|CHECK|UNIQUE|FOREIGN\s+KEY|PRIMARY\s+KEY)\b", re.I)


def constraints_of(sql: str) -> list[str]:
    """The lines of a CREATE TABLE that carry a constraint, trimmed, for a quick look."""
    found: list[str] = []
    for line in sql.splitlines()[1:]:
        text = " ".join(line.split()).rstrip(",")
        if text and _CONSTRAINT.search(text) and not text.startswith("--"):
            found.append(text)
    return found


class SchemaTree(Tree[str]):
    """Tables (and views) of the world; rebuilt whenever the schema changes."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(Text("world"), id=id)  # a Text: a str is parsed as markup (emoji table: ~10 ms)
        self.show_root = False
        self.guide_depth = 2

    def show_tables(self, tables: tuple[TableInfo, ...]) -> None:
        expanded = {str(node.data) for node in self.root.children if node.is_expanded}
        self.clear()
        for info in tables:
            label = Text(info.name, style="bold")
            if info.kind == "view":
                label.append(" view", style="italic dim")
            if info.triggers:
                label.append(f" {len(info.triggers)} trigger"
                             f"{'s' if len(info.triggers) != 1 else ''}", style="yellow")
            node = self.root.add(label, data=info.name, expand=info.name in expanded)
            for column in info.columns:
                text = Text(column.name)
                detail = " ".join(p for p in (column.type.lower(), "pk" if column.pk else "",
                                              "not null" if column.notnull else "") if p)
                if detail:
                    text.append(f"  {detail}", style="dim")
                node.add_leaf(text, data=f"{info.name}.{column.name}")
            for constraint in constraints_of(info.sql) if info.kind == "table" else ():
                node.add_leaf(Text(constraint, style="cyan"), data=f"{info.name}:c")
            for trigger in info.triggers:
                node.add_leaf(Text(f"trigger {trigger}", style="yellow"),
                              data=f"{info.name}:t:{trigger}")
        self.root.expand()
