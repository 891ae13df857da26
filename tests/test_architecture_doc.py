"""docs/ARCHITECTURE.md stays a true map: it names every package, and what it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SRC = ROOT / "src" / "raceday"


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_package_is_on_the_map() -> None:
    packages = sorted(
        str(init.parent.relative_to(ROOT)) + "/" for init in SRC.rglob("__init__.py")
        if "bundled" not in init.parts and init.parent != SRC
    )
    missing = [p for p in packages if p not in _text()]
    assert not missing, f"docs/ARCHITECTURE.md does not name {', '.join(missing)}"


def test_every_path_the_map_names_exists() -> None:
    named = set(re.findall(r"`(src/raceday/[\w/.]+)`", _text()))
    short = set(re.findall(r"`((?:engine|store|exercise|transcript|team|tui|judge|web)/[\w/.]+)`",
                           _text()))
    paths = [ROOT / p for p in named] + [SRC / p.rstrip("*") for p in short if "*" not in p]
    gone = sorted(str(p.relative_to(ROOT)) for p in paths if not p.exists())
    assert not gone, f"docs/ARCHITECTURE.md names what is not there: {', '.join(gone)}"
    assert len(paths) > 30  # the map names the modules a reader starts from


def test_the_readme_links_the_map() -> None:
    assert "docs/ARCHITECTURE.md" in (ROOT / "README.md").read_text(encoding="utf-8")


# -- the map's claims about the code, held where a test can hold them --------------------------

ENGINE = SRC / "engine"
CONCRETE_STORES = ("raceday.store.sqlite_store", "raceday.store.sqlite_world",
                   "raceday.store.postgres")


def _modules(folder: Path) -> dict[str, str]:
    return {p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*.py"))}


def _imports(text: str) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _named(paths: set[str]) -> list[str]:
    """Those of `paths` (under src/raceday) the map does not name."""
    return sorted(p for p in paths if f"`{p}`" not in _text()
                  and f"`{p.split('/', 1)[1]}`" not in _text())


def test_the_engine_never_asks_which_database_it_is_on() -> None:
    """It asks the store which dialect a world speaks (`dialect_of`), and the exercise for
    that dialect's variant; a store's differences are its hooks."""
    asking = {path for path, text in _modules(ENGINE).items()
              if re.search(r"\.backend\s*[!=]=|\bis_postgres\b", text)}
    assert asking == set(), "update 'Where to put a change' in the map"


def test_the_engine_imports_no_concrete_store() -> None:
    importing = {path for path, text in _modules(ENGINE).items()
                 if any(m.startswith(CONCRETE_STORES) for m in _imports(text))}
    assert importing == set(), "update the store's paragraph of the map"


CAPABILITIES = ("reads_of", "reads_complete", "writes_complete", "catalog_writes", "asks_together")
"""What a store says of its own answers, which the checks and monitors read."""


def test_the_engine_reads_what_a_store_can_say_from_the_protocol_never_through_getattr() -> None:
    read = sorted(path for path, text in _modules(ENGINE).items()
                  if re.search(r"getattr\(\s*(?:\w+\.)*store\b", text))
    assert read == [], "the engine reads a store's attribute through getattr: declare it"
    protocol = (SRC / "store" / "protocol.py").read_text(encoding="utf-8")
    assert [a for a in CAPABILITIES if not re.search(rf"def {a}\(", protocol)] == []
    assert [a for a in CAPABILITIES if f"`{a}`" not in _text()] == []


def test_a_seat_sends_its_action_s_record_and_the_host_reads_it_as_the_seat_s_role() -> None:
    """No command is built by hand (`("sql", {...})`, a payload of an action's fields): the
    seat's client sends `action_to_record`, the host reads `action_from_record` with the
    seat's role forced, each in the one place the map names."""
    modules = _modules(SRC)
    assert [p for p, text in modules.items() if re.search(r"\(\s*\"sql\",\s*\{", text)] == []
    assert [p for p, text in modules.items() if p.startswith(("team/", "tui/", "web/"))
            and re.search(r"\{\s*\"sql\":", text)] == []
    sending = {p for p, text in modules.items()
               if "action_to_record(" in text and p != "engine/actions.py"}
    assert sending == {"team/client.py"}
    reading = {p for p, text in modules.items()
               if p != "engine/actions.py" and re.search(r"action_from_record\([^)]*\brole=", text)}
    assert reading == {"team/host.py"}
    assert _named(sending | reading) == []
    for name in ("action_to_record", "action_from_record", "value_to_record",
                 "value_from_record", "Client.send", "PlayRunner.perform"):
        assert f"`{name}" in _text(), name


def test_the_tui_calls_a_host_only_through_the_console_s_runner() -> None:
    calling = {path for path, text in _modules(SRC / "tui").items()
               if re.search(r"\bhost\)?\.call\(", text)}
    assert calling == {"tui/team/console_runner.py"}
    assert _named(calling) == []


def test_no_screen_or_widget_imports_the_app_and_no_runner_or_widget_a_screen() -> None:
    """The map's TUI claims an import-linter circle would not name as plainly."""
    tui = _modules(SRC / "tui")
    below_the_app = {path: text for path, text in tui.items()
                     if path.startswith(("tui/screens/", "tui/widgets/"))
                     or path in ("tui/runner.py", "tui/team/seat_runner.py",
                                 "tui/team/console_runner.py", "tui/team/console.py")}
    assert [p for p, text in below_the_app.items() if "raceday.tui.app" in _imports(text)] == []
    opening = [p for p, text in tui.items()
               if p.startswith("tui/widgets/") or p.endswith("runner.py")
               if any(m.startswith("raceday.tui.screens") for m in _imports(text))]
    assert opening == []
    assert _named({"tui/navigation.py", "tui/settings.py"}) == []
