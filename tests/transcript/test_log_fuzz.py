"""Fuzzing the event-log reader: any events.jsonl gives typed events or one line naming the
file and the line (`events.jsonl:N: ...`), never another exception or a traceback.

Property-based (hypothesis) with a fixed seed (`derandomize`) and a bounded number of
examples. Inputs are mutations of a real transcript (a played session of the flagship, so
every common kind is there to be damaged: values swapped for others of another type, keys
dropped or added, lines cut, duplicated, swapped, bytes flipped) and JSON documents built
from random values.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raceday.engine.headless import run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.errors import TranscriptError
from raceday.transcript.log import EVENTS_FILE, read_events

FUZZ = settings(
    derandomize=True,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
FLAGSHIP = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"


def _played() -> list[str]:
    exercise = load_exercise(FLAGSHIP)
    with tempfile.TemporaryDirectory() as tmp:
        session, _ = run_script(exercise, load_script(FLAGSHIP / "scripts" / "textbook.yaml",
                                                      exercise), Path(tmp))
        lines = (session.folder / EVENTS_FILE).read_text(encoding="utf-8").splitlines()
    kept: dict[str, int] = {}
    out = []
    for line in lines:  # a few of each kind: enough to damage, quick to read
        kind = json.loads(line)["kind"]
        kept[kind] = kept.get(kind, 0) + 1
        if kept[kind] <= 3:
            out.append(line)
    return out


LINES = _played()
ONE_LINE = re.compile(r"^\S*events\.jsonl:\d+: \S")

values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
              st.floats(allow_nan=False), st.text(max_size=20),
              st.sampled_from(["23:48", "99:99", "score", "statement", "\x1b[2J", "\ud800"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=12,
)


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    records: list[Any] = [json.loads(line) for line in LINES]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        n = draw(st.integers(min_value=0, max_value=len(records) - 1))
        kind = draw(st.sampled_from(["value", "drop", "add", "swap", "dup", "remove", "raw"]))
        record = records[n]
        if kind in ("value", "drop") and isinstance(record, dict) and record:
            key = draw(st.sampled_from(sorted(record)))
            if kind == "value":
                record[key] = draw(values)
            else:
                del record[key]
        elif kind == "add" and isinstance(record, dict):
            record[draw(st.text(max_size=8))] = draw(values)
        elif kind == "swap":
            m = draw(st.integers(min_value=0, max_value=len(records) - 1))
            records[n], records[m] = records[m], records[n]
        elif kind == "dup":
            records.insert(n, records[n])
        elif kind == "remove" and len(records) > 1:
            del records[n]
        elif kind == "raw":
            records[n] = draw(values)
    data = "\n".join(json.dumps(r, ensure_ascii=draw(st.booleans())) for r in records) + "\n"
    raw = data.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):  # bytes flipped or the file cut anywhere
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        if draw(st.booleans()):
            raw = raw[:at]
        else:
            raw = raw[:at] + draw(st.binary(min_size=1, max_size=4)) + raw[at + 1:]
    return raw


def _read(tmp: Path, data: bytes) -> bool:
    """True when the transcript was refused (in one line: asserted), False when read."""
    (tmp / EVENTS_FILE).write_bytes(data)
    try:
        read_events(tmp)
    except TranscriptError as exc:
        assert len(exc.problems) == 1
        [problem] = exc.problems
        assert "\n" not in problem and "Traceback" not in problem
        assert ONE_LINE.match(problem) or problem.startswith(str(tmp)), problem
        return True
    return False


@FUZZ
@given(damaged())
def test_a_damaged_transcript_is_read_or_refused_in_one_line(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _read(Path(tmp), data)


@FUZZ
@given(st.lists(values, min_size=1, max_size=5))
def test_random_json_lines_are_refused_in_one_line(records: list[Any]) -> None:
    data = "\n".join(json.dumps(r) for r in records).encode("utf-8", "surrogatepass")
    with tempfile.TemporaryDirectory() as tmp:
        assert _read(Path(tmp), data), "random JSON read as a transcript"


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_are_refused_in_one_line(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        refused = _read(Path(tmp), data)
        blank = not data.strip(b" \t\r\n")  # an empty transcript: read, with no events
        assert refused or blank, "random bytes read as a transcript"
