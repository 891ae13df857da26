"""The play screen's side panel: the world at the top, then the Tasks, Schema and Monitors
tabs. Wide, it is always there; narrow, F3 brings it in place of the editor."""

from __future__ import annotations

from collections.abc import Collection

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane, Tabs

from raceday.engine.snapshot import MonitorView
from raceday.store.results import TableInfo
from raceday.tui.widgets.schema import SchemaTree
from raceday.tui.widgets.tasks import TaskList
from raceday.tui.widgets.world import WorldPanel

TABS = ("tab-tasks", "tab-schema", "tab-monitors")
"""The tabs in the order F3 steps through them."""


class SidePanel(Vertical):
    """Shows what it is given; an unchanged tab is not redrawn."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self._shown: dict[str, Text] = {}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="world-scroll"):
            yield WorldPanel(id="world")
        with TabbedContent(id="side-tabs"):
            with TabPane("Tasks", id="tab-tasks"), VerticalScroll():
                yield TaskList("", id="tasks")
            with TabPane("Schema", id="tab-schema"):
                yield SchemaTree(id="schema")
            with TabPane("Monitors", id="tab-monitors"), VerticalScroll():
                yield Static("No monitors yet: F7 saves one.", id="monitors")

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#side-tabs", TabbedContent)

    def show_tasks(self, text: Text) -> None:
        if self._changed("tasks", text):
            self.query_one("#tasks", TaskList).update(text)

    def show_tables(self, tables: tuple[TableInfo, ...]) -> None:
        self.query_one("#schema", SchemaTree).show_tables(tables)

    def show_monitors(self, monitors: tuple[MonitorView, ...], alerting: Collection[str]) -> None:
        """Each monitor, alerting or quiet (none yet: the tab keeps saying how to save one)."""
        if not monitors:
            return
        text = Text()
        for monitor in monitors:
            alert = monitor.name in alerting
            text.append(" ALERT " if alert else " quiet ",
                        style="bold black on yellow" if alert else "dim reverse")
            text.append(f" {monitor.name}", style="bold")
            text.append(f"  ({monitor.role})\n", style="dim")
            text.append(f"   {' '.join(monitor.sql.split())}\n", style="dim")
        if self._changed("monitors", text):
            self.query_one("#monitors", Static).update(text)

    def first_tab(self) -> None:
        self.tabs.active = TABS[0]

    def on_last_tab(self) -> bool:
        return self._tab_index() == len(TABS) - 1

    def next_tab(self) -> None:
        self.tabs.active = TABS[(self._tab_index() + 1) % len(TABS)]

    def focus_tabs(self) -> None:
        self.tabs.query_one(Tabs).focus()

    def _tab_index(self) -> int:
        active = self.tabs.active
        return TABS.index(active) if active in TABS else 0

    def _changed(self, tab: str, content: Text) -> bool:
        if self._shown.get(tab) == content:
            return False
        self._shown[tab] = content
        return True
