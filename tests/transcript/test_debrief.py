"""The debrief: built from the transcript alone, rendered as Markdown, HTML, JSON and Rich."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from debrief_support import EXERCISES, FIXTURES, ROOT, check_golden, normalise
from rich.console import Console

from raceday.cli import main
from raceday.errors import InputError, TranscriptError
from raceday.transcript import events as ev
from raceday.transcript import verdicts as vd
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
    world_states,
    write_debrief,
)
from raceday.transcript.debrief.html import render_html
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
    assert d.score is not None and (d.score.total, d.score.max) == (27, 100)
    phases = {p.id: p for p in d.timeline.phases}
    assert (phases["first-symptom"].team_time, phases["detection"].team_after) == ("23:48", 17)
    # that night's detection is the revealed fact the exercise tags with the phase
    assert (phases["detection"].event_time, phases["detection"].source) == ("00:38",
                                                                          "aws-summary")
    assert phases["restore"].event_after == 157 and phases["restore"].event_time == "02:25"
    assert phases["automation-stopped"].team_time == "00:20"
    assert phases["automation-stopped"].event_time == "05:38"
    assert phases["repair"].team_time == "00:09"
    assert "undone at 00:12" in phases["restore"].team_note
    assert [c.time for c in d.team_changes] == ["00:09", "00:20", "00:21"]
    assert all(c.break_glass for c in d.team_changes)
    assert [x.correct for x in d.declarations] == [False, True]
    assert d.monitors[0].first_alert == "00:05" and d.monitors[0].alerts == 2
    assert [r.action for r in d.refusals] == ["monitor"]
    assert [h.id for h in d.hints] == ["kill-switch-first"]
    assert [s.live for s in d.guards.steps] == ["happened"] * 4
    assert not d.guards.replay.ran and "No replay" in d.guards.replay.note
    assert d.timeline.source_titles["dat453"].startswith("AWS re:Invent 2025 talk DAT453")


def test_every_checklist_item_says_what_the_team_did_or_that_it_was_not_seen() -> None:
    d = load_debrief(FIXTURES / "night")
    assert d.checklist_title == "The article's checklist"
    status = {i.id: i.status for i in d.checklist}
    assert status == {
        "read-decide-write": "not done",
        "row-counts": NOT_SEEN,
        "never-states": "not done",
        "least-power-cleanup": "not done",
        "recovery-under-load": "partly done",
        # the kill switch is a note, never a limit on what one run may remove (issue 27)
        "removal-limits": "not done",
    }
    recovery = next(i for i in d.checklist if i.id == "recovery-under-load")
    assert any("undone at 00:12" in line for line in recovery.did_not)
    stale = next(i for i in d.checklist if i.id == "read-decide-write")
    assert "no guard of the team's" in stale.did_not[0]
    # every item that is not done becomes the exercise's corrective action, owner and due blank
    actions = d.after_action.actions
    assert len(actions) == 5 and all(a.owner == "" and a.due == "" for a in actions)
    removal = next(i for i in d.checklist if i.id == "removal-limits")
    assert not any("kill switch" in line for line in removal.did)
    assert "not a limit on what one run may remove" in removal.note
    assert actions[0].action.startswith("Make every late write state the version")


def test_guards_that_prevent_the_race_score_and_read_as_such() -> None:
    d = load_debrief(FIXTURES / "guarded")
    assert d.score is not None and d.score.prevented_outright
    assert "guards were seen stopping the race (stale-apply)" in d.summary.outcome
    assert [s.verdict for s in d.guards.steps] == ["prevented"] * 4
    # the guard stopped the first step; the rest were never reached, and no line says otherwise
    assert [s.guarded for s in d.guards.steps] == [True, False, False, False]
    assert "refused" in d.guards.steps[0].evidence
    assert [e.statement for e in d.guards.edits] == ["enactor-b-cleanup"]
    assert d.guards.schema_changes[0].sql.startswith("CREATE TRIGGER plan_forward_only")
    replay = d.guards.replay
    assert replay.ran and [s.outcome for s in replay.steps] == ["prevented"] * 4
    status = {i.id: i.status for i in d.checklist}
    # no fault: a recovery was never practised, and the replay does not pretend it was
    assert status["recovery-under-load"] == NOT_SEEN
    # the race never reached a state that must never exist: nothing is claimed for it
    assert status["never-states"] == NOT_SEEN
    assert status["read-decide-write"] == "done"
    assert status["least-power-cleanup"] == "done"  # the edited clean-up ran, as edited


def test_a_truncated_transcript_renders_with_a_warning_naming_the_cut_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = FIXTURES / "interrupted"
    log = read_events(folder)
    assert log.warning is not None and ":24:" in log.warning
    d = build_debrief(log.events, log.warning)
    assert d.score is None and d.summary.ended.startswith("interrupted")
    md = render_markdown(d)
    assert "> **Warning:**" in md and "events.jsonl:24: last line cut short" in md
    assert f"not by {d.summary.clock_to} (the transcript ends)" in md
    assert debrief_command(folder, "md", None, Console(file=io.StringIO())) == 0
    assert "events.jsonl:24: last line cut short" in capsys.readouterr().err


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
    events = list(read_events(FIXTURES / "night").events)
    index = next(i for i, e in enumerate(events)
                 if isinstance(e, ev.Statement) and not e.automated and e.writes)
    statement = events[index]
    assert isinstance(statement, ev.Statement)
    events[index] = dataclasses.replace(
        statement, sql="UPDATE t SET note = 'https://example.com/<script src=x>' WHERE 1")
    html = render_html(build_debrief(events))
    assert "https://" not in html and "<script" not in html and "src=" not in html
    assert "https:&#47;&#47;example.com/&lt;script src&#61;x&gt;" in html


def test_json_is_one_object_with_the_whole_debrief() -> None:
    data = json.loads(render_json(load_debrief(FIXTURES / "night")))
    assert data["format"] == "raceday-debrief"
    assert data["summary"]["roles"]["responder"] == "Responder"
    assert data["score"]["total"] == 27
    assert {p["id"] for p in data["timeline"]["phases"]} >= {"detection", "restore"}
    assert len(data["checklist"]) == 6


def test_the_terminal_debrief_has_the_score_the_chart_and_the_checklist() -> None:
    out = io.StringIO()
    render_terminal(load_debrief(FIXTURES / "night"), Console(file=out, width=120))
    text = out.getvalue()
    for needle in ("Debrief: The DNS race", "Score 27/100", "Your team",
                   "that night", "The article's checklist", "Corrective actions"):
        assert needle in text, needle


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_the_command_writes_to_a_file_or_stdout(tmp_path: Path, fmt: str) -> None:
    out = io.StringIO()
    folder = tmp_path / ("a-folder-deeper-than-a-terminal-is-wide-" * 3)  # wider than 80 columns
    folder.mkdir()
    target = folder / f"debrief.{fmt}"
    assert debrief_command(FIXTURES / "night", fmt, target, Console(file=out, width=80)) == 0
    assert target.read_text(encoding="utf-8") == render(load_debrief(FIXTURES / "night"), fmt)
    assert out.getvalue() == f"Debrief written to {target}\n"  # one line: the path copies whole
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
    assert path.read_text(encoding="utf-8").startswith("# Debrief: The DNS race")


def test_the_world_so_far_follows_the_events() -> None:
    events = read_events(FIXTURES / "night").events
    states = world_states(events)
    assert len(states) == len(events)
    at = {s.seq: s for s in states}
    fault_seq = next(e.seq for e in events if isinstance(e, ev.Fault))
    assert at[fault_seq].faults and at[fault_seq - 1].faults == ()
    last = states[-1]
    assert last.score == "27/100" and last.faults == ()
    assert last.restores == ("00:09", "00:21") and last.relapses == ("00:12",)
    assert any("automation stopped" in m for m in last.milestones)
    assert any("SCORE 27/100" in line for line in last.lines())


def test_the_world_so_far_is_the_same_whichever_event_is_asked_for_first() -> None:
    """`raceday review` makes each state when it is first shown: asked for out of order
    (the last first, as End does; then one in the middle), each is the state its events
    make, and one never asked for is never made."""
    events = read_events(FIXTURES / "night").events
    in_order = list(world_states(events))
    states = world_states(events)
    assert states[-1] == in_order[-1] and states[len(events) // 2] == in_order[len(events) // 2]
    assert list(states) == in_order and states[2:5] == in_order[2:5]
    fresh = world_states(events)
    assert fresh[0] == in_order[0] and len(fresh._made) == 1
    with pytest.raises(IndexError):
        fresh[len(events)]


def test_small_pieces() -> None:
    assert [duration(m) for m in (None, 0, 50, 60, 157)] == ["—", "0 min", "50 min", "1 h",
                                                             "2 h 37 min"]


def test_the_core_never_imports_textual() -> None:
    code = ("import sys\n"
            "import raceday.transcript.debrief, raceday.transcript.debrief.html\n"
            "import raceday.transcript.timeline_chart\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] == 'textual'"
            " or m.startswith('raceday.tui')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


EXAMPLE = ROOT / "transcripts" / "examples" / "lost-update-basics-solo-complete"


def test_an_old_transcript_still_renders_and_says_what_it_lacks() -> None:
    d = load_debrief(EXAMPLE)
    assert d.score is not None and d.checklist == ()
    assert any("written before exercises gave the debrief" in n for n in d.notes)
    for fmt in ("md", "html", "json"):
        assert render(d, fmt)
    assert "## Timeline" in render_markdown(d)


def test_the_onboarding_exercise_shows_its_own_words_not_the_dns_nights(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]
                                                                        ) -> None:
    script = EXERCISES / "lost-update-basics" / "scripts" / "solo-complete.yaml"
    assert main(["run", str(EXERCISES / "lost-update-basics"), "--script", str(script),
                 "--transcripts", str(tmp_path)]) == 0
    capsys.readouterr()
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    d = load_debrief(folder)
    assert d.checklist_title == "The morning's guards"
    assert [p.label for p in d.timeline.phases][-1] == "Healthy again"
    assert not d.timeline.has_event
    text = render_markdown(d) + render_html(d)
    for words in ("article", "That night", "that night", "DynamoDB", "Enactor"):
        assert words not in text.replace("The same shape, on 19 October 2025", ""), words
    assert {i.status for i in d.checklist} >= {"done"}


def test_a_race_a_player_held_off_claims_no_guard(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A player holding Enactor A makes its own write carry the check: the race did not happen
    tonight, but no guard was put in place, the final replay (every role automated) shows the
    race, and no line of the debrief says a guard stopped it."""
    script = EXERCISES / "dynamodb-dns-race" / "scripts" / "enactor-a-refuses.yaml"
    assert main(["run", str(EXERCISES / "dynamodb-dns-race"), "--script", str(script),
                 "--transcripts", str(tmp_path)]) == 0
    capsys.readouterr()
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    d = load_debrief(folder)
    assert not d.guards.any
    stale = d.guards.steps[0]
    assert stale.verdict == "happened" and not stale.guarded
    assert "guards were seen" not in d.summary.outcome
    assert not any("guards" in s.lower() for s in d.after_action.strengths)
    status = {i.id: i.status for i in d.checklist}
    # the replay, every role automated, shows the race: no practice of the team's was seen
    assert status["read-decide-write"] == "not done"
    assert "done" not in (status["never-states"], status["least-power-cleanup"])


