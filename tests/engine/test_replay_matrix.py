"""The replay matrix: each guard of issue 5, alone and combined, judged by its effect.

Every case opens the flagship as the responder, installs its guards before the race (through
the Session API: `execute` for schema, `edit_statement` for the automation's statements),
replays the race to the exercise's `replay.until` (01:00, past Enactor A's retries at 00:12
and 00:42) and scores. The expectations were found by running the replay, not by reading
the SQL; each case says in a comment why the result is what it is.

The night, as the automation plays it without guards: B applies plan 148 at 23:48, A then
applies its stale plan 140 (checked at 23:31) over it, B's clean-up deletes plans older than
141, plan 140 among them: the regional endpoint's answer is empty. From 23:50 every apply
moves the deleted plan into rollback_plan_id, which must reference a plan, and fails.
Enactor A retries its write of plan 140 at 00:12 and 00:42.

Then the same for lost-update-basics: its six guards each stop their own replayed mistake.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from raceday.engine.headless import open_session, run_script
from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.engine.session import Session
from raceday.exercise.model import Exercise
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

# The module plays its replays once (a module fixture): its tests run on one xdist worker.
pytestmark = pytest.mark.xdist_group("test_replay_matrix")

ROOT = Path(__file__).resolve().parents[2]
FLAGSHIP = ROOT / "exercises" / "dynamodb-dns-race"
LOST_UPDATE = ROOT / "exercises" / "lost-update-basics"
STEPS = ["stale-apply", "active-plan-delete", "empty-answer", "wedged-automation"]
REGIONAL = "dynamodb.us-east-1.amazonaws.com"

# An action is ("sql", text) run as the responder, or ("edit", statement id, new text).
Action = tuple[str, ...]


def _apply(who: str, where: str) -> str:
    return (f"UPDATE endpoint SET rollback_plan_id = active_plan_id, active_plan_id = :plan, "
            f"updated_by = '{who}', updated_at = :now_hhmm WHERE {where}")


def _take_lease(who: str) -> str:
    """Take the endpoints' lease: the token goes up, and the holder keeps the one it got."""
    return (f"UPDATE dns_lease SET holder = '{who}', token = token + 1 WHERE name = 'endpoints';"
            f" INSERT OR REPLACE INTO dns_lease_grant (holder, token)"
            f" SELECT '{who}', token FROM dns_lease WHERE name = 'endpoints';")


def _fenced(who: str) -> str:
    """The write goes through only while the token its Enactor holds is still the newest."""
    return (f"(SELECT token FROM dns_lease_grant WHERE holder = '{who}')"
            f" = (SELECT token FROM dns_lease WHERE name = 'endpoints')")


DNS_ANSWER = """CREATE VIEW dns_answer (endpoint, address, weight) AS
    SELECT e.name, r.address, r.weight FROM endpoint AS e
    JOIN plan_record AS r ON r.plan_id = e.active_plan_id AND r.endpoint = e.name"""
ENDPOINT_WITH_FK = """
    CREATE TABLE endpoint_new (
        name             TEXT PRIMARY KEY,
        active_plan_id   INTEGER REFERENCES plan (id) ON DELETE RESTRICT,
        rollback_plan_id INTEGER REFERENCES plan (id),
        updated_by       TEXT,
        updated_at       TEXT);
    INSERT INTO endpoint_new SELECT name, active_plan_id, rollback_plan_id, updated_by, updated_at
        FROM endpoint;
    DROP TABLE endpoint;
    ALTER TABLE endpoint_new RENAME TO endpoint"""

