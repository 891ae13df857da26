"""One account of the night (issue 57): every sentence the debrief, its checklist and its
after-action report write follows from what happened, on plays nobody wrote.

The plays are generated (hypothesis): one to three of an exercise's bundled and test scripts,
each shifted in time, with any subset of their steps kept. They run headless on both small
exercises and the flagship, and each debrief is held against its own events:

- a race step is never both prevented and happened: the step table, the checklist, the AAR's
  strengths and areas for improvement and the timeline all say what the events say;
- a practice reads done (or partly) only with its own evidence, and every line it is credited
  with names an edit, a count, a run, a replay or a verdict the transcript holds;
- the AAR's strengths are the team's acts (never raceday's final replay), and no strength is
  the contrary of an area for improvement;
- "the good path" never reads as if all still works when the score took collateral;
- what the debrief says of detection and recovery is what the score decided.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raceday.engine.headless import open_session, step_action
from raceday.engine.load import load_exercise
from raceday.engine.script import Step, load_script
from raceday.errors import ScriptError
from raceday.exercise.model import Exercise
from raceday.exercise.times import parse_time
from raceday.transcript import events as ev
from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.debrief.markdown import render_markdown
from raceday.transcript.debrief.model import Debrief
from raceday.transcript.log import of_kind, read_events
from raceday.transcript.wording import step_word

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ("lost-update-basics", "isolation-lab", "dynamodb-dns-race")
PLAYER = {"lost-update-basics": "operator", "isolation-lab": "operator",
          "dynamodb-dns-race": "responder"}
SHIFTS = (0, 0, 0, -20, -5, 5, 20, 60)
"""Minutes a source script is moved by: most keep their time, some come earlier or later."""


@dataclass(frozen=True)
class Source:
    """A script's steps, each with the minute it meant to act at."""

    name: str
    steps: tuple[tuple[int, Step], ...]


def _sources(exercise: Exercise) -> tuple[Source, ...]:
    """The bundled and test scripts of one exercise that its one player role plays, each
    step with its minute (a `wait` only moves the clock; it is not a step of its own)."""
    paths = sorted((ROOT / "exercises" / exercise.id / "scripts").glob("*.yaml"))
    paths += sorted(p for p in (ROOT / "tests" / "scenarios").rglob("*.yaml")
                    if "postgres" not in p.parts)
    out: list[Source] = []
    for path in paths:
        if f"exercise: {exercise.id}\n" not in path.read_text(encoding="utf-8"):
            continue
        try:
            script = load_script(path, exercise)
        except ScriptError:
            continue
        if script.roles != (PLAYER[exercise.id],) or script.seats:
            continue
        minute, steps = 0, []
        for step in script.steps:
            when = step.until if step.action == "wait" else step.at
            if when is not None and when.plus is not None:
                minute += when.plus
            elif when is not None and when.clock is not None:
                minute = parse_time(when.text, exercise.clock.start)
            if step.action != "wait":
                steps.append((minute, step))
        if steps:
            out.append(Source(str(path.relative_to(ROOT)), tuple(steps)))
    return tuple(out)


LOADED = {name: load_exercise(ROOT / "exercises" / name) for name in EXERCISES}
SOURCES = {name: _sources(ex) for name, ex in LOADED.items()}

Play = tuple[tuple[int, str, Step], ...]  # (minute, where it came from, step)


@st.composite
def plays(draw: st.DrawFn, exercise: str) -> Play:
    """One to three scripts, each shifted, with a subset of their steps."""
    sources = SOURCES[exercise]
    chosen = draw(st.lists(st.integers(0, len(sources) - 1), min_size=1, max_size=3,
                           unique=True))
    picked: list[tuple[int, int, int, str, Step]] = []
    for n, index in enumerate(chosen):
        source = sources[index]
        shift = draw(st.sampled_from(SHIFTS))
        keep = draw(st.lists(st.booleans(), min_size=len(source.steps),
                             max_size=len(source.steps)))
        for i, ((minute, step), kept) in enumerate(zip(source.steps, keep, strict=True)):
            if kept:
                picked.append((max(0, minute + shift), n, i,
                               f"{source.name}:{step.line}", step))
    picked.sort(key=lambda p: p[:3])
    return tuple((minute, where, step) for minute, _, _, where, step in picked)


