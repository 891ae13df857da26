"""The README's test command also lints, type-checks (src and tests) and checks the layers.

Each tool runs as it would by hand, from the repository root with pyproject.toml's settings;
a failure shows the tool's own output. The import contracts are themselves tested: a
deliberately bad import in a throwaway copy of the package must break them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TESTS = ROOT / "tests"


def run(tool: str, *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    """Run `tool` from the venv; fail with its output unless it exits 0."""
    executable = BIN / tool
    if not executable.exists():
        pytest.fail(f"{tool} is not installed: pip install -e '.[test]'")
    done = subprocess.run([str(executable), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{tool} {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


def test_ruff() -> None:
    run("ruff", "check", "src", "tests", "benchmarks")


# mypy's runs share one worker (an xdist group), src first: each run after it reads src, and
# what src imports, from the cache the first left (.mypy_cache), where runs side by side on a
# clean clone each checked all of it again (a CI run with other work on the two cores: 230 s
# side by side, 35 s as a group).
MYPY = pytest.mark.xdist_group("mypy")


@MYPY
def test_mypy_src() -> None:
    run("mypy", "src")


def _test_folders() -> list[Path]:
    """tests/ and each folder under it, nested ones too: checked one at a time, as pytest
    imports them.

    The folders are not packages: each has its own `conftest.py` and imports its helpers
    (`from engine_fixtures import ...`) from its own folder, so one mypy run over all of them
    would see several modules named `conftest`.
    """
    return [TESTS] + sorted(p for p in TESTS.rglob("*") if p.is_dir() and any(p.glob("*.py"))
                            and "__pycache__" not in p.parts)


def _folder_id(folder: Path) -> str:
    return folder.relative_to(TESTS).as_posix() if folder != TESTS else "tests"


@MYPY
@pytest.mark.parametrize("folder", _test_folders(), ids=_folder_id)
def test_mypy_tests(folder: Path) -> None:
    run("mypy", *(str(p.relative_to(ROOT)) for p in sorted(folder.glob("*.py"))))


def test_import_contracts() -> None:
    run("lint-imports", "--no-cache")


BAD_IMPORTS = {
    "store imports the engine": ("store/results.py", "import raceday.engine.session"),
    "core imports textual": ("judge/facts.py", "import textual"),
    "core imports the TUI": ("transcript/log.py", "import raceday.tui.app"),
    "exercise imports the store": ("exercise/model.py", "import raceday.store.dialect.sqlite"),
    "engine modules in a circle": ("engine/clock.py", "import raceday.engine.session"),
    "screens in a circle": ("tui/screens/help.py", "import raceday.tui.screens.play"),
    "a screen imports the app": ("tui/screens/help.py", "import raceday.tui.app"),
    "a widget imports a screen": ("tui/widgets/grid.py", "import raceday.tui.screens.cell_view"),
    "team databases in a circle": ("store/team_db.py", "import raceday.store.session_db"),
    "store dialects in a circle": ("store/dialect/piece.py", "import raceday.store.dialect.sqlite"),
    "the replay imports a store": ("engine/replay_forked.py", "import raceday.store.postgres.store"),
    "the engine imports a store": ("engine/headless.py", "import raceday.store.sqlite_store"),
}


@pytest.mark.parametrize("where, line", BAD_IMPORTS.values(), ids=list(BAD_IMPORTS))
def test_a_bad_import_breaks_the_contracts(tmp_path: Path, where: str, line: str) -> None:
    """In a throwaway copy of the package, one bad import makes `lint-imports` fail."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    package = tmp_path / "src" / "raceday"
    shutil.copytree(ROOT / "src" / "raceday", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    run("lint-imports", "--no-cache", cwd=tmp_path, env=env)  # the copy keeps them as is

    target = package / where
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # deliberately bad\n",
                      encoding="utf-8")
    done = subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout
