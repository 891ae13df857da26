"""The Schema tab's tree is reached and worked from the keyboard: Tab gets there, Enter and
Space toggle a table, → opens it (then goes into it), ← closes it (then goes back up)
(issue 59: "▶ host" did not expand from the keyboard)."""

from __future__ import annotations

import pytest
from tui_fixtures import MakeApp, start_play

from raceday.exercise.model import Exercise
from raceday.tui.screens.play import PlayScreen
from raceday.tui.widgets.schema import SchemaTree

pytestmark = pytest.mark.tui


def expanded(tree: SchemaTree) -> list[str]:
    return [str(node.data) for node in tree.root.children if node.is_expanded]


async def test_the_schema_tree_expands_and_collapses_by_keyboard(make_app: MakeApp,
                                                                 flagship: Exercise) -> None:
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await pilot.press("f3")  # wide: Tasks, then the Schema tab
        await pilot.pause()
        tree = screen.query_one(SchemaTree)
        for _ in range(8):  # Tab from the editor, through the others, to the tree
            if app.focused is tree:
                break
            await pilot.press("tab")
            await pilot.pause()
        assert app.focused is tree, app.focused
        first = str(tree.root.children[0].data)
        assert tree.cursor_node is tree.root.children[0]  # focused: the cursor is on a table
        assert expanded(tree) == []

        await pilot.press("enter")
        await pilot.pause()
        assert expanded(tree) == [first]
        await pilot.press("enter")
        await pilot.pause()
        assert expanded(tree) == []
        await pilot.press("space")
        await pilot.pause()
        assert expanded(tree) == [first]
        await pilot.press("left")
        await pilot.pause()
        assert expanded(tree) == []
        await pilot.press("right")
        await pilot.pause()
        assert expanded(tree) == [first]
        await pilot.press("right")  # open already: into its first column
        await pilot.pause()
        node = tree.cursor_node
        assert node is not None and node.parent is tree.root.children[0]
        await pilot.press("left")  # a column: back up to its table, still open
        await pilot.pause()
        assert tree.cursor_node is tree.root.children[0] and expanded(tree) == [first]

        await pilot.press("left", "down", "right")  # closed again; the next table opens
        await pilot.pause()
        second = str(tree.root.children[1].data)
        assert expanded(tree) == [second]


async def test_the_cursor_stays_on_its_table_when_the_schema_is_shown_again(
        make_app: MakeApp, flagship: Exercise) -> None:
    """A guard added changes the schema and the tree is built again: the cursor keeps its
    table (and what was open stays open)."""
    app = make_app(flagship)
    async with app.run_test(size=(120, 40)) as pilot:
        await start_play(pilot)
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await pilot.press("f3")
        await pilot.pause()
        tree = screen.query_one(SchemaTree)
        tree.focus()
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        chosen = tree.cursor_node
        assert chosen is not None and chosen.is_expanded
        assert screen.snapshot is not None and screen.snapshot.tables is not None
        tables = screen.snapshot.tables
        screen.side.show_tables(tuple(reversed(tables)))
        await pilot.pause()
        node = tree.cursor_node
        assert node is not None and node.data == chosen.data and node.is_expanded
