"""The debrief as text and files: `render` (md, html, json), `load_debrief` from a session
folder, `write_debrief` (debrief.md at a session's end) and `raceday debrief`."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from raceday.errors import InputError, TranscriptError
from raceday.inert import inert, json_text
from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.debrief.model import Debrief
from raceday.transcript.log import read_events

if TYPE_CHECKING:  # rich is imported by the command that prints, not at every session's end
    from rich.console import Console

    from raceday.transcript.events import Event

DEBRIEF_FILE = "debrief.md"
FORMATS = ("md", "html", "json", "terminal")


def render_json(d: Debrief) -> str:
    """The debrief as one JSON object (stable keys; for tools)."""
    data = {"format": "raceday-debrief", "version": 2, **asdict(d)}
    data["summary"]["roles"] = dict(d.summary.roles)
    return json_text(data, indent=2) + "\n"


def render(d: Debrief, fmt: str) -> str:
    """The debrief in a text format: md, html or json (each renderer imported when asked for).

    The edge of every debrief file: md and html pass `inert` whole (a player's ESC in SQL
    reads `␛`), json escapes every control."""
    if fmt == "md":
        from raceday.transcript.debrief.markdown import render_markdown

        return inert(render_markdown(d))
    if fmt == "html":
        from raceday.transcript.debrief.html import render_html

        return inert(render_html(d))
    if fmt == "json":
        return render_json(d)
    raise InputError([f"unknown debrief format {fmt!r}; formats are md, html, json"])


def load_debrief(session_dir: Path, *, edited: bool = True) -> Debrief:
    """Read a session folder (or its events.jsonl) and build its debrief, with what the room
    wrote into its after-action report (`aar.json`, unless not `edited`)."""
    log = read_events(session_dir)
    debrief = build_debrief(log.events, log.warning)
    return with_edits(debrief, session_dir) if edited else debrief


def with_edits(debrief: Debrief, session_dir: Path) -> Debrief:
    """`debrief` with what the room wrote into the session's after-action report so far."""
    from raceday.transcript.debrief.aar import aar_path, apply_edits, read_edits
    from raceday.transcript.debrief.expectations import remark

    if not aar_path(session_dir).is_file():
        return remark(debrief, {})  # the facilitator's live marks rate the objectives
    return apply_edits(debrief, read_edits(session_dir))


def write_debrief(folder: Path, events: Sequence[Event] | None = None) -> Path:
    """Write `debrief.md` into a session folder (called when a session ends); returns its path.

    `events` are the session's own as it recorded them, every one its events.jsonl holds
    (the same debrief, without reading the file back); None reads them from the folder."""
    save_debrief(folder, events)
    return folder / DEBRIEF_FILE


def save_debrief(folder: Path, events: Sequence[Event] | None = None) -> Debrief:
    """`write_debrief`, returning the debrief as built (without the after-action report's
    edits: `with_edits` adds them when it is shown). The TUI's end screen keeps it, so its d
    need not read back a transcript that may hold 20,000 events."""
    debrief = load_debrief(folder, edited=False) if events is None else build_debrief(events)
    (folder / DEBRIEF_FILE).write_text(render(with_edits(debrief, folder), "md"),
                                       encoding="utf-8")
    return debrief


DEBRIEF_HTML = "debrief.html"


def write_debriefs(folder: Path) -> tuple[Path, Path]:
    """Write `debrief.md` and `debrief.html` into a session folder (after the AAR is edited)."""
    debrief = load_debrief(folder)
    md, html = folder / DEBRIEF_FILE, folder / DEBRIEF_HTML
    try:
        md.write_text(render(debrief, "md"), encoding="utf-8")
        html.write_text(render(debrief, "html"), encoding="utf-8")
    except OSError as exc:
        raise TranscriptError([f"{folder}: cannot write the debrief: {exc.strerror}"]) from None
    return md, html


def debrief_command(session_dir: Path, fmt: str = "md", output: Path | None = None,
                    console: Console | None = None) -> int:
    """`raceday debrief SESSION_DIR [--format md|html|json|terminal] [-o FILE]`."""
    if console is None:
        from raceday.inert_console import InertConsole

        console = InertConsole()
    out = console
    if fmt not in FORMATS:
        raise InputError([f"unknown debrief format {fmt!r}; formats are {', '.join(FORMATS)}"])
    debrief = load_debrief(session_dir)
    if debrief.warning:
        sys.stderr.write(f"raceday: warning: {debrief.warning}\n")
    if fmt == "terminal":
        from raceday.transcript.debrief.terminal import render_terminal

        render_terminal(debrief, out)
        return 0
    text = render(debrief, fmt)
    if output is None:
        out.file.write(text)
        out.file.flush()
        return 0
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TranscriptError([f"{output}: cannot write the debrief: {exc.strerror}"]) from None
    # one line whatever the terminal's width: a path broken over lines cannot be copied
    out.print(f"Debrief written to {output}", markup=False, highlight=False, soft_wrap=True)
    return 0
