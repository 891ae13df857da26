"""`raceday guide EXERCISE`: the facilitator guide written from exercise.yaml, in Markdown and
HTML, holds what a facilitator looks for: each inject's minute or trigger and what the team
is expected to do, the join steps, the answer key naming every finding, the pauses and the
hot wash ending in the AAR call."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from html import escape
from pathlib import Path

import pytest

from raceday.cli import main
from raceday.engine.load import load_exercise, load_named_exercise
from raceday.exercise.guide import build_guide
from raceday.exercise.guide_html import guide_html
from raceday.exercise.guide_markdown import guide_markdown
from raceday.exercise.guide_msel import when
from raceday.exercise.model import Exercise, Inject, InjectKind
from raceday.exercise.times import format_time

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p.name for p in (ROOT / "exercises").iterdir()
                 if (p / "exercise.yaml").is_file())


def _both(exercise: Exercise) -> dict[str, str]:
    guide = build_guide(exercise)
    return {"md": guide_markdown(guide), "html": guide_html(guide)}


def _as_html(text: str) -> str:
    """What the HTML shows for a line of the Markdown's marks (escaped, `code` as a tag)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text, quote=True))


def test_every_bundled_exercise_is_listed() -> None:
    assert {"dynamodb-dns-race", "isolation-lab", "lost-update-basics",
            "recovery-under-load"} <= set(BUNDLED)


@pytest.mark.parametrize("name", BUNDLED)
def test_the_guide_holds_what_a_facilitator_looks_for(name: str) -> None:
    exercise = load_named_exercise(name)
    for fmt, text in _both(exercise).items():
        show = _as_html if fmt == "html" else (lambda s: s)
        for title in ("Purpose and scope", "Objectives", "Logistics and joining",
                      "Master scenario events list (MSEL)", "Answer key",
                      "What to say at each pause", "Hot wash and after-action report"):
            assert show(title) in text, (fmt, title)
        # every inject: its minute (or the fault it follows), and each expected action
        for inject in exercise.injects:
            assert show(f": {' '.join(inject.title.split())}") in text, (fmt, inject.id)
            if inject.at is not None:
                assert format_time(inject.at, exercise.clock.start) in text
            else:
                assert show(when(exercise, inject)) in text, (fmt, inject.id)
            for n, expected in enumerate(inject.expect, start=1):
                assert show(f"{expected} (mark `{inject.id}:{n}`)") in text, (fmt, inject.id)
        # the join steps, as `raceday join` takes them
        assert show("raceday join transcripts/<session> --as <name> --role ") in text
        assert show(f"raceday host {exercise.id} --seats ") in text
        assert show("raceday watch transcripts/<session>") in text
        # the answer key names every finding, right and wrong
        for finding in exercise.findings:
            assert show(f"`{finding.id}`: {' '.join(finding.text.split())}") in text
        # the hot wash ends in the AAR call
        assert show("raceday aar transcripts/<session>") in text


def test_the_msel_gives_minutes_triggers_and_expectations() -> None:
    text = guide_markdown(build_guide(load_named_exercise("dynamodb-dns-race")))
    assert "### 2. 23:40: Low severity: DNS Enactor A lock retries on one endpoint" in text
    assert ("1. names the lock Enactor A cannot take, and the endpoint it guards (mark "
            "`enactor-a-lock-retries:1`)") in text
    assert "| 19. when `empty-answer` begins, +1 min | 312 alarms firing in us-east-1 |" in text
    assert "- **Follows**: An endpoint's DNS answer is empty (never sent if the team keeps " \
           "it away)" in text
    # a flapping fault's inject says how long it must hold
    rul = guide_markdown(build_guide(load_named_exercise("recovery-under-load")))
    assert "when `capacity-below-floor` has held 3h of the last 4h" in rul