GUARDS: dict[str, list[Action]] = {
    "none": [],
    # A conditional update on a version: Enactor A's write carries its own check.
    "conditional-a": [
        ("edit", "enactor-a-apply", _apply("enactor-a", f"name = '{REGIONAL}' "
                                                        "AND active_plan_id < :plan")),
    ],
    # The same condition spelt out in every Enactor's apply (B's and C's already have it).
    "conditional-all": [
        ("edit", "enactor-a-apply", _apply("enactor-a", f"name = '{REGIONAL}' "
                                                        "AND active_plan_id < :plan")),
        ("edit", "enactor-b-apply", _apply("enactor-b", "active_plan_id < :plan")),
        ("edit", "enactor-c-apply", _apply("enactor-c", "active_plan_id < :plan")),
    ],
    "forward-only": [("sql", """
        CREATE TRIGGER endpoint_forward_only BEFORE UPDATE OF active_plan_id ON endpoint
        WHEN NEW.active_plan_id < OLD.active_plan_id
        BEGIN SELECT RAISE(ABORT, 'refused: older than the plan in service'); END""")],
    # Forward only, except the one flip back to the rollback plan (a planned rollback).
    "forward-but-rollback": [("sql", """
        CREATE TRIGGER endpoint_forward_only BEFORE UPDATE OF active_plan_id ON endpoint
        WHEN NEW.active_plan_id < OLD.active_plan_id
         AND NEW.active_plan_id IS NOT OLD.rollback_plan_id
        BEGIN SELECT RAISE(ABORT, 'refused: older than the plan in service'); END""")],
    # A lease with a fencing token, in two new tables the responder seeds: each Enactor takes
    # the lease when it picks a plan (the token goes up) and writes only while its token is
    # the newest. `remember` keeps only :plan, so the token an Enactor holds is kept in a row.
    "fence": [
        ("sql", """
            CREATE TABLE dns_lease (name TEXT PRIMARY KEY, holder TEXT, token INTEGER NOT NULL);
            CREATE TABLE dns_lease_grant (holder TEXT PRIMARY KEY, token INTEGER NOT NULL);
            INSERT INTO dns_lease (name, holder, token) VALUES ('endpoints', NULL, 0)"""),
        ("edit", "enactor-b-pick", _take_lease("enactor-b") + " SELECT max(id) AS plan FROM plan"),
        ("edit", "enactor-c-pick", _take_lease("enactor-c") + " SELECT max(id) AS plan FROM plan"),
        ("edit", "enactor-a-check", _take_lease("enactor-a") + f"""
            SELECT id AS plan FROM plan
            WHERE id > (SELECT active_plan_id FROM endpoint WHERE name = '{REGIONAL}')
            ORDER BY id DESC LIMIT 1"""),
        ("edit", "enactor-a-apply",
         _apply("enactor-a", f"name = '{REGIONAL}' AND {_fenced('enactor-a')}")),
        ("edit", "enactor-b-apply",
         _apply("enactor-b", f"active_plan_id < :plan AND {_fenced('enactor-b')}")),
        ("edit", "enactor-c-apply",
         _apply("enactor-c", f"active_plan_id < :plan AND {_fenced('enactor-c')}")),
    ],
    # A foreign key with ON DELETE RESTRICT, by rebuilding endpoint. The view dns_answer is
    # dropped first and made again: with it in place SQLite refuses the rename (below).
    "fk-restrict": [("sql", "DROP VIEW dns_answer;" + ENDPOINT_WITH_FK + ";" + DNS_ANSWER)],
    "plan-in-use": [("sql", """
        CREATE TRIGGER plan_in_use BEFORE DELETE ON plan
        WHEN EXISTS (SELECT 1 FROM endpoint WHERE active_plan_id = OLD.id)
        BEGIN SELECT RAISE(ABORT, 'refused: an endpoint serves this plan'); END""")],
    # A soft delete with a delayed purge: the clean-up only marks plans; marking a plan
    # purges those marked 30 minutes or more before (a trigger, so the clean-up stays one
    # write; see test_a_purge_with_nothing_to_purge_is_not_a_blocked_write for why).
    "soft-delete": [
        ("sql", """
            ALTER TABLE plan ADD COLUMN deleted_at INTEGER;
            CREATE TRIGGER plan_purge AFTER UPDATE OF deleted_at ON plan
            BEGIN DELETE FROM plan WHERE deleted_at <= NEW.deleted_at - 30; END"""),
        ("edit", "enactor-b-cleanup",
         "UPDATE plan SET deleted_at = :now WHERE id < :plan - 7 AND deleted_at IS NULL"),
        ("edit", "enactor-c-cleanup",
         "UPDATE plan SET deleted_at = :now WHERE id < :plan - 7 AND deleted_at IS NULL"),
    ],
    # Refusing an empty answer where the pointer moves: no plan without records for it.
    "no-empty-answer": [("sql", """
        CREATE TRIGGER endpoint_answers BEFORE UPDATE OF active_plan_id ON endpoint
        WHEN NOT EXISTS (SELECT 1 FROM plan_record
                         WHERE plan_id = NEW.active_plan_id AND endpoint = NEW.name)
        BEGIN SELECT RAISE(ABORT, 'refused: that plan has no records for this endpoint'); END""")],
    # Refusing an empty answer where the records go: not the records of a served plan.
    "records-in-use": [("sql", """
        CREATE TRIGGER records_in_use BEFORE DELETE ON plan_record
        WHEN EXISTS (SELECT 1 FROM endpoint
                     WHERE active_plan_id = OLD.plan_id AND name = OLD.endpoint)
        BEGIN SELECT RAISE(ABORT, 'refused: those records are an endpoint''s answer'); END""")],
    # A guard on the rollback pointer: it must be older than the active plan.
    "rollback-older": [("sql", """
        CREATE TRIGGER rollback_older BEFORE UPDATE ON endpoint
        WHEN NEW.rollback_plan_id >= NEW.active_plan_id
        BEGIN SELECT RAISE(ABORT, 'refused: the rollback must be older than the plan'); END""")],
    # The other way to guard the rollback pointer: the applies keep it only if the plan it
    # would point at still exists, so a deleted active plan cannot wedge them.
    "rollback-tolerant": [
        ("edit", f"enactor-{x}-apply", f"""
            UPDATE endpoint
            SET rollback_plan_id = (SELECT id FROM plan WHERE id = endpoint.active_plan_id),
                active_plan_id = :plan, updated_by = 'enactor-{x}', updated_at = :now_hhmm
            WHERE active_plan_id < :plan""") for x in "bc"
    ],
    # Guards that also stop the good path.
    "freeze-endpoint": [("sql", """
        CREATE TRIGGER endpoint_frozen BEFORE UPDATE ON endpoint
        BEGIN SELECT RAISE(ABORT, 'refused: endpoint is frozen'); END""")],
    "keep-every-plan": [("sql", """
        CREATE TRIGGER plan_kept BEFORE DELETE ON plan
        BEGIN SELECT RAISE(ABORT, 'refused: plans are never deleted'); END""")],
    # The foreign key rebuild done naively, leaving dns_answer in place: SQLite drops
    # endpoint, then refuses the rename ("error in view dns_answer"). No endpoint table.
    "fk-view-left": [("sql", ENDPOINT_WITH_FK)],
}


