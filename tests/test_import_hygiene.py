"""The core never imports Textual: the engine runs headless on machines without a screen."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = [
    "raceday.cli",
    "raceday.commands",
    "raceday.engine.session",
    "raceday.engine.headless",
    "raceday.engine.load",
    "raceday.engine.guide",
    "raceday.engine.replaywalk",
    "raceday.engine.snapshot",
    "raceday.store.sqltext",
    "raceday.judge.score",
    "raceday.exercise.loader",
    "raceday.store.sqlite_store",
    "raceday.transcript.log",
    "raceday.transcript.render",
    "raceday.team.host",
    "raceday.team.client",
    "raceday.team.host_loop",
    "raceday.team.script",
    "raceday.team.start_host",
]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter (nothing imported before it), its output captured."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)


def test_core_never_imports_textual() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')"
        " or m.startswith('raceday.tui'))\n"
        "print(','.join(bad))\n"
    )
    out = _python(code)
    assert out.stdout.strip() == ""


SQLITE3_ALLOWED = ("store", "history")
"""The world's database (the store) and the history index (its own small database)."""


def test_only_the_store_and_the_history_index_import_sqlite3() -> None:
    """Read from the source: every module that imports sqlite3 (at the top or inside a
    function) is in the store or the history index; the engine, judge, exercise and
    transcript modules import without it."""
    package = Path(__file__).resolve().parent.parent / "src" / "raceday"
    importers = set()
    for source in package.rglob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "sqlite3" or n.startswith("sqlite3.") for n in names):
                importers.add(source.relative_to(package).parts[0])
    assert importers and importers <= set(SQLITE3_ALLOWED), importers
    code = (
        "import sys, importlib\n"
        "sys.modules['sqlite3'] = None\n"
        "for m in ['raceday.engine.session', 'raceday.judge.score', 'raceday.exercise.model',"
        " 'raceday.transcript.log']:\n"
        "    importlib.import_module(m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_cli_module_imports_nothing_heavy_until_a_command_needs_it() -> None:
    """`raceday --version` and shell completion stay instant."""
    code = (
        "import sys, raceday.cli\n"
        "print(','.join(m for m in ('rich', 'argparse', 'textual', 'yaml', 'sqlite3')"
        " if m in sys.modules))\n"
    )
    out = _python(code)
    assert out.stdout.strip() == ""


def test_opening_the_play_screen_imports_no_dialog_nor_sqlite_utils(tmp_path: Path) -> None:
    """An Enter pressed the moment the briefing shows waits for the play screen's module and
    its session: the dialogs (imported while the players read) and sqlite-utils (100 ms; the
    world's tables are read with its PRAGMAs) are not on that path."""
    exercise = Path(__file__).resolve().parent.parent / "exercises" / "dynamodb-dns-race"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from raceday.engine.headless import open_session\n"
        "from raceday.engine.load import load_exercise\n"
        "from raceday.engine.snapshot import WorldPlan, take_snapshot\n"
        "import raceday.tui.screens.play\n"
        f"session = open_session(load_exercise(Path({str(exercise)!r})), None,"
        f" Path({str(tmp_path)!r}))\n"
        "take_snapshot(session, WorldPlan.for_exercise(session.exercise,"
        " session.store.tables(), onboarding=False), tables=True)\n"
        "heavy = ('raceday.tui.screens.dialogs', 'sqlite_utils', 'click', 'dateutil')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
        "session.close()\n"
    )
    out = _python(code)
    assert out.stdout.strip() == ""


def test_a_headless_run_with_json_imports_neither_rich_nor_sqlite_utils(tmp_path: Path) -> None:
    """`raceday run --json` prints one JSON line: no Rich to render, and the history is
    indexed with plain sqlite3 (sqlite-utils brings click, dateutil and an entry-point scan);
    a night on SQLite loads nothing of PostgreSQL's (its store, its thread pool), nor the
    review's or the HTML debrief's modules, nor the world panel's snapshot (an exercise without
    charts reads no world at its end)."""
    exercise = Path(__file__).resolve().parent.parent / "exercises" / "lost-update-basics"
    code = (
        "import sys\n"
        "from raceday.cli import main\n"
        f"status = main(['run', {str(exercise)!r}, '--script',"
        f" {str(exercise / 'scripts' / 'solo-complete.yaml')!r}, '--json',"
        f" '--transcripts', {str(tmp_path)!r}])\n"
        "heavy = ('rich', 'sqlite_utils', 'click', 'dateutil', 'pluggy', 'jsonschema', 'textual',\n"
        "         'psycopg', 'raceday.store.postgres.store', 'raceday.exercise.postgres',\n"
        "         'concurrent.futures', 'raceday.transcript.debrief.review', 'html',\n"
        "         'raceday.engine.snapshot')\n"
        "print(status, ','.join(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    out = _python(code)
    assert out.stderr.strip().splitlines()[-1] == "0"
    assert '"total"' in out.stdout
    assert (next(p for p in tmp_path.iterdir() if p.is_dir()) / "debrief.md").is_file()
    assert (tmp_path / "history.db").is_file()


def test_the_dataclasses_a_headless_run_imports_say_what_they_are() -> None:
    """A dataclass without a docstring gets one from the decorator, which calls
    inspect.signature for it at import: each class the night's modules define has its own."""
    code = (
        "import dataclasses, inspect, sys\n"
        "import raceday.engine.headless, raceday.engine.load, raceday.engine.replay\n"
        "import raceday.engine.charts, raceday.history.index, raceday.store.sqlite_store\n"
        "import raceday.transcript.debrief.files, raceday.transcript.debrief.markdown\n"
        "for name, module in sorted(sys.modules.items()):\n"
        "    for cls in vars(module).values() if name.startswith('raceday') else ():\n"
        "        if (isinstance(cls, type) and cls.__module__ == name\n"
        "                and dataclasses.is_dataclass(cls) and cls.__doc__ == cls.__name__\n"
        "                + str(inspect.signature(cls)).replace(' -> None', '')):\n"
        "            print(f'{name}.{cls.__qualname__}')\n"
    )
    out = _python(code)
    assert out.stdout.strip() == ""