def test_the_answer_key_and_the_pauses() -> None:
    text = guide_markdown(build_guide(load_named_exercise("dynamodb-dns-race")))
    assert "| `stale-plan-applied`: A delayed Enactor applied an old plan over a newer one " \
           "| right |" in text
    assert "| `ddos-attack`: A DDoS attack is overwhelming the DynamoDB endpoint | WRONG " \
           "(costs points) |" in text
    assert "1. **stale-apply**: The delayed Enactor applies its stale plan" in text
    assert "| `kill-switch-first` | any | 5 |" in text
    # the pauses come in the clock's order, each at its reveal
    detection = text.index("Pause at 00:38")
    restored = text.index("Pause at 02:25")
    assert detection < restored < text.index("Pause at 02:44")
    assert "pause a minute before 23:48" in text


def test_the_acts_of_one_night_name_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guide", "dynamodb-dns-race"]) == 0
    assert "goes on in **Recovery under load" in capsys.readouterr().out
    assert main(["guide", "recovery-under-load"]) == 0
    assert "It is the next act of **The DNS race" in capsys.readouterr().out


def test_an_inject_added_to_the_exercise_is_in_the_guide(tmp_path: Path) -> None:
    """The guide is written from exercise.yaml: an inject added there is in both formats,
    with its minute and its expectation, without touching the guide's code."""
    folder = tmp_path / "isolation-lab"
    shutil.copytree(ROOT / "exercises" / "isolation-lab", folder)
    shutil.copytree(ROOT / "exercises" / "shared", tmp_path / "shared")
    path = folder / "exercise.yaml"
    text = path.read_text(encoding="utf-8")
    added = ("injects:\n"
             "  - id: cfo-asks\n"
             "    at: \"23:52\"\n"
             "    kind: status\n"
             "    title: The CFO asks what to tell the board\n"
             "    expect:\n"
             "      - names who speaks for the team\n")
    path.write_text(text.replace("injects:\n", added, 1), encoding="utf-8")
    exercise = load_exercise(folder)
    assert any(i.id == "cfo-asks" for i in exercise.injects)
    for fmt, out in _both(exercise).items():
        assert "23:52: The CFO asks what to tell the board" in out, fmt
        assert "names who speaks for the team (mark " in out, fmt
    # and a made one, that follows the world
    made = Inject(id="late-page", at=None, title="Second page", kind=InjectKind.ALARM,
                  on_fault=exercise.invariants[0].id, after=7, expect=("pages the owner",))
    out = guide_markdown(build_guide(replace(exercise, injects=exercise.injects + (made,))))
    assert f"when `{exercise.invariants[0].id}` begins, +7 min: Second page" in out
    assert "1. pages the owner (mark `late-page:1`)" in out


def test_exercise_text_is_escaped_in_html() -> None:
    exercise = load_named_exercise("isolation-lab")
    evil = Inject(id="evil", at=3, title="<script>alert(1)</script> & <b>",
                  text='<img src=x onerror="y"> http://example.com')
    html = guide_html(build_guide(replace(exercise, injects=exercise.injects + (evil,))))
    assert "<script>" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in html
    assert "src=x" not in html and "http://example.com" not in html
    assert '<meta name="viewport"' in html and "@media print" in html
    assert "@media (max-width: 640px)" in html


def test_the_cli_writes_both_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guide", "isolation-lab"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Facilitator guide: ")
    target = tmp_path / "guide.html"
    assert main(["guide", "isolation-lab", "--html", "-o", str(target)]) == 0
    assert capsys.readouterr().out.strip() == f"Guide written to {target}"
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["guide", "isolation-lab", "--format", "html"]) == 0
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("argv", [
    ["guide", "no-such-exercise"],
    ["guide", "isolation-lab", "-o", "/nonexistent-folder/guide.md"],
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("raceday: ") and "\n" not in err


def test_unwritable_output_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guide", "isolation-lab", "-o", str(tmp_path)]) == 2  # a folder
    assert "cannot write the guide" in capsys.readouterr().err


def test_a_program_off_the_path_is_named_once() -> None:
    exercise = load_named_exercise("isolation-lab")
    text = guide_markdown(build_guide(exercise, program="/opt/venv/bin/raceday"))
    assert "type `/opt/venv/bin/raceday` for it" in text
    assert "type `" not in guide_markdown(build_guide(exercise))