@dataclass(frozen=True)
class Expect:
    """What one replay must report: the steps that happened (and when), the fault, the
    good writes of the normal night it blocked (first one), the failing good paths and the
    guards' points in the score. Every step not listed under `happened` was prevented."""

    happened: dict[str, str]
    fault_at: str | None
    points: int
    blocked: tuple[str, str] | None = None
    good_path_failing: tuple[str, ...] = ()


AS_THAT_NIGHT = {"stale-apply": "23:48", "active-plan-delete": "23:48", "empty-answer": "23:48",
                 "wedged-automation": "23:50"}
ONLY_STALE = {"stale-apply": "23:48"}

# Guard points: the empty answer on tonight's race and the variant (20, by minutes), the stale
# plan (5, never once), and the empty answer on each practice night (5 + 5 + 5): an apply of a
# plan the Planner has not written yet (a foreign key on active_plan_id or a never-empty
# trigger keeps it away), a plan with no records (only a never-empty trigger does), and an
# Enactor that carries on to the next endpoint after a write that lost (a guard on what the
# clean-up deletes keeps it away; a conditional write alone does not: it carries on).
MATRIX: dict[str, Expect] = {
    # No guard: the night as it happened, to the minute.
    "none": Expect(AS_THAT_NIGHT, "23:48", 0),
    # A's write carries the check: at 23:48 the endpoint serves 148, so 140 < 148 is false and
    # the write changes 0 rows (on_zero_rows: ignore); plan 140 is never served, the clean-up
    # deletes only what nobody serves, and the retries change 0 rows too.
    "conditional-a": Expect({}, None, 25),
    "conditional-all": Expect({}, None, 25),
    # The trigger refuses 140 over 148 at 23:48 and at every retry: nothing downstream. But
    # it refuses the normal night's planned rollback too (23:20): no guard points.
    "forward-only": Expect({}, None, 20, ("planned-rollback-fips", "23:20")),
    # The same with the one-flip rollback allowed: everything stopped, nothing good refused.
    "forward-but-rollback": Expect({}, None, 30),
    # A took its token at 23:31; B and C took newer ones at every pick since, so A's write at
    # 23:48 (and its retries) changes 0 rows. B's and C's own writes carry a fresh token.
    "fence": Expect({}, None, 25),
    # The stale write itself is allowed (140 exists at 23:48), but the clean-up may not delete
    # the plan in service: the whole DELETE is refused. C moves the endpoint on at 23:50; 140
    # is deleted later, once nothing points at it, and A's retries are then refused by the
    # same foreign key (140 no longer exists). No empty answer, nothing wedged.
    "fk-restrict": Expect(ONLY_STALE, None, 30),
    # It refuses the 23:48 clean-up, but once C and B have moved the endpoint on, plan 140 is
    # deleted (23:52) and nothing stops A's retry at 00:12 pointing the endpoint at it: the
    # outage comes 24 minutes late. Only a replay that runs past the retry shows it.
    # The article's least power: the 23:48 clean-up is refused the plan in service, so A's
    # read-back at 23:49 finds its endpoint answering and queues no retry. Only the stale
    # write happens (the version practice's 5 stay unearned); the empty answer is kept away
    # on both races (20) and on the night a write lost its race (5).
    "plan-in-use": Expect(ONLY_STALE, None, 25),
    # The clean-up only marks plan 140 (23:48), so the answer stays and nothing is queued:
    # the same logic in another form, the same points.
    "soft-delete": Expect(ONLY_STALE, None, 25),
    # Refusing an empty answer when the pointer moves changes nothing at 23:48: plan 140 has
    # its records when A points at it; the answer empties when the clean-up deletes them.
    # It keeps both practice nights' empty answers away (5 + 5): a plan that is not there,
    # a plan with no records.
    "no-empty-answer": Expect(AS_THAT_NIGHT, "23:48", 10),
    # Refusing to delete a served plan's records (the cascade) refuses the 23:48 clean-up, like
    # plan-in-use, and earns the same.
    "records-in-use": Expect(ONLY_STALE, None, 25),
    # A's write would make the rollback (148) newer than the plan (140): refused at 23:48.
    "rollback-older": Expect({}, None, 20, ("planned-rollback-fips", "23:20")),
    # Stale write, delete and empty answer happen at 23:48 as that night; but C's apply at
    # 23:50 keeps no rollback to the deleted plan and goes through: the endpoint answers
    # again two minutes later. Only the wedge is prevented.
    "rollback-tolerant": Expect({s: AS_THAT_NIGHT[s] for s in STEPS[:3]}, "23:48", 23),
    # Combinations.
    # The reference pair (scripts/guarded.yaml): the trigger alone already stops everything.
    "forward-only+plan-in-use": Expect({}, None, 20, ("planned-rollback-fips", "23:20")),
    "forward-but-rollback+plan-in-use": Expect({}, None, 30),
    "fk-restrict+conditional-a": Expect({}, None, 35),
    "soft-delete+forward-only": Expect({}, None, 20, ("planned-rollback-fips", "23:20")),
    # Two partial guards that cover each other: the delete trigger holds the 23:48 clean-up,
    # and the empty-answer trigger refuses A's 00:12 retry at the deleted plan 140.
    "plan-in-use+no-empty-answer": Expect(ONLY_STALE, None, 35),
    "records-in-use+no-empty-answer": Expect(ONLY_STALE, None, 35),
    # The soft delete keeps 140 alive past the retry at 00:12, but the purge still precedes
    # the 00:42 one; the foreign key then refuses it (140 is gone). Stale write only.
    "soft-delete+fk-restrict": Expect(ONLY_STALE, None, 30),
    # Guards that block the good path. Every race step is "prevented" (nothing can move), but
    # every apply of the normal night is refused too: the good-write penalty (20) and the
    # failing good path (20) take the 40 back.
    "freeze-endpoint": Expect({}, None, 0, ("enactor-b-apply", "23:00"),
                              ("newest-plan-applies",)),
    # No plan is ever deleted: the three clean-up steps are prevented, the stale write is not
    # (30), but every clean-up of the normal night is refused (-20) and the good path's old
    # plan cannot go (-10).
    "keep-every-plan": Expect(ONLY_STALE, None, 0, ("enactor-b-cleanup", "23:00"),
                              ("old-plan-cleanup",)),
    # A guard that is strong on one side and blocks on the other: 40 - 20 - 10.
    "forward-only+keep-every-plan": Expect({}, None, 0, ("enactor-b-cleanup", "23:00"),
                                           ("old-plan-cleanup",)),
    # The naive rebuild left the world without an endpoint table: every check of the
    # exercise fails (and reads as "no rows": no fault, nothing happened), but every apply
    # fails too, and that is what the score sees.
    # Checks fail closed: the world is broken from the start of the replay (no endpoint
    # table), and every race step whose check cannot run counts as happened.
    "fk-view-left": Expect({"stale-apply": "23:48", "active-plan-delete": "23:00",
                            "empty-answer": "23:00", "wedged-automation": "23:02"}, "23:00", 0,
                           ("enactor-b-apply", "23:00"), ("newest-plan-applies",)),
}
INSTALL_FAILS = {"fk-view-left": "error in view dns_answer: no such table: main.endpoint"}