def test_the_debrief_shows_what_the_score_decided_and_not_the_live_announcement() -> None:
    start = ev.SessionStart(
        seq=1, sim_time="23:00", minute=0, schema=ev.SCHEMA_VERSION, exercise="x", title="X",
        players=("responder",), automated=(), pace="turns", clock_start="2025-10-19T23:00:00",
        zone="PDT", summary="", roles={}, night="That night",
        findings={"f": ev.FindingInfo(text="the cause", correct=True)})
    fault = ev.Fault(seq=2, sim_time="23:10", minute=10, invariant="i", fault="broken")
    # the session announced a monitor's alert; the score judged that monitor noise
    detected = ev.Detected(seq=3, sim_time="23:12", minute=12, how="monitor 'm' alerted",
                           latency_minutes=2)
    left = ev.TeamLeft(seq=4, sim_time="23:20", minute=20, until="02:45")
    later = ev.Note(seq=5, sim_time="23:30", minute=30, text="n", after_team_left=True)
    score = ev.ScoreEvent(seq=6, sim_time="02:45", minute=225, reason="ended", score=vd.Score(
        total=0, max=60, fault=vd.Fault(occurred=True, started_at="23:10", outcome=vd.OCCURRED),
        detection=vd.Detection(points=0, max=30, event_minutes=50, false_alarms=(
            vd.FalseAlarm(finding="f", at="23:05"),), noise=("m",)),
        recovery=vd.Recovery(points=0, max=30, outage_minutes=215, relapses=("00:12",),
                             event_minutes=157)))
    d = build_debrief((start, fault, detected, left, later, score))
    assert d.score is not None
    assert "The team never surfaced it" in d.summary.outcome  # not the announced alert
    figures = {f.label: (f.team, f.night) for f in d.score.figures}
    assert figures["Time to alert"] == ("no monitor of the team's alerted on it", "50 min")
    assert figures["Minutes of outage over the night"] == (
        "3 h 35 min, 1 relapse included (at 00:12)", "2 h 37 min")
    judged = " ".join(d.score.judged)
    assert "False alarm: 'the cause' declared at 23:05" in judged
    assert "monitor 'm' returned rows while the world was healthy" in judged
    assert "The team left at 23:20" in judged and "(1 event)" in judged
    text = render_markdown(d)
    assert "| Time to alert | no monitor of the team's alerted on it | 50 min |" in text


