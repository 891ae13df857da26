"""The second exercise, recovery-under-load, played end to end by its reference scripts.

Each script is played headless once for the whole run (`reference_play`, shared with the
golden debriefs and transcripts: a play of the whole phase takes about half a minute), and
what a facilitator would look at is asserted: the figures the fleet wrote each minute
(minute_stats in the session's world.db), the score's sections, the race steps the replay saw
prevented and the checklist the debrief prints.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from reference_plays import Played, ReferencePlays

from raceday.engine.actions import EditStatement
from raceday.engine.headless import open_session, run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.errors import ExerciseError
from raceday.exercise.model import Exercise
from raceday.exercise.times import parse_time
from raceday.transcript import events as ev
from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.log import of_kind, read_events

EXERCISE = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load"
SCRIPTS = EXERCISE / "scripts"
SOURCES = {"aws-summary", "health-dashboard", "secondary", "exercise-assumption"}
DEFAULT_SIZE = "SELECT 20000 AS size"


class Play:
    """One reference play: its JSON result, its events and the fleet's minute figures."""

    def __init__(self, exercise: Exercise, played: Played) -> None:
        self.result = played.result
        folder = played.folder
        self.events = read_events(folder).events
        self.exercise = exercise
        with sqlite3.connect(folder / "world.db") as db:
            db.row_factory = sqlite3.Row
            self.stats = [dict(r) for r in db.execute("SELECT * FROM minute_stats ORDER BY minute")]
            self.floor = int(db.execute("SELECT nlb_floor FROM fleet").fetchone()[0])
            self.nodes = [dict(r) for r in db.execute("SELECT * FROM nlb_node ORDER BY id")]

    def minute(self, face: str) -> int:
        return parse_time(face, self.exercise.clock.start)

    def milestone(self, ident: str) -> int | None:
        return next((e.minute for e in of_kind(self.events, ev.Milestone) if e.id == ident), None)

    def checklist(self) -> dict[str, str]:
        return {i.id: i.status for i in build_debrief(self.events).checklist}

    @property
    def total(self) -> int:
        return int(self.result["total"])

    def section(self, name: str) -> dict[str, Any]:
        return dict(self.result[name])


def play_now(exercise: Exercise, script: Path, transcripts: Path) -> Play:
    """A play of this test's own (a smaller world, a script of its own)."""
    _session, result = run_script(exercise, load_script(script, exercise), transcripts)
    return Play(exercise, Played(Path(result["session"]), result))


def sized(size: int) -> Exercise:
    exercise = load_exercise(EXERCISE)
    assert DEFAULT_SIZE in exercise.world_sql
    return dataclasses.replace(
        exercise, world_sql=exercise.world_sql.replace(DEFAULT_SIZE, f"SELECT {size} AS size"))


@pytest.fixture(scope="module")
def plays(reference_play: ReferencePlays) -> dict[str, Play]:
    exercise = load_exercise(EXERCISE)
    names = ["nothing", "restart-without-throttle", "as-it-happened", "throttle-by-queue",
             "velocity-limit"]
    played = reference_play.many(EXERCISE.name, [SCRIPTS / f"{n}.yaml" for n in names])
    return {n: Play(exercise, p) for n, p in zip(names, played, strict=True)}


def test_the_exercise_loads_and_every_inject_has_a_source() -> None:
    exercise = load_exercise(EXERCISE)
    assert exercise.clock.length_minutes == parse_time("14:20", exercise.clock.start)
    assert {i.source for i in exercise.injects} <= SOURCES
    assert {s.id for s in exercise.scoring.guards.steps} == {  # type: ignore[union-attr]
        "congestive-collapse", "network-backlog", "capacity-removed"}


def test_every_hint_has_a_topic_of_its_own() -> None:
    """The hint list (F9) names each hint by its task's title: one per part of the morning,
    no two alike, in the order the morning meets them."""
    exercise = load_exercise(EXERCISE)
    titles = {t.id: t.title for t in exercise.tasks}
    topics = [titles[h.task] for h in exercise.hints if h.task is not None]
    assert len(topics) == len(exercise.hints) == len(set(topics))
    assert [h.task for h in exercise.hints][:1] == ["dwfm-work"]
    assert {"netmgr-launches", "nlb-failover", "nlb-check", "api-admit"} <= {
        h.task for h in exercise.hints}


