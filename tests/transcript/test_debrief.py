"""The debrief: built from the transcript alone, rendered as Markdown, HTML, JSON and Rich."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from debrief_support import FIXTURES, check_golden, normalise
from rich.console import Console

from raceday.errors import InputError, TranscriptError
from raceday.transcript.debrief import (
    DEBRIEF_FILE,
    NOT_SEEN,
    build_debrief,
    debrief_command,
    duration,
    load_debrief,
    render,
    render_json,
    render_markdown,
    render_terminal,
    step_item,
    world_states,
    write_debrief,
)
from raceday.transcript.debrief_html import render_html
from raceday.transcript.log import read_events

CASES = ("night", "guarded", "interrupted")


def md_of(name: str) -> str:
    folder = FIXTURES / name
    return normalise(render_markdown(load_debrief(folder)), folder)


@pytest.mark.parametrize("name", CASES)
def test_markdown_of_the_fixtures_matches_its_golden_file(name: str) -> None:
    check_golden(f"fixture-{name}.md", md_of(name))


def test_the_debrief_tells_the_night_beside_that_night() -> None:
    d = load_debrief(FIXTURES / "night")
    assert d.score is not None and (d.score.total, d.score.max) == (41, 100)
    phases = {p.id: p for p in d.timeline.phases}
    assert (phases["first-symptom"].team_time, phases["detection"].team_after) == ("23:48", 22)
    # that night's detection is found among the revealed facts, with its source
    assert (phases["detection"].event_time, phases["detection"].source) == ("00:38",
                                                                          "aws-summary")
    assert phases["restore"].event_after == 157 and phases["restore"].event_time == "02:25"
    assert phases["automation-stopped"].team_time == "00:52"
    assert phases["repair"].team_time == "00:20"
    assert "undone at 00:48" in phases["restore"].team_note
    assert [c.time for c in d.team_changes] == ["00:20", "00:52", "00:58"]
    assert all(c.break_glass for c in d.team_changes)
    assert [x.correct for x in d.declarations] == [False, True]
    assert d.monitors[0].first_alert == "00:10" and d.monitors[0].alerts == 2
    assert [s.live for s in d.guards.steps] == ["happened"] * 4
    assert not d.guards.replay.ran and "No replay" in d.guards.replay.note


def test_every_checklist_item_says_what_the_team_did_or_that_it_was_not_seen() -> None:
    d = load_debrief(FIXTURES / "night")
    status = {i.id: i.status for i in d.checklist}
    assert status == {
        "read-decide-write": "not done",
        "row-counts": NOT_SEEN,
        "never-states": "partly done",
        "least-power-cleanup": "not done",
        "recovery-under-load": "partly done",
        "removal-limits": "partly done",
    }
    recovery = next(i for i in d.checklist if i.id == "recovery-under-load")
    assert any("undone at 00:48" in line for line in recovery.did_not)
    # every item that is not done becomes a corrective action with owner and due date blank
    actions = d.after_action.actions
    assert len(actions) == 5 and all(a.owner == "" and a.due == "" for a in actions)


def test_guards_that_prevent_the_race_score_and_read_as_such() -> None:
    d = load_debrief(FIXTURES / "guarded")
    assert d.score is not None and d.score.prevented_outright
    assert "prevented the race" in d.summary.outcome
    assert [s.verdict for s in d.guards.steps] == ["prevented"] * 3 + ["never reached"]
    assert [e.statement for e in d.guards.edits] == ["enactor-cleanup"]
    assert d.guards.schema_changes[0].sql.startswith("CREATE TRIGGER plan_forward_only")
    replay = d.guards.replay
    assert replay.ran and [s.outcome for s in replay.steps] == ["refused", "0 rows",
                                                               "did not happen"]
    status = {i.id: i.status for i in d.checklist}
    # no fault: a recovery was never practised, and the replay does not pretend it was
    assert status["recovery-under-load"] == NOT_SEEN
    # a clean-up that found nothing to delete is not a lost conditional write
    assert status["row-counts"] == NOT_SEEN
    assert status["least-power-cleanup"] == "done"


def test_a_truncated_transcript_renders_with_a_warning_naming_the_cut_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = FIXTURES / "interrupted"
    log = read_events(folder)
    assert log.warning is not None and ":8:" in log.warning
    d = build_debrief(log.events, log.warning)
    assert d.score is None and d.summary.ended.startswith("interrupted")
    md = render_markdown(d)
    assert "> **Warning:**" in md and "events.jsonl:8: last line cut short" in md
    assert "not by 09:07 (the transcript ends)" in md
    assert debrief_command(folder, "md", None, Console(file=io.StringIO())) == 0
    assert "events.jsonl:8: last line cut short" in capsys.readouterr().err


def test_a_corrupt_transcript_is_one_clear_error() -> None:
    with pytest.raises(TranscriptError) as caught:
        debrief_command(FIXTURES / "corrupt", "md", None, Console(file=io.StringIO()))
    problems = caught.value.problems
    assert len(problems) == 1 and "events.jsonl:3: not a valid event" in problems[0]


def test_missing_and_empty_transcripts_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="no such transcript"):
        load_debrief(tmp_path / "nowhere")
    (tmp_path / "events.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(TranscriptError, match="nothing to debrief"):
        load_debrief(tmp_path)


class _Strict(HTMLParser):
    """Collects what could fetch anything, and checks the tags balance."""

    VOID = {"meta", "br", "link", "img", "input", "hr", "circle", "rect", "line", "path"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.external: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        names = {name for name, _ in attrs}
        if tag in {"link", "script", "img", "iframe", "object", "embed", "base"}:
            self.external.append(f"<{tag}>")
        self.external += [f"{tag} {n}=" for n in names & {"src", "href", "xlink:href",
                                                          "srcset", "action", "data"}]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


@pytest.mark.parametrize("name", CASES)
def test_the_html_is_one_self_contained_printable_file(name: str) -> None:
    html = render_html(load_debrief(FIXTURES / name))
    parser = _Strict()
    parser.feed(html)
    parser.close()
    assert parser.stack == [], f"unclosed tags {parser.stack}"
    assert parser.external == []
    lowered = html.lower()
    for needle in ("http://", "https://", "src=", "href=", "url(", "@import", "<link",
                   "<script"):
        assert needle not in lowered, needle
    assert {"svg", "style", "table"} <= parser.tags
    assert "@media print" in html


def test_a_players_sql_cannot_put_a_url_in_the_html() -> None:
    log = read_events(FIXTURES / "night")
    events = [dict(e) for e in log.events]
    for event in events:
        if event["kind"] == "statement" and not event["automated"] and event.get("writes"):
            event["sql"] = "UPDATE t SET note = 'https://example.com/<script src=x>' WHERE 1"
            break
    html = render_html(build_debrief(events))
    assert "https://" not in html and "<script" not in html and "src=" not in html
    assert "https:&#47;&#47;example.com/&lt;script src&#61;x&gt;" in html


def test_json_is_one_object_with_the_whole_debrief() -> None:
    data = json.loads(render_json(load_debrief(FIXTURES / "night")))
    assert data["format"] == "raceday-debrief"
    assert data["summary"]["roles"]["responder"] == "Responder"
    assert data["score"]["total"] == 41
    assert {p["id"] for p in data["timeline"]["phases"]} >= {"detection", "restore"}
    assert len(data["checklist"]) == 6


def test_the_terminal_debrief_has_the_score_the_chart_and_the_checklist() -> None:
    out = io.StringIO()
    render_terminal(load_debrief(FIXTURES / "night"), Console(file=out, width=120))
    text = out.getvalue()
    for needle in ("Debrief: The night of the race", "Score 41/100", "Your team",
                   "That night", "The article's checklist", "Corrective actions"):
        assert needle in text, needle


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_the_command_writes_to_a_file_or_stdout(tmp_path: Path, fmt: str) -> None:
    out = io.StringIO()
    target = tmp_path / f"debrief.{fmt}"
    assert debrief_command(FIXTURES / "night", fmt, target, Console(file=out)) == 0
    assert target.read_text(encoding="utf-8") == render(load_debrief(FIXTURES / "night"), fmt)
    assert str(target) in out.getvalue()
    to_stdout = io.StringIO()
    assert debrief_command(FIXTURES / "night", fmt, None, Console(file=to_stdout)) == 0
    assert to_stdout.getvalue() == target.read_text(encoding="utf-8")


def test_the_command_refuses_an_unknown_format() -> None:
    with pytest.raises(InputError, match="unknown debrief format 'pdf'"):
        debrief_command(FIXTURES / "night", "pdf", None, Console(file=io.StringIO()))


def test_write_debrief_puts_debrief_md_in_the_session_folder(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    shutil.copytree(FIXTURES / "night", folder)
    path = write_debrief(folder)
    assert path == folder / DEBRIEF_FILE
    assert path.read_text(encoding="utf-8").startswith("# Debrief: The night of the race")


def test_the_world_so_far_follows_the_events() -> None:
    events = read_events(FIXTURES / "night").events
    states = world_states(events)
    assert len(states) == len(events)
    at = {s.seq: s for s in states}
    fault_seq = next(e["seq"] for e in events if e["kind"] == "fault")
    assert at[fault_seq].faults and at[fault_seq - 1].faults == ()
    last = states[-1]
    assert last.score == "41/100" and last.faults == ()
    assert last.restores == ("00:20", "00:58") and last.relapses == ("00:48",)
    assert any("Automation stopped" in m for m in last.milestones)
    assert any("SCORE 41/100" in line for line in last.lines())


def test_small_pieces() -> None:
    assert [duration(m) for m in (None, 0, 50, 60, 157)] == ["—", "0 min", "50 min", "1 h",
                                                             "2 h 37 min"]
    assert step_item("stale-apply") == "read-decide-write"
    assert step_item("active-plan-delete") == "least-power-cleanup"
    assert step_item("wedged-automation") == "never-states"
    assert step_item("stale-write") == "read-decide-write"
    assert step_item("something-else") is None


def test_the_core_never_imports_textual() -> None:
    code = ("import sys\n"
            "import raceday.transcript.debrief, raceday.transcript.debrief_html\n"
            "import raceday.transcript.timeline_chart\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] == 'textual'"
            " or m.startswith('raceday.tui')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""
