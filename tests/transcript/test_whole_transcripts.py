"""Whole transcripts of the reference plays, line by line, against ones recorded earlier.

The golden debriefs show what a reader sees; this compares every event a reference play
(and every honest-score play of tests/scenarios/honest) writes (its `events.jsonl`), so
that a change made for speed (caching, skipping work that cannot change anything) is
proven not to change a single event. Wall times, statement
timings and the session's folder are normalised away. Recorded files are gzipped JSON lines
in `golden/transcripts/`; rewrite them with `RACEDAY_UPDATE_GOLDEN=1` after an intended change.
"""

from __future__ import annotations

import difflib
import gzip
import json
from pathlib import Path

import pytest
from debrief_support import GOLDEN, UPDATE, reference_plays
from reference_plays import ReferencePlays

HONEST = Path(__file__).resolve().parents[1] / "scenarios" / "honest"


def honest_plays() -> list[tuple[str, Path]]:
    """The honest-score plays: the odd worlds (a dropped view, a slow one, a flapping monitor)."""
    return [("lost-update-basics" if "lost-update-basics" in p.read_text(encoding="utf-8")
             else "dynamodb-dns-race", p) for p in sorted(HONEST.glob("*.yaml"))]


PLAYS = reference_plays() + honest_plays()
RECORDED = GOLDEN / "transcripts"
_VARYING = ("wall_time", "elapsed_ms")


def normalised_events(folder: Path) -> list[str]:
    """The transcript's events as JSON lines with what differs from run to run taken out."""
    lines = []
    for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        for key in _VARYING:
            event.pop(key, None)
        text = json.dumps(event, sort_keys=True, ensure_ascii=False)
        lines.append(text.replace(str(folder), "<session>"))
    return lines


def write_recorded(path: Path, lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0))


def read_recorded(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


@pytest.mark.parametrize(("exercise", "script"), PLAYS,
                         ids=[f"{e}/{s.parent.name}/{s.stem}" for e, s in PLAYS])
def test_a_reference_play_writes_the_transcript_it_wrote_before(
        exercise: str, script: Path, reference_play: ReferencePlays) -> None:
    folder = reference_play(exercise, script).folder  # the play the golden debrief reads too
    lines = normalised_events(folder)
    path = RECORDED / f"{exercise}-{script.parent.name}-{script.stem}.jsonl.gz"
    if UPDATE or not path.exists():
        RECORDED.mkdir(parents=True, exist_ok=True)
        write_recorded(path, lines)
        if not UPDATE:
            raise AssertionError(f"{path} did not exist and was written: check it, commit it")
        return
    expected = read_recorded(path)
    if lines != expected:
        diff = "\n".join(list(difflib.unified_diff(expected, lines, "recorded", "now",
                                                   lineterm="", n=1))[:40])
        raise AssertionError(f"{script.name}: the transcript differs from {path.name}:\n{diff}")


def test_the_final_replay_runs_each_of_the_teams_looks_once(
        reference_play: ReferencePlays) -> None:
    """A look the team made before several declarations is one probe on the normal night,
    not one per declaration (the flagship's as-it-happened listed 14 probes for 5 looks)."""
    exercise, script = next((e, s) for e, s in PLAYS
                            if e == "dynamodb-dns-race" and s.stem == "as-it-happened")
    folder = reference_play(exercise, script).folder
    replays = [json.loads(line) for line in normalised_events(folder)
               if json.loads(line)["kind"] == "replay"]
    checks = [(c["name"], c["at"]) for c in replays[-1]["monitor_checks"]]
    assert checks and len(checks) == len(set(checks))