def test_left_alone_the_fleet_collapses_and_never_recovers(plays: dict[str, Play]) -> None:
    play = plays["nothing"]
    assert play.total == 0
    # the first ten minutes' lease attempts are reached in time, then nothing is
    early = [s for s in play.stats if s["minute"] < 10]
    late = [s for s in play.stats if s["minute"] >= 20]
    assert all(s["goodput"] > 0 for s in early)
    assert all(s["goodput"] == 0 and s["wasted"] > 0 for s in late)
    assert play.stats[-1]["leased"] == 0
    assert play.stats[-1]["queue"] > play.stats[20]["queue"]  # the queue only grows
    assert play.milestone("leases-restored") is None
    assert "congestive-collapse" in play.section("guards")["happened"]


def test_the_alarms_follow_the_faults_of_each_night(plays: dict[str, Play]) -> None:
    """Leases are lost at 02:25 in every night, so its alarms keep their times; the NLB and
    Network Manager alarms come when a night loses its network or NLB capacity, if ever."""
    for name, play in plays.items():
        heard = {e.id: e.sim_time for e in of_kind(play.events, ev.Inject)}
        began: dict[str, str] = {}
        for fault in of_kind(play.events, ev.Fault):
            began.setdefault(fault.invariant, fault.sim_time)
        assert (heard["launch-errors"], heard["dwfm-queues"]) == ("02:35", "02:50"), name
        assert heard.get("netmgr-latency") == began.get("no-network"), name
        assert heard.get("nlb-errors") == began.get("capacity-below-floor"), name
        assert heard["dashboard-nlb"] == "08:43", name  # history: told whatever happens
    assert "nlb-errors" not in {e.id for e in of_kind(plays["nothing"].events, ev.Inject)}


def test_restarting_without_a_throttle_relapses_into_collapse(plays: dict[str, Play]) -> None:
    play = plays["restart-without-throttle"]
    restart = play.minute("04:14")
    after = [s for s in play.stats if s["minute"] > restart]
    # the restart clears the queues and leases come back for a while ...
    assert max(s["goodput"] for s in after[:10]) > 0
    assert max(s["leased"] for s in after) > 0
    # ... then the sweep fills them again and every lease is lost
    assert all(s["goodput"] == 0 for s in after[30:])
    assert after[-1]["leased"] == 0
    assert play.milestone("hosts-restarted") is not None
    assert play.milestone("leases-restored") is None
    assert play.section("recovery")["points"] == 0


def test_as_it_happened_has_that_nights_shape(plays: dict[str, Play]) -> None:
    play = plays["as-it-happened"]
    restart = play.minute("04:14")
    leased = play.milestone("leases-restored")
    assert leased is not None and restart < leased < play.minute("06:00")  # that night 05:28
    # NLB: after the leases come back, failover takes healthy capacity below the floor, until
    # failover is turned off at 09:36 ...
    low = [s["minute"] for s in play.stats if s["nlb_in_dns"] < play.floor]
    assert low and min(low) > restart and max(low) == play.minute("09:36")
    # ... but only some load balancers lose capacity (the record: "in some cases"): those
    # that take new instances, half of them; the others' nodes never leave DNS
    assert min(s["nlb_in_dns"] for s in play.stats) == len(play.nodes) // 2
    assert all(n["flips"] == 0 and n["in_dns"] == 1 for n in play.nodes if not n["new_targets"])
    assert all(n["flips"] > 0 for n in play.nodes if n["new_targets"])
    # ... and by the end everything is healthy again, with no guard of the team's
    assert play.section("recovery")["restored"]
    assert play.section("guards")["points"] == 0
    assert play.section("guards")["prevented"] == []


def test_throttling_by_queue_size_recovers_sooner(plays: dict[str, Play]) -> None:
    queue, night = plays["throttle-by-queue"], plays["as-it-happened"]
    leased = queue.milestone("leases-restored")
    assert leased is not None
    assert leased < (night.milestone("leases-restored") or 10**6)
    assert all(s["wasted"] == 0 for s in queue.stats if s["minute"] > leased)
    assert "congestive-collapse" in queue.section("guards")["prevented"]
    assert queue.section("guards")["points"] > night.section("guards")["points"]
    # ... but it never touches NLB failover, so the flapping that loads Network Manager goes
    # on to the end of the morning: the leases alone are not a recovery
    assert not queue.section("recovery")["restored"]
    assert night.section("recovery")["restored"]
    assert queue.total > plays["restart-without-throttle"].total