# -- playing one case ---------------------------------------------------------------------


@dataclass
class Replayed:
    replay: ev.ReplayResult  # what the replay event found
    guards: dict[str, Any]  # the score's guards section
    errors: list[str]  # what the responder's statements refused while installing
    session: Session


def install(session: Session, combo: str, role: str = "responder") -> list[str]:
    errors: list[str] = []
    for name in combo.split("+"):
        for action in GUARDS[name]:
            if action[0] == "sql":
                errors += [r.error or "" for r in session.execute(role, action[1]) if not r.ok]
            else:
                event = session.edit_statement(role, action[1], action[2])
                assert isinstance(event, ev.Edit), event
    return errors


@pytest.fixture(scope="module")
def flagship() -> Exercise:
    return load_exercise(FLAGSHIP)


@pytest.fixture(scope="module")
def replayed(flagship: Exercise, tmp_path_factory: pytest.TempPathFactory,
             ) -> Iterator[Callable[[str], Replayed]]:
    """Replay a combination of guards once per module; later asks reuse the result."""
    done: dict[str, Replayed] = {}

    def get(combo: str) -> Replayed:
        if combo not in done:
            session = open_session(flagship, ("responder",), tmp_path_factory.mktemp("matrix"))
            errors = install(session, combo)
            result = replay_result(session.replay())
            score = ev.score_to_json(session.end())
            done[combo] = Replayed(result, score["guards"], errors, session)
        return done[combo]

    yield get