@pytest.mark.parametrize(("play", "expected"), [
    # a version check alone: the clean-up was never touched, whatever harm it kept away
    ("version-check-edit", {"least-power-cleanup": NOT_SEEN}),
    # a never-empty trigger keeps the lost-write night's harm away, but no count was read;
    # the same trigger refusing the clean-up's delete is the clean-up's own evidence
    ("never-empty-whole", {"row-counts": NOT_SEEN, "least-power-cleanup": "done"}),
    # the apply stops on 0 rows: the practice's own act, on its own night
    ("row-count-stop", {"row-counts": "done", "least-power-cleanup": NOT_SEEN}),
])
def test_a_practice_is_done_only_on_its_own_evidence(
        play: str, expected: dict[str, str], tmp_path: Path) -> None:
    """Issue 57: the checklist credited a practice because another guard kept the same harm
    away ("Least power: done" for a version check alone; "Row counts: done" beside its own
    "no write changed 0 rows")."""
    from raceday.engine.headless import run_script
    from raceday.engine.load import load_exercise
    from raceday.engine.script import load_script

    exercise = load_exercise(EXERCISES / "dynamodb-dns-race")
    script = ROOT / "tests" / "scenarios" / "judge" / f"{play}.yaml"
    session, _ = run_script(exercise, load_script(script, exercise), tmp_path)
    items = {i.id: i for i in build_debrief(read_events(session.folder).events).checklist}
    assert {k: items[k].status for k in expected} == expected
    for key, status in expected.items():
        if status == NOT_SEEN:
            assert not items[key].did and "by no act of this practice's" in items[key].note, \
                items[key]