def test_a_velocity_limit_holds_capacity(plays: dict[str, Play]) -> None:
    play = plays["velocity-limit"]
    # the fleet is re-leased by 03:15 and the outage's network backlog makes new instances
    # wait, so every node of the load balancers that take new instances (30 of 60) fails its
    # check at some minute; the limit keeps 54 of 60 in DNS
    assert max(s["nlb_failing"] for s in play.stats) == 30
    assert min(s["nlb_in_dns"] for s in play.stats) == 54
    guards = play.section("guards")
    assert set(guards["prevented"]) == {"congestive-collapse", "network-backlog",
                                        "capacity-removed"}
    assert all(p["ok"] for p in guards["good_path"])
    assert play.section("recovery")["restored"]  # the 14:12 node is still taken out
    assert play.total > plays["throttle-by-queue"].total


@pytest.fixture(scope="module")
def small_velocity(reference_play: ReferencePlays) -> Play:
    """velocity-limit at 4,000 droplets, played once for the whole run (the tests below may
    run on different workers)."""
    return Play(sized(4000), reference_play.sized(EXERCISE.name, SCRIPTS / "velocity-limit.yaml",
                                                  4000))


def test_without_its_velocity_limit_the_same_play_loses_the_nlb(
        small_velocity: Play, tmp_path: Path) -> None:
    """The limit is what stops the harm: the same play without its failover trigger lets
    failover take out every node of the load balancers that take new instances, every flip
    loads Network Manager (the exercise's assumption), and the flapping holds to the end of
    the morning."""
    text = (SCRIPTS / "velocity-limit.yaml").read_text(encoding="utf-8")
    start = text.index("      CREATE TRIGGER failover_velocity")
    end = text.index("      UPDATE knob SET value = 1 WHERE name = 'retry-jitter';")
    unlimited = tmp_path / "no-limit.yaml"
    unlimited.write_text(text[:start] + text[end:], encoding="utf-8")
    bare = play_now(sized(4000), unlimited, tmp_path / "t")

    def below_floor(play: Play) -> list[str]:
        return [f.sim_time for f in of_kind(play.events, ev.Fault)
                if f.invariant == "capacity-below-floor"]

    assert below_floor(small_velocity) == []
    # 12 nodes: the limit refuses a removal that would leave more than a tenth (one) out
    assert min(s["nlb_in_dns"] for s in small_velocity.stats) == 11
    # without it the six nodes of the two load balancers that take new instances leave
    assert below_floor(bare) and min(s["nlb_in_dns"] for s in bare.stats) == 6 < bare.floor
    assert bare.stats[-1]["nlb_failing"] > 0  # still flapping at 14:20
    assert small_velocity.section("recovery")["restored"]
    assert not bare.section("recovery")["restored"]
    assert bare.total < small_velocity.total - 30


def test_the_debrief_says_a_practice_was_done_only_when_it_was(plays: dict[str, Play]) -> None:
    guarded = plays["velocity-limit"].checklist()
    assert guarded["removal-limits"] == "done"
    assert guarded["recovery-under-load"] in ("done", "partly done")
    for name in ("nothing", "restart-without-throttle"):
        status = plays[name].checklist()
        assert status["recovery-under-load"] == "not done", name
        assert status["removal-limits"] != "done", name
    assert plays["as-it-happened"].checklist()["removal-limits"] != "done"