def replay_result(event: ev.Replay) -> ev.ReplayResult:
    assert event.available and event.result is not None, event
    return event.result


def step(replay: ev.ReplayResult, step_id: str) -> ev.StepReplay:
    return next(s for s in replay.steps if s.id == step_id)


# -- the matrix -----------------------------------------------------------------------------


@pytest.mark.parametrize("combo", list(MATRIX))
def test_each_guard_is_judged_by_what_it_stops(
    combo: str, replayed: Callable[[str], Replayed]
) -> None:
    expect = MATRIX[combo]
    got = replayed(combo)
    if combo in INSTALL_FAILS:
        assert got.errors == [INSTALL_FAILS[combo]]
    else:
        assert got.errors == []
    replay = got.replay
    assert [s.id for s in replay.steps] == STEPS
    prevented = [s for s in STEPS if s not in expect.happened]
    assert list(replay.happened) == list(expect.happened)
    assert list(replay.prevented) == prevented
    assert {s: step(replay, s).at for s in expect.happened} == expect.happened
    assert replay.fault_at == expect.fault_at
    if combo == "fk-view-left":  # the exercise's own checks cannot run without `endpoint`
        assert any("no such table: endpoint" in w for w in replay.warnings)
    else:
        assert replay.warnings == ()
    blocked = replay.blocked_good_writes
    if expect.blocked is None:
        assert blocked == ()
    else:
        assert (blocked[0].task, blocked[0].at) == expect.blocked
    # The score follows the replay.
    assert got.guards["prevented"] == prevented  # what the replay saw, whatever it earns
    assert got.guards["happened"] == list(expect.happened)
    assert got.guards["points"] == expect.points
    failing = tuple(p["id"] for p in got.guards["good_path"] if not p["ok"])
    assert failing == expect.good_path_failing
    assert got.guards["reasons"][0] == (
        "guards: judged by the replay of the race against the team's final database, "
        "every role automated")


def test_a_refusal_is_named_in_the_step_that_it_stopped(
    replayed: Callable[[str], Replayed],
) -> None:
    # Enactor A's apply runs once (23:48), so its step shows exactly what stopped it.
    assert step(replayed("forward-only").replay, "stale-apply").outcome == (
        "refused (constraint): older than the plan in service")
    assert step(replayed("rollback-older").replay, "stale-apply").outcome == (
        "refused (constraint): the rollback must be older than the plan")
    assert step(replayed("conditional-a").replay, "stale-apply").outcome == "0 rows changed"
    assert step(replayed("fence").replay, "stale-apply").outcome == "0 rows changed"
    happened = step(replayed("none").replay, "wedged-automation")
    assert happened.outcome == ("read 1 row; refused (constraint): FOREIGN KEY constraint "
                                "failed: endpoint.rollback_plan_id -> plan.id")
    assert happened.faults_after == ("An endpoint's DNS answer is empty",)


@pytest.mark.parametrize("combo", ["freeze-endpoint", "keep-every-plan", "fk-view-left"])
def test_a_guard_that_blocks_the_good_path_is_penalised(
    combo: str, replayed: Callable[[str], Replayed]
) -> None:
    got = replayed(combo)
    blocked = got.replay.blocked_good_writes
    tasks = {b.task for b in blocked}
    # Only the normal night's own tasks: Enactor A on time, not delayed.
    assert tasks <= {"enactor-b-apply", "enactor-c-apply", "enactor-b-cleanup",
                     "enactor-c-cleanup", "enactor-a-on-time", "planned-rollback-fips",
                     "planned-rollback-regional"}
    assert len(blocked) > 20  # every run of the night, not one
    reasons = "\n".join(got.guards["reasons"])
    assert "so they stop the service doing its job" in reasons
    assert got.guards["points"] == 0
    assert "blocked the good path" in reasons


def test_a_prevented_clean_up_step_shows_the_refused_run(
    replayed: Callable[[str], Replayed],
) -> None:
    got = step(replayed("plan-in-use+no-empty-answer").replay, "active-plan-delete")
    assert got.at == "23:48"
    assert got.outcome.startswith("refused (constraint): an endpoint serves")


# -- the replay against the live night -----------------------------------------------------


def _events(folder: Path) -> tuple[ev.Event, ...]:
    return read_events(folder).events


