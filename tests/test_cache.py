"""What is cached is only as good as the code that worked it out: raceday's code digest
changes with any of its source files (as Python's bytecode cache tells a changed file: by
size and modification time), and not with anything else."""

from __future__ import annotations

import os
from pathlib import Path

from raceday.cache import sources_digest


def test_the_code_digest_changes_with_any_source_file_and_nothing_else(tmp_path: Path) -> None:
    package = tmp_path / "raceday"
    (package / "engine").mkdir(parents=True)
    (package / "value.py").write_text("LIMIT = 1000\n", encoding="utf-8")
    (package / "engine" / "replay.py").write_text("NIGHTS = 3\n", encoding="utf-8")
    first = sources_digest(str(package))
    assert sources_digest(str(package)) == first

    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "value.cpython-311.pyc").write_bytes(b"\0" * 10)
    (package / "notes.txt").write_text("not code", encoding="utf-8")
    assert sources_digest(str(package)) == first  # bytecode and other files: not code

    replay = package / "engine" / "replay.py"
    before = replay.stat()
    replay.write_text("NIGHTS = 4\n", encoding="utf-8")  # the same size, written later
    os.utime(replay, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    edited = sources_digest(str(package))
    assert edited != first

    (package / "engine" / "aside.py").write_text("", encoding="utf-8")
    assert sources_digest(str(package)) not in (first, edited)  # a new module