def test_aws_response_rehearses_recovery_under_load(plays: dict[str, Play]) -> None:
    """AWS's throttle and restarts at 04:14 let DWFM, still under load, re-lease the fleet at
    05:28: the practice reads as done by that response, from the milestone the score's
    recovery credited, while the replay still says nothing automatic kept the collapse away."""
    def item(name: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        found = next(i for i in build_debrief(plays[name].events).checklist
                     if i.id == "recovery-under-load")
        return found.status, found.did, found.did_not

    status, did, did_not = item("as-it-happened")
    assert status == "partly done"
    assert any("the team's response" in line and "knob" in line and "dwfm_host" in line
               and "'DWFM re-leased the whole fleet' at 05:28 (recovery +10/10)" in line
               for line in did), did
    assert any("still reaching the customers" in line for line in did_not)
    credited = {c["id"]: c for c in plays["as-it-happened"].section("recovery")["items"]}
    assert credited["leases"]["points"] == 10 and credited["leases"]["at"] == "05:28"
    for lazy in ("nothing", "restart-without-throttle"):
        assert not any("the team's response" in line for line in item(lazy)[1]), lazy


LAZY = {
    # admit nothing at all: no collapse in the replay, but no lease and no launch either
    "admit-nothing": """
  - at: "02:30"
    as: responder
    sql: |
      CREATE TRIGGER admit_nothing BEFORE INSERT ON dwfm_work
      BEGIN SELECT RAISE(IGNORE); END;
      UPDATE dwfm_host SET restart = 1;
""",
    # remove nothing, ever: failover off and a trigger refusing every removal
    "remove-nothing": """
  - at: "02:30"
    as: responder
    sql: |
      CREATE TRIGGER remove_nothing BEFORE UPDATE OF in_dns ON nlb_node
      WHEN NEW.in_dns = 0 BEGIN SELECT RAISE(IGNORE); END;
      UPDATE knob SET value = 0 WHERE name = 'nlb-auto-failover';
""",
    # undo the night: edit the outage's aftermath into nothing (leases kept, no backlog)
    "undo-the-aftermath": """
  - as: responder
    edit: {statement: leases-timed-out, sql: "UPDATE droplet SET lease_until = lease_until"}
  - as: responder
    edit: {statement: network-backlog, sql: "SELECT 1"}
""",
    # drop what the checks rest on
    "drop-tables": """
  - at: "02:30"
    as: responder
    sql: DROP TABLE dwfm_work
""",
}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_and_destructive_plays_earn_no_guard_points(name: str, tmp_path: Path) -> None:
    exercise = sized(4000)
    script = tmp_path / f"{name}.yaml"
    script.write_text(f"exercise: recovery-under-load\nroles: [responder]\nsteps:{LAZY[name]}"
                      '  - wait: "14:20"\n', encoding="utf-8")
    play = play_now(exercise, script, tmp_path / "t")
    assert play.section("guards")["points"] == 0
    assert play.section("recovery")["points"] < 20
    assert play.total < 30


def test_an_intake_below_the_renewals_says_why_the_leases_never_return(tmp_path: Path) -> None:
    """AWS's response with an intake of 8 a host instead of 10: 500 droplets on 60-minute
    leases need more than 8 renewals a minute a host, so the fleet is never all leased again.
    The world says so in its own terms (a harm naming both rates, and an alarm), not only
    the debrief's "'leases-restored' never happened"."""
    text = (SCRIPTS / "as-it-happened.yaml").read_text(encoding="utf-8")
    ten = "UPDATE knob SET value = 10 WHERE name = 'dwfm-intake-per-host';"
    assert ten in text
    script = tmp_path / "intake-8.yaml"
    script.write_text(text.replace(ten, ten.replace("10", "8")), encoding="utf-8")
    play = play_now(sized(4000), script, tmp_path / "t")
    assert play.milestone("leases-restored") is None
    starved = [f for f in of_kind(play.events, ev.Fault) if f.invariant == "renewals-starved"]
    assert [f.sim_time for f in starved] == ["04:14"]
    # 8 hosts at 4,000 droplets: 64 attempts a minute against 4000 / 60 = 66 expiries
    assert starved[0].rows == (("DWFM admits 64 lease attempts a minute; "
                                "66 leases run out a minute",),)
    heard = {e.id: e.sim_time for e in of_kind(play.events, ev.Inject)}
    assert heard["renewals-behind"] == "04:19"
    assert play.stats[-1]["leased"] < 4000


def test_a_play_gives_the_same_world_twice(small_velocity: Play, tmp_path: Path) -> None:
    first = small_velocity
    second = play_now(sized(4000), SCRIPTS / "velocity-limit.yaml", tmp_path / "b")
    assert first.stats == second.stats
    assert first.result["reasons"] == second.result["reasons"]


def test_the_flagship_offers_this_exercise_as_its_next_act() -> None:
    from raceday.engine.load import find_exercises
    from raceday.exercise.acts import next_act, previous_act

    found = {e.id: e.exercise for e in find_exercises() if e.exercise is not None}
    others = list(found.values())
    act = next_act(found["dynamodb-dns-race"], others)
    assert act is not None and act.id == "recovery-under-load"
    before = previous_act(found["recovery-under-load"], others)
    assert before is not None and before.id == "dynamodb-dns-race"
    assert next_act(found["lost-update-basics"], others) is None


def test_the_debrief_draws_the_nights_charts(plays: dict[str, Play]) -> None:
    from raceday.transcript.debrief.html import render_html
    from raceday.transcript.debrief.markdown import render_markdown

    debrief = build_debrief(plays["as-it-happened"].events)
    assert [c.label for c in debrief.charts] == ["The fleet, minute by minute"]
    text = render_markdown(debrief)
    assert "04:14 incoming work throttled" in text  # that night's moments, marked
    leased = next(line for line in text.splitlines() if line.startswith("leased"))
    assert "peak 20,000" in leased
    html = render_html(debrief)
    assert 'aria-label="The fleet, minute by minute"' in html and "<polyline" in html


def test_aws_response_and_a_faster_guarded_one_score_what_they_achieve(
        plays: dict[str, Play]) -> None:
    """AWS's documented response (throttle and selective restarts at 04:14, failover off at
    09:36, relax from 11:23, failover on at 14:09) recovers by the end with no relapse; a
    response that guards the queues and limits failover's removals at 02:45 recovers hours
    sooner. The live morning's harm minutes carry most of the score."""
    aws, faster = plays["as-it-happened"], plays["velocity-limit"]
    assert aws.total >= 45
    assert faster.total >= 85
    assert faster.section("recovery")["outage_minutes"] < aws.section("recovery")["outage_minutes"]


def test_the_outages_aftermath_is_history_no_edit_undoes(tmp_path: Path) -> None:
    """The leases that timed out and the waiting network changes are what the DynamoDB outage
    left behind: an edit of them is refused with its reason, and the harden screen does not
    offer them (its list is the automation's). Asked of an open session (the edits are
    refused at once: the morning after them is the lazy play's, played above)."""
    exercise = sized(4000)
    assert {s.id for s in exercise.statements if s.history} == {"leases-timed-out",
                                                                "network-backlog"}
    session = open_session(exercise, ("responder",), tmp_path / "t")
    try:
        answers = [session.perform(EditStatement(role="responder", statement=ident, sql=sql))
                   for ident, sql in (("leases-timed-out",
                                       "UPDATE droplet SET lease_until = lease_until"),
                                      ("network-backlog", "SELECT 1"))]
        events = list(session.events)
    finally:
        session.close()
    assert all(isinstance(a, ev.Refused) for a in answers)
    refused = [e for e in of_kind(events, ev.Refused) if e.action == "edit"]
    assert [e.statement for e in refused] == ["leases-timed-out", "network-backlog"]
    assert all("what the night left behind, not automation" in (e.error or "")
               for e in refused)
    assert not list(of_kind(events, ev.Edit))


def test_a_fleet_too_small_for_the_story_is_refused_saying_why_and_where(
        tmp_path: Path) -> None:
    """world.sql invites a facilitator to change the fleet's size; under 2,000 droplets the
    customers terminate no instance a minute (size / 2000) and the world failed to build on a
    NOT NULL deep in the script (SQLite, no line) or a division by zero (PostgreSQL). Now its
    own constraint says so, with the line of the statement that sized it."""
    with pytest.raises(ExerciseError) as info:
        open_session(sized(1999), ("responder",), tmp_path / "small")
    problem, = info.value.problems
    assert "a_fleet_of_at_least_2000_droplets" in problem
    line = (EXERCISE / "world.sql").read_text().splitlines().index("INSERT INTO fleet") + 1
    assert problem.startswith(f"world SQL failed: line {line}: ")
    open_session(sized(2000), ("responder",), tmp_path / "smallest").close()
