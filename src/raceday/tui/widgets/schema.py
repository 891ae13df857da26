"""The schema browser: tables and views, their columns, constraints and triggers, kept
up to date as the players add guards."""

from __future__ import annotations

import re

from rich.text import Text
from textual.binding import Binding
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
    """Tables (and views) of the world; rebuilt whenever the schema changes.

    From the keyboard (Tab reaches it when its tab is shown): up and down move, Enter and
    Space open or close a table, → opens it (open: goes to its first line), ← closes it (on
    a column: goes back to its table)."""

    BINDINGS = [
        Binding("right", "open_node", "Open", show=False),
        Binding("left", "close_node", "Close", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(Text("world"), id=id)  # a Text: a str is parsed as markup (emoji table: ~10 ms)
        self.show_root = False
        self.guide_depth = 2

    def on_focus(self) -> None:
        """Focused with no cursor yet (Textual starts at none): the cursor on the first table,
        so Enter opens it at once."""
        if self.cursor_line < 0 and self.root.children:
            self.move_cursor(self.root.children[0])

    def action_open_node(self) -> None:
        node = self.cursor_node
        if node is None or not node.allow_expand:
            return
        if not node.is_expanded:
            node.expand()
        elif node.children:
            self.move_cursor(node.children[0])

    def action_close_node(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.allow_expand and node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    def show_tables(self, tables: tuple[TableInfo, ...]) -> None:
        expanded = {str(node.data) for node in self.root.children if node.is_expanded}
        cursor = self.cursor_node
        at = str(cursor.data) if cursor is not None and self.cursor_line >= 0 else None
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
        if at is not None:  # the cursor stays on its table or column, if still there
            for line in range(self.last_line + 1):
                shown = self.get_node_at_line(line)
                if shown is not None and str(shown.data) == at:
                    self.move_cursor_to_line(line)
                    break
