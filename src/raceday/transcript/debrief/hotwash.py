"""`raceday aar SESSION`: the room fills in the after-action report in the hot wash; the
edits go to `aar.json` (see `aar`) and both debriefs are written again."""

from __future__ import annotations

from pathlib import Path

from raceday.errors import TranscriptError
from raceday.transcript.debrief.aar import (
    AarChange,
    aar_lines,
    aar_path,
    apply_edits,
    change,
    read_edits,
)
from raceday.transcript.debrief.files import load_debrief, write_debriefs


def aar_command(session: Path, changes: list[AarChange], out: list[str]) -> int:
    """`raceday aar SESSION [edits]`: apply the edits (if any), save aar.json, write the
    debrief again (debrief.md and debrief.html beside the transcript), list what is there."""
    folder = session.parent if session.name == "events.jsonl" else session
    edits = read_edits(folder)
    debrief = apply_edits(load_debrief(folder, edited=False), edits)
    for c in changes:
        change(edits, debrief, c)
        debrief = apply_edits(load_debrief(folder, edited=False), edits)
    if changes:
        path = aar_path(folder)
        try:
            path.write_text(edits.to_json(), encoding="utf-8")
        except OSError as exc:
            raise TranscriptError([f"{path}: cannot save the AAR: {exc.strerror}"]) from None
        written = write_debriefs(folder)
        out.append(f"Saved {path}; rewrote {', '.join(str(p) for p in written)}")
    out.extend(aar_lines(debrief))
    return 0