def _automation(events: Sequence[ev.Event], skip: frozenset[str] = frozenset(),
                ) -> list[tuple[Any, ...]]:
    """What the automation did, statement by statement, and each run's outcome (leaving out
    the tasks in `skip`: a player's tasks, which the replay, with no players, "runs")."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        if isinstance(e, ev.Statement) and e.automated:
            out.append((e.sim_time, e.task, e.statement, e.ok, e.rowcount, e.error))
        elif isinstance(e, ev.Automation):
            if e.task not in skip:
                out.append((e.sim_time, e.kind, e.task, e.outcome, e.next))
        elif isinstance(e, ev.RaceStep):
            out.append((e.sim_time, e.kind, e.step, None, None))
        elif isinstance(e, (ev.Fault, ev.InvariantClear)):
            out.append((e.sim_time, e.kind, e.invariant, None, None))
    return out


def test_without_guards_the_replay_is_the_live_night(
    flagship: Exercise, replayed: Callable[[str], Replayed], tmp_path: Path
) -> None:
    assert flagship.replay is not None and flagship.replay.until is not None
    live = open_session(flagship, ("responder",), tmp_path)
    live.advance_to(flagship.replay.until)
    assert live.clock_face == "01:15"
    live_events = list(live.events)
    live.end()
    replay = replayed("none").replay
    # The same race steps at the same clock times, the fault at 23:48 ...
    live_steps = {e.step: e.sim_time for e in of_kind(live_events, ev.RaceStep)}
    assert live_steps == AS_THAT_NIGHT
    assert {s.id: s.at for s in replay.steps} == live_steps
    assert [e.sim_time for e in of_kind(live_events, ev.Fault)] == ["23:48"]
    assert replay.fault_at == "23:48"
    # ... and, run for run, statement for statement, the same automation.
    race = _events(replayed("none").session.folder / replay.folder / "race")
    assert _automation(race) == _automation(live_events)
    assert race[-1].sim_time == "01:15"


def _dump(session: Session, path: Path) -> list[str]:
    session.store.backup_to(path)
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_replays_are_deterministic_and_leave_the_live_world_alone(
    flagship: Exercise, tmp_path: Path
) -> None:
    # A team table with rows (the fence) and a trigger: both go into the replay's world.
    session = open_session(flagship, ("responder",), tmp_path / "t")
    assert install(session, "fence+plan-in-use") == []
    before = _dump(session, tmp_path / "before.db")
    minute, count = session.minute, len(session.events)
    first = session.replay()
    second = session.replay()
    after = _dump(session, tmp_path / "after.db")
    assert after == before
    assert session.minute == minute  # a replay spends no time on the live clock
    assert [type(e) for e in session.events[count:]] == [ev.Replay, ev.Replay]
    one, two = replay_result(first), replay_result(second)
    assert one.folder != two.folder
    assert Path(one.folder).parent == Path(two.folder).parent == Path("replay")
    # what may differ between two replays of one world: the place in the log, the folder
    assert dataclasses.replace(one, folder="") == dataclasses.replace(two, folder="")
    assert first.guards == second.guards
    assert list(one.prevented) == STEPS
    # The replay event is in the transcript, with its steps; the end replays once more.
    session.end()
    logged = list(of_kind(_events(session.folder), ev.Replay))
    assert logged[:2] == [first, second]
    assert len(logged) == 3 and logged[-1].final


def test_a_clean_up_that_marked_its_plans_is_not_blocked(flagship: Exercise,
                                                         tmp_path: Path) -> None:
    session = open_session(flagship, ("responder",), tmp_path)
    session.execute("responder", "ALTER TABLE plan ADD COLUMN deleted_at INTEGER")
    session.edit_statement("responder", "enactor-b-cleanup",
                           "UPDATE plan SET deleted_at = :now "
                           "WHERE id < :plan - 7 AND deleted_at IS NULL; "
                           "DELETE FROM plan WHERE deleted_at <= :now - 30")
    replay = replay_result(session.replay())
    session.end()
    assert replay.blocked_good_writes == ()


def test_replaying_an_unguarded_world_before_the_race_earns_no_free_points(
    replayed: Callable[[str], Replayed],
) -> None:
    got = replayed("none")
    assert got.replay.fault_at == "23:48"
    score = got.session.score
    assert score is not None
    assert score.detection is not None and score.recovery is not None
    assert score.detection.points == 0 and score.recovery.points == 0


# -- replay from a script -------------------------------------------------------------------


def test_a_script_with_replay_fills_guards_prevented(flagship: Exercise, tmp_path: Path) -> None:
    script = load_script(FLAGSHIP / "scripts" / "replay-guarded.yaml", flagship)
    answered: list[Any] = []
    # The replay's world is kept only until the next replay (the final one at the end):
    # read it as the replay is recorded.
    original_replay = Session.replay

    def replay_and_look(self: Session, *, final: bool = False) -> ev.Replay:
        event = original_replay(self, final=final)
        if not final and event.result is not None:
            race = self.folder / event.result.folder / "race.db"
            conn = sqlite3.connect(f"file:{race}?mode=ro", uri=True)
            try:
                answered.append(conn.execute(
                    "SELECT count(DISTINCT endpoint) FROM dns_answer").fetchone())
            finally:
                conn.close()
        return event

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Session, "replay", replay_and_look)
        session, result = run_script(flagship, script, tmp_path)
    assert result["guards"]["prevented"] == STEPS
    # the race's 30 and the dangling-pointer night's 5; a plan with no records passes a
    # foreign key, so that practice night earns nothing
    assert result["guards"]["points"] == 35
    assert result["guards"]["reasons"][0].startswith("guards: judged by the replay")
    assert any(r.startswith("guards +0/5: An endpoint's DNS answer is empty (on the practice "
                            "night: a plan written with no records)")
               for r in result["guards"]["reasons"])
    assert all(p["ok"] for p in result["guards"]["good_path"])
    assert result["fault"]["occurred"] is False
    assert result["total"] == 95
    event = next(of_kind(_events(Path(result["session"])), ev.Replay))
    replay = replay_result(event)
    assert event.sim_time == "23:06" and replay.warnings == ()
    assert replay.blocked_good_writes == ()
    # The rebuilt endpoint kept its view: the replay's world answers for every endpoint.
    assert answered == [(4,)]
    assert not list((Path(result["session"]) / "replay").rglob("*.db"))  # none kept after


# -- lost-update-basics ---------------------------------------------------------------------

LU_STEPS = ["stale-retry", "blank-address", "in-use-delete", "late-save", "duplicate-retry",
            "backwards"]
LU_LIVE_NIGHT = {"stale-retry": "09:14", "blank-address": "09:15", "in-use-delete": "09:16",
                 "late-save": "09:17", "duplicate-retry": "09:17", "backwards": "09:18"}
_SAVE = ("UPDATE config SET value = :value, version = version + 1, updated_by = 'writer-b', "
         "updated_at = :now_hhmm WHERE key = 'primary_db'")
LU_GUARDS: dict[str, list[Action]] = {
    "none": [],
    "version": [("edit", "writer-b-save", _SAVE + " AND version = :version")],
    "check": [("sql", """
        CREATE TABLE host_new (name TEXT PRIMARY KEY, address TEXT NOT NULL
            CHECK (length(trim(address, ' ' || char(9, 10, 13))) > 0),
            status TEXT NOT NULL DEFAULT 'active', generation INTEGER NOT NULL);
        INSERT INTO host_new SELECT name, address, status, generation FROM host;
        DROP TABLE host; ALTER TABLE host_new RENAME TO host""")],
    "foreign-key": [("sql", """
        CREATE TABLE config_new (key TEXT PRIMARY KEY,
            value TEXT NOT NULL REFERENCES host (name) ON DELETE RESTRICT,
            version INTEGER NOT NULL, updated_by TEXT NOT NULL, updated_at TEXT NOT NULL);
        INSERT INTO config_new SELECT key, value, version, updated_by, updated_at FROM config;
        DROP TABLE config; ALTER TABLE config_new RENAME TO config""")],
    "fence": [("edit", "writer-b-save",
               _SAVE + " AND :token = (SELECT token FROM lease WHERE name = 'primary_db')")],
    "unique": [("sql", "CREATE UNIQUE INDEX read_pool_host ON read_pool (host)")],
    "forward": [("sql", """
        CREATE TRIGGER config_version_forward BEFORE UPDATE ON config
        WHEN NEW.version < OLD.version
        BEGIN SELECT RAISE(ABORT, 'config.version may only go forward'); END""")],
    "freeze-config": [("sql", """
        CREATE TRIGGER config_frozen BEFORE UPDATE ON config
        BEGIN SELECT RAISE(ABORT, 'config is frozen'); END""")],
}
# Each guard and the one replayed mistake it stops. Why only that one: the version check
# and the fence are edits of writer-b-save, which only b-put-back, b-retry and b-late-save
# run, and each fails one test (09:14: version 1 against 2; 09:17: token 2 against writer A's
# 3, the version having been re-read at 09:15); the CHECK is on host.address, the foreign
# key on config.value, the unique key on read_pool.host and the trigger on lowering the
# version: each touches only its own step's table or column.
LU_OWN = {"version": "stale-retry", "check": "blank-address", "foreign-key": "in-use-delete",
          "fence": "late-save", "unique": "duplicate-retry", "forward": "backwards"}
# The replay starts from the seed, with nobody to repair at 09:04, so the first fault is the
# lost update at 09:03, except where a guard changes that: the version check and the fence
# make the 09:03 save change 0 rows (version 1 against 2; no token taken yet, :token is
# NULL), and the first fault is then the clean-up deleting db-2 (09:16) or the 09:14 retry.
LU_POINTS = {"version": 9, "check": 0, "foreign-key": 10, "fence": 7, "unique": 10,
             "forward": 0}
LU_FAULT = {"none": "09:03", "version": "09:16", "check": "09:03", "foreign-key": "09:03",
            "fence": "09:14", "unique": "09:03", "forward": "09:03"}


@pytest.fixture(scope="module")
def lost_update() -> Exercise:
    return load_exercise(LOST_UPDATE)


@pytest.fixture(scope="module")
def lu_replayed(lost_update: Exercise, tmp_path_factory: pytest.TempPathFactory,
                ) -> Callable[[str], Replayed]:
    done: dict[str, Replayed] = {}

    def get(guard: str) -> Replayed:
        if guard not in done:
            session = open_session(lost_update, ("operator",), tmp_path_factory.mktemp("lu"))
            for action in LU_GUARDS[guard]:
                if action[0] == "sql":
                    assert all(r.ok for r in session.execute("operator", action[1]))
                else:
                    edit = session.edit_statement("operator", action[1], action[2])
                    assert isinstance(edit, ev.Edit), edit
            result = replay_result(session.replay())
            score = ev.score_to_json(session.end())
            done[guard] = Replayed(result, score["guards"], [], session)
        return done[guard]

    return get


@pytest.mark.parametrize("guard", list(LU_OWN))
def test_each_lost_update_guard_stops_its_own_mistake_and_no_other(
    guard: str, lu_replayed: Callable[[str], Replayed]
) -> None:
    got = lu_replayed(guard)
    own = LU_OWN[guard]
    replay = got.replay
    assert replay.prevented == (own,)
    assert list(replay.happened) == [s for s in LU_STEPS if s != own]
    assert {s.id: s.at for s in replay.steps if s.status == "happened"} == {
        s: t for s, t in LU_LIVE_NIGHT.items() if s != own}
    assert replay.fault_at == LU_FAULT[guard]
    assert replay.blocked_good_writes == () and replay.warnings == ()
    assert got.guards["prevented"] == [own]
    # by harm kept away (issue 27): a guard that stops its own step but not the harm it
    # leads to earns only the harm minutes it spared
    assert got.guards["points"] == LU_POINTS[guard]
    assert all(p["ok"] for p in got.guards["good_path"])


def test_without_guards_the_lost_update_replay_is_the_live_morning(
    lost_update: Exercise, lu_replayed: Callable[[str], Replayed], tmp_path: Path
) -> None:
    assert lost_update.replay is not None and lost_update.replay.until is not None
    live = open_session(lost_update, ("operator",), tmp_path)
    live.advance_to(lost_update.replay.until)
    live_events = list(live.events)
    live.end()
    replay = lu_replayed("none").replay
    assert {e.step: e.sim_time for e in of_kind(live_events, ev.RaceStep)} == LU_LIVE_NIGHT
    assert {s.id: s.at for s in replay.steps} == LU_LIVE_NIGHT
    assert list(replay.happened) == LU_STEPS and replay.fault_at == LU_FAULT["none"]
    # The operator's own tasks (repair, the six guards) have no statements: with no players
    # in the replay nothing runs for them and nothing is logged.
    players = frozenset(t.id for t in lost_update.tasks if t.role == "operator")
    race = _events(lu_replayed("none").session.folder / replay.folder / "race")
    assert [e for e in of_kind(race, ev.Automation) if e.task in players] == []
    assert _automation(race, players) == _automation(live_events)


def test_freezing_config_blocks_the_failover_and_is_penalised(
    lu_replayed: Callable[[str], Replayed],
) -> None:
    # Refusing every update of config stops the three steps that write it (stale-retry,
    # late-save, backwards: 15 points) and also writer A's failover on the normal morning
    # (-5) and the good path that moves primary_db (-5).
    got = lu_replayed("freeze-config")
    assert got.replay.prevented == ("stale-retry", "late-save", "backwards")
    assert got.replay.blocked_good_writes == (
        ev.BlockedWrite(task="a-failover", at="09:02",
                        outcome="refused (constraint): config is frozen",
                        lost=("a-failover", "a-retire", "a-log-failover")),
        ev.BlockedWrite(task="b-save-on-time", at="09:14",
                        outcome="read 1 row; refused (constraint): config is frozen",
                        lost=("writer-b-save",)))
    assert [p["id"] for p in got.guards["good_path"] if not p["ok"]] == ["primary-can-move"]
    assert got.guards["points"] == 0  # a guard that refuses a good write earns nothing


def test_all_six_guards_from_a_script_prevent_every_step(
    lost_update: Exercise, tmp_path: Path
) -> None:
    script = load_script(LOST_UPDATE / "scripts" / "replay-all-guards.yaml", lost_update)
    _, result = run_script(lost_update, script, tmp_path)
    assert result["guards"]["prevented"] == LU_STEPS
    assert result["guards"]["points"] == 30
    assert result["guards"]["reasons"][0].startswith("guards: judged by the replay")
    replay = replay_result(next(of_kind(_events(Path(result["session"])), ev.Replay)))
    assert replay.fault_at is None  # the 09:03 save changes 0 rows against version 2
    assert replay.blocked_good_writes == () and replay.warnings == ()
    assert result["total"] == result["max"] == 100