def play_events(exercise: Exercise, play: Play, folder: Path) -> list[ev.Event]:
    """Play the steps headless, each at its minute (or as soon after as the clock allows),
    to the end of the night or the first `end`; the transcript's events."""
    session = open_session(exercise, (PLAYER[exercise.id],), folder, origin="script")
    for minute, where, step in play:
        if step.action == "end":
            break
        if minute > session.minute:
            session.advance_to(min(minute, session.end_minute))
        if session.minute >= session.end_minute:
            break
        action = step_action(session, step, where)
        if action is not None:
            session.perform(action)
    else:
        session.advance_to(session.end_minute)
    session.end()
    return list(read_events(session.folder).events)


# -- the account, held against the events ----------------------------------------------------


TIME = r"\d\d:\d\d"


class Account:
    """One debrief and the events it was written from; `problems` lists every sentence that
    does not follow from them."""

    def __init__(self, events: Sequence[ev.Event]) -> None:
        self.events = list(events)
        self.debrief: Debrief = build_debrief(self.events)
        self.text = render_markdown(self.debrief)
        self.start = next(of_kind(self.events, ev.SessionStart))
        score_event = next(e for e in reversed(self.events) if isinstance(e, ev.ScoreEvent))
        self.score = score_event.score
        self.happened = {e.step for e in of_kind(self.events, ev.RaceStep) if e.happened}
        self.verdicts = {s.id: s for s in self.score.steps}
        self.problems: list[str] = []

    def time(self, e: ev.Event) -> str:
        return self.debrief_time(e)

    def debrief_time(self, e: ev.Event) -> str:
        if e.sim_time:
            return e.sim_time
        raise AssertionError(f"event {e.seq} has no time")

    def at(self, kind: type[ev.Event], face: str) -> list[ev.Event]:
        return [e for e in of_kind(self.events, kind) if self.time(e) == face]

    def guards_by(self, minute: int) -> bool:
        return any(e.minute <= minute for e in of_kind(self.events, ev.Edit)) or any(
            e.minute <= minute and e.ok and e.schema_changed and not e.automated
            for e in of_kind(self.events, ev.Statement))

    def bad(self, where: str, sentence: str, why: str) -> None:
        self.problems.append(f"{where}: {sentence!r}: {why}")

    def check(self) -> list[str]:
        self.steps()
        self.checklist()
        self.after_action()
        self.good_path()
        self.detection_and_recovery()
        return self.problems

    # -- the race, step by step ----------------------------------------------------------

    def steps(self) -> None:
        for s in self.debrief.guards.steps:
            if (s.live == "happened") != (s.id in self.happened):
                self.bad("race step", f"{s.id}: {s.live_label}",
                         f"the events say it {'happened' if s.id in self.happened else 'did not'}")
            verdict = self.verdicts.get(s.id)
            if verdict is not None and s.verdict != step_word(verdict.status):
                self.bad("race step", f"{s.id}: scored {s.verdict}",
                         f"the score says {verdict.status}")
            if s.guarded and not self._guard_seen(s.id, s.evidence):
                self.bad("race step", f"{s.id}: {s.evidence}", "no such guard was seen")
        for step in self.happened:
            for said in (f"{step} did not happen", f"race step {step} did not happen",
                         f"{step} happened, but"):
                if said in self.text:
                    self.bad("debrief", said, f"{step} happened (its race_step event)")
            title = next((e.title for e in of_kind(self.events, ev.RaceStep)
                          if e.step == step), "")
            if title and f"({title}) did not happen" in self.text:
                self.bad("debrief", f"{step} ({title}) did not happen", f"{step} happened")
        marked = {m.label.removeprefix("race step: ") for m in self.debrief.timeline.marks
                  if m.kind == "race_step"}
        if marked != self.happened:
            self.bad("timeline", ", ".join(sorted(marked)),
                     f"the race steps that happened are {sorted(self.happened)}")

    def _guard_seen(self, step: str, evidence: str) -> bool:
        """A guard of the team's seen stopping the step: in a replay of the team's world
        that prevented it, or in a run of its task that was refused or changed nothing."""
        m = re.match(rf"the replay at ({TIME}) ran it against the team's world", evidence)
        if m:
            return any(e.available and e.result is not None
                       and any(x.id == step and x.status == "prevented" for x in e.result.steps)
                       and self.guards_by(e.minute)
                       for e in self.at(ev.Replay, m.group(1)) if isinstance(e, ev.Replay))
        m = re.match(rf"a guard of the team's was in place when (\S+) ran at ({TIME})", evidence)
        if m:
            task = next((s.task for s in self.start.race_steps if s.id == step), None)
            return m.group(1) == task and any(
                isinstance(e, ev.Automation) and e.task == task
                and e.outcome in ("failed", "zero_rows") and self.guards_by(e.minute)
                for e in self.at(ev.Automation, m.group(2)))
        return False

    # -- the checklist ----------------------------------------------------------------------

    def checklist(self) -> None:
        practices = {p.id: p for p in self.start.checklist}
        for item in self.debrief.checklist:
            p = practices[item.id]
            where = f"checklist {item.id} ({item.status})"
            if p.elsewhere:
                if item.did or item.did_not or not item.status.startswith("practised in"):
                    self.bad(where, item.status, "a practice tested elsewhere is never judged")
                continue
            own = []
            for line in item.did:
                kind = self._did(p, line)
                if kind is None:
                    self.bad(where, line, "no evidence of it in the events")
                elif kind != "race harm" and not (
                        kind == "night harm" and p.judge in ("row-counts", "removal-limits")):
                    own.append(line)
            for note in re.findall(r"The race: (the race step \S+(?: \(.*?\))?: .*?)\.(?= The |$)",
                                   item.note):
                if self._did(p, note) == "guarded step":
                    own.append(note)  # the race told as the story beside a harm's verdict
            for line in item.did_not:
                if not self._did_not(p, line):
                    self.bad(where, line, "no evidence of it in the events")
            if item.status in ("done", "partly done") and not own and p.judge != "recovery":
                self.bad(where, "; ".join(item.did),
                         "credited with no act of this practice's own")
            if item.status in ("done", "partly done") and "was never put to the test" in item.note:
                self.bad(where, item.note, "done, and never put to the test")
            if item.status == "done" and p.judge == "guards" and self._refused_own(p):
                self.bad(where, item.status, "the team's edit of its own statement refused good "
                         f"writes of the normal night: {self._refused_own(p)}")
            if item.status == "done" and item.did_not or item.status == "not done" and item.did:
                self.bad(where, item.status, f"did {item.did}, did not {item.did_not}")

    def _refused_own(self, p: ev.PracticeInfo) -> list[str]:
        """The good writes the score found refused that are a statement of this practice's
        (named by it, or run by its race steps' tasks) which the team edited."""
        guards = self.score.guards
        tasks = {s.task for s in self.start.race_steps if s.id in p.steps}
        own = set(p.statements) | {e.statement for e in of_kind(self.events, ev.Statement)
                                   if e.automated and e.task in tasks and e.statement}
        edited = {e.statement for e in of_kind(self.events, ev.Edit)} & own
        return [f"{b.task} at {b.at}" for b in (guards.blocked_good_writes if guards else ())
                if edited & set(b.lost)]

    def _harm(self, title: str, points: int) -> list[tuple[str, str]]:
        """(harm id, practice night) of every verdict with this title and points."""
        guards = self.score.guards
        return [(h.id, h.practice) for h in (guards.harms if guards else ())
                if h.title == title and h.points == points]

    def _did(self, p: ev.PracticeInfo, line: str) -> str | None:
        """What kind of evidence a 'did' line is (None: not found in the events)."""
        m = re.fullmatch(r"your guards kept '(.+)' from the customers: .* \(guards \+(\d+)/\d+\)",
                         line)
        if m:
            found = self._harm(m.group(1), int(m.group(2)))
            if any(not night and harm in p.harms for harm, night in found):
                return "race harm"
            if any(night and night in p.nights for _, night in found):
                return "night harm"
            return None
        m = re.match(rf"edited the automation's statement (\S+) at ({TIME}); "
                     rf"(?:it ran after the edit \(({TIME})|the replay at ({TIME}) ran it)", line)
        if m:
            statement, face, ran, replayed = m.groups()
            edits = [e for e in self.at(ev.Edit, face)
                     if isinstance(e, ev.Edit) and e.statement == statement]
            if statement not in p.statements or not edits:
                return None
            if ran is not None:
                return "edit" if any(
                    isinstance(s, ev.Statement) and s.automated and s.statement == statement
                    and s.seq > edits[0].seq for s in self.at(ev.Statement, ran)) else None
            return "edit" if any(isinstance(e, ev.Replay) and e.available
                                 for e in self.at(ev.Replay, replayed)) else None
        m = re.match(r"the race step (\S+)(?: \(.*?\))?: (.*)", line)
        if m and m.group(1) in p.steps:
            return "guarded step" if self._guard_seen(m.group(1), m.group(2)) else None
        m = re.fullmatch(rf"(\S+)'s write at ({TIME}) changed 0 rows, and their next statement "
                         rf"\(({TIME})\) read again", line)
        if m:
            role, face, then = m.groups()
            zero = [e for e in self.at(ev.Statement, face) if isinstance(e, ev.Statement)
                    and e.role == role and not e.automated and e.ok and e.writes
                    and e.rowcount == 0]
            after = [e for e in self.at(ev.Statement, then) if isinstance(e, ev.Statement)
                     and e.role == role and not e.automated and e.rows is not None]
            return "count read" if p.judge == "row-counts" and zero and after else None
        m = re.match(rf"(\S+)'s (\S+) at ({TIME}): .*so the run stopped instead of carrying on "
                     r"\(the team's edit\)", line)
        if m:
            role, task, face = m.groups()
            stopped = [e for e in self.at(ev.Automation, face) if isinstance(e, ev.Automation)
                       and e.role == role and e.task == task and e.outcome == "zero_rows"]
            edited = stopped and any(e.statement in p.statements and e.minute <= stopped[0].minute
                                     for e in of_kind(self.events, ev.Edit))
            return "count read" if p.judge == "row-counts" and edited else None
        m = re.match(rf"the team's write at ({TIME}) restored the world", line)
        if m:
            wrote = [e for e in self.at(ev.Statement, m.group(1)) if isinstance(e, ev.Statement)
                     and not e.automated and e.ok and e.writes]
            return "recovery" if p.judge == "recovery" and wrote and any(
                True for _ in of_kind(self.events, ev.Restored)) else None
        m = re.match(r"the team's response .* \(recovery \+(\d+)/\d+\), and the recovery held",
                     line)
        if m:
            rec = self.score.recovery
            return "recovery" if p.judge == "recovery" and rec is not None and rec.restored \
                and not rec.relapses else None
        return None

    def _did_not(self, p: ev.PracticeInfo, line: str) -> bool:
        m = re.match(rf"the race step (\S+)(?: \(.*?\))? happened at ({TIME})", line)
        if m:
            return m.group(1) in self.happened and m.group(1) in p.steps
        m = re.fullmatch(r"the replay showed (\S+) still happens against the team's world", line)
        if m:
            v = self.verdicts.get(m.group(1))
            return v is not None and v.status == "happened"
        m = re.fullmatch(r"the replay showed '(.+)' still reaching the customers \(.*\)", line)
        if m:
            return any((harm in p.harms and not night) or (night and night in p.nights)
                       for harm, night in self._harm(m.group(1), 0))
        m = re.fullmatch(r"the team's edit of (\S+) also refused \d+ good writes? of the normal "
                         r"night \((.+)\)", line)
        if m:
            statement, refused = m.groups()
            guards = self.score.guards
            lost = {f"{b.task} at {b.at}" for b in (guards.blocked_good_writes if guards else ())
                    if statement in b.lost}
            return any(e.statement == statement for e in of_kind(self.events, ev.Edit)) \
                and set(refused.split(", ")) <= lost
        if p.judge == "recovery":
            rec = self.score.recovery
            restored = rec is not None and rec.restored
            if line.startswith("the world was not restored"):
                return not restored
            m = re.fullmatch(rf"the repair was undone at ({TIME}): the fault came back", line)
            if m:
                return any(isinstance(f, ev.Fault) and f.relapse
                           for f in self.at(ev.Fault, m.group(1)))
        return False

    # -- the after-action report ---------------------------------------------------------------

    def after_action(self) -> None:
        a = self.debrief.after_action
        strengths, areas = list(a.strengths), list(a.improvements)
        asked = {self.time(e) for e in of_kind(self.events, ev.Replay)
                 if not e.final and e.available and e.result is not None}
        stopped: set[str] = set()
        for s in strengths:
            m = re.match(r"Replayed the race against the team's schema at (.+)\.$", s)
            if m and not set(m.group(1).split(", ")) <= asked:
                self.bad("AAR strength", s, f"the team asked for replays at {sorted(asked)}")
            m = re.match(r"The team's guards were seen stopping the race steps? (.+)\.$", s)
            if m:
                stopped = set(m.group(1).split(", "))
                for step in stopped:
                    if step in self.happened:
                        self.bad("AAR strength", s, f"{step} happened")
                    v = self.verdicts.get(step)
                    if v is not None and v.status == "happened":
                        self.bad("AAR strength", s, f"the score says {step} happened")
            m = re.match(r"After (.+) happened tonight, the guards", s)
            if m:
                for step in m.group(1).split(", "):
                    if step not in self.happened:
                        self.bad("AAR strength", s, f"{step} did not happen")
        stopped_or_after = stopped | self._after(stopped)
        for x in areas:
            m = re.match(r"The race ran its course: (.+)\.$", x)
            if m:
                for part in m.group(1).split(", "):
                    step = part.split(" at ")[0]
                    if step not in self.happened:
                        self.bad("AAR area", x, f"{step} did not happen")
                    if step in stopped:
                        self.bad("AAR area", x, f"a strength says the guards stopped {step}")
            m = re.match(r"(\S+) did not happen, but no guard of the team's was seen", x)
            if m:
                step = m.group(1)
                if step in self.happened:
                    self.bad("AAR area", x, f"{step} happened")
                if step in stopped_or_after or self._race_stopped_by_guard_before(step):
                    self.bad("AAR area", x, f"the team's guards stopped the race before {step}")
        pairs = (
            (r"^Surfaced the fault", r"^(The fault was never surfaced|Surfacing the fault took)"),
            (r"^Stopped the automation \(", r"^(Repaired by hand \(|The automation was never "
                                            r"stopped)"),
            (r"^Restored the world .* and the repair held",
             r"^(The repair was undone|The world was not restored)"),
        )
        for good, poor in pairs:
            for s in strengths:
                for x in areas:
                    if re.search(good, s) and re.search(poor, x):
                        self.bad("AAR", f"{s} / {x}", "a strength and its contrary")
        right = {m.group(1) for s in strengths
                 if (m := re.match(rf"Declared a right finding at ({TIME}): ", s))}
        wrong = {m.group(1) for x in areas
                 if (m := re.match(rf"Declared a (?:wrong finding|finding) at ({TIME})", x))}
        for face in right & wrong:
            declared = [e for e in self.at(ev.Declaration, face)]
            if len(declared) == 1:
                self.bad("AAR", f"declared at {face}", "both right and wrong")

    def _after(self, steps: set[str]) -> set[str]:
        """The race steps that follow (directly or not) any of `steps`."""
        follows = {s.id: s.after for s in self.start.race_steps}
        out: set[str] = set()
        for step in follows:
            prev = follows[step]
            while prev is not None:
                if prev in steps:
                    out.add(step)
                    break
                prev = follows.get(prev)
        return out

    def _race_stopped_by_guard_before(self, step: str) -> bool:
        """The final replay, against the team's world, stopped the race at a step before
        this one, and a guard of the team's was seen stopping that step."""
        guarded = {s.id for s in self.debrief.guards.steps if s.guarded}
        return bool(guarded & self._before(step))

    def _before(self, step: str) -> set[str]:
        follows = {s.id: s.after for s in self.start.race_steps}
        out: set[str] = set()
        prev = follows.get(step)
        while prev is not None:
            out.add(prev)
            prev = follows.get(prev)
        return out

    # -- the good path; detection and recovery ---------------------------------------------

    def good_path(self) -> None:
        guards = self.score.guards
        if guards is None:
            return
        lines = self.debrief.guards.good_path_lines()
        areas = self.debrief.after_action.improvements
        if guards.collateral and all(line.endswith("still works") for line in lines):
            self.bad("the good path", "; ".join(lines),
                     f"the score took {guards.collateral} for refused good writes")
        if guards.blocked_good_writes:
            if not any("BLOCKED" in line for line in lines):
                self.bad("the good path", "; ".join(lines), "the score refused good writes")
            if not any("refused" in x and "good write" in x for x in areas):
                self.bad("AAR", "(no area for the refused good writes)",
                         "the score refused good writes")
        final = next((e for e in reversed(self.events) if isinstance(e, ev.Replay) and e.final),
                     None)
        harmed = final is not None and final.result is not None and any(
            h.minutes for h in final.result.normal_harms)
        if guards.collateral and harmed and not any(
                x.startswith("With no race to stop, the team's world harmed") for x in areas):
            self.bad("AAR", "(no area for the harm on the normal night)",
                     f"the score took {guards.collateral}, the normal night harmed")
        for path in guards.good_path:
            if not path.ok and not any(x.startswith("A guard also blocks the good path: "
                                                    f"{path.title}") for x in areas):
                self.bad("AAR", f"(no area for {path.title})", "the good path is blocked")
        for path, said in zip(guards.good_path, self.debrief.guards.good_path, strict=True):
            if path.ok != said.ok:
                self.bad("the good path", said.title, f"the score says ok={path.ok}")

    def detection_and_recovery(self) -> None:
        outcome = self.debrief.summary.outcome
        faults = list(of_kind(self.events, ev.Fault))
        if faults and "No fault" in outcome:
            self.bad("summary", outcome, "a fault occurred")
        if not faults and outcome.startswith("The fault ("):
            self.bad("summary", outcome, "no fault occurred")
        if self.score.fault.occurred != bool(faults):
            self.bad("score", str(self.score.fault), f"{len(faults)} fault events")
        d = self.score.detection
        if d is not None and faults:
            surfaced = d.latency_minutes is not None
            if surfaced and "never surfaced" in outcome:
                self.bad("summary", outcome, f"the score surfaced it after {d.latency_minutes}")
            if not surfaced and "The team surfaced it" in outcome:
                self.bad("summary", outcome, "the score never surfaced it")
            for s in self.debrief.after_action.strengths:
                if s.startswith("Surfaced the fault") and not surfaced:
                    self.bad("AAR strength", s, "the score never surfaced it")
        rec = self.score.recovery
        if rec is not None and faults:
            healthy = "At the end the world was healthy." in outcome
            if healthy and not rec.restored:
                self.bad("summary", outcome, "the score: not restored at the end")
            for s in self.debrief.after_action.strengths:
                if "and the repair held" in s and (not rec.restored or rec.relapses):
                    self.bad("AAR strength", s, f"the score: restored={rec.restored}, "
                             f"relapses {rec.relapses}")


def check_play(exercise: str, play: Play) -> None:
    with tempfile.TemporaryDirectory() as folder:
        events = play_events(LOADED[exercise], play, Path(folder) / "t")
    account = Account(events)
    problems = account.check()
    steps = "\n".join(f"  {where} (at minute {minute}): {step.action}"
                      for minute, where, step in play)
    assert not problems, "\n".join(problems) + f"\nthe play:\n{steps}"


SMALL = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SMALL
@given(play=plays("lost-update-basics"))
def test_lost_update_basics_debrief_is_one_account(play: Play) -> None:
    check_play("lost-update-basics", play)


@SMALL
@given(play=plays("isolation-lab"))
def test_isolation_lab_debrief_is_one_account(play: Play) -> None:
    check_play("isolation-lab", play)


@settings(SMALL, max_examples=8)
@given(play=plays("dynamodb-dns-race"))
def test_flagship_debrief_is_one_account(play: Play) -> None:
    check_play("dynamodb-dns-race", play)


def test_every_exercise_has_scripts_to_draw_from() -> None:
    assert all(len(SOURCES[name]) >= 3 for name in EXERCISES), {
        name: len(s) for name, s in SOURCES.items()}
