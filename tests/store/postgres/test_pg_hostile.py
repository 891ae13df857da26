"""Hostile SQL on PostgreSQL: every escape refused or harmless, and the session goes on.

Each case runs one submission as a role, then checks that the error (if any) is one clear
line, that the same role's next statement works, and that the world is as it was (or, for a
harmless statement, that what changed is only what the role may change).
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_fixtures import ROLES, WORLD_SQL, one, snapshot

from raceday.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

EXFIL = Path("/tmp/raceday-pg-exfil.txt")

# (what, role, sql, refused by raceday before the server sees it)
REFUSED = [
    ("copy to a file", "planner", f"COPY plan TO '{EXFIL}'"),
    ("copy from a program", "planner", "COPY plan FROM PROGRAM 'id'"),
    ("copy to a program", "planner", f"COPY (SELECT 1) TO PROGRAM 'touch {EXFIL}'"),
    ("copy in a DO block", "responder",
     f"DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {EXFIL}'''; END $$"),
    ("copy to a file in a DO block", "responder",
     f"DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO ''{EXFIL}'''; END $$"),
    ("read a server file", "planner", "SELECT pg_read_file('/etc/passwd')"),
    ("read a binary file", "planner", "SELECT pg_read_binary_file('/etc/passwd')"),
    ("list a directory", "planner", "SELECT pg_ls_dir('.')"),
    ("stat a file", "planner", "SELECT pg_stat_file('/etc/passwd')"),
    ("import a large object", "planner", "SELECT lo_import('/etc/passwd')"),
    ("export a large object", "planner", f"SELECT lo_export(1, '{EXFIL}')"),
    ("create an extension", "responder", "CREATE EXTENSION dblink"),
    ("create an extension in a DO block", "responder",
     "DO $$ BEGIN EXECUTE 'CREATE EXTENSION dblink'; END $$"),
    ("dblink without the extension", "planner",
     "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)"),
    ("alter system", "responder", "ALTER SYSTEM SET statement_timeout = 0"),
    ("alter system in a DO block", "responder",
     "DO $$ BEGIN EXECUTE 'ALTER SYSTEM SET statement_timeout = 0'; END $$"),
    ("set role", "planner", "SET ROLE raceday_ci"),
    ("reset role", "planner", "RESET ROLE"),
    ("set session authorization", "planner", "SET SESSION AUTHORIZATION postgres"),
    ("set statement_timeout", "planner", "SET statement_timeout = 0"),
    ("a role by set_config", "planner", "SELECT set_config('role', current_database(), false)"),
    ("session authorization by set_config", "planner",
     "SELECT set_config('session_authorization', 'postgres', false)"),
    ("another exercise role by set_config", "enactor-a",
     "SELECT set_config('role', replace(current_user, 'enactor_a', 'responder'), false)"),
    ("create a role", "responder", "CREATE ROLE evil LOGIN SUPERUSER"),
    ("alter my role", "responder", "ALTER ROLE CURRENT_USER SET statement_timeout = 0"),
    ("grant myself more", "responder", "GRANT SELECT ON audit TO PUBLIC"),
    ("a schema of my own", "responder", "CREATE SCHEMA mine"),
    ("begin", "planner", "BEGIN"),
    ("start transaction", "planner", "START TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
    ("commit inside a DO block", "responder", "DO $$ BEGIN COMMIT; END $$"),
    ("savepoint", "planner", "SAVEPOINT a"),
    ("prepare transaction", "planner", "PREPARE TRANSACTION 'held'"),
    ("listen", "planner", "LISTEN raceday"),
    ("notify", "planner", "NOTIFY raceday, 'the world ended'"),
    ("load a library", "planner", "LOAD 'plpgsql'"),
    ("vacuum", "planner", "VACUUM plan"),
    ("discard", "planner", "DISCARD ALL"),
    ("lock a table", "planner", "LOCK TABLE plan IN ACCESS EXCLUSIVE MODE"),
    ("a second statement smuggled in", "planner", "SELECT 1 /* ; */ ; SET ROLE NONE"),
    ("a NUL character", "planner", "SELECT 'a\x00b'"),
    ("another role's table through a view", "enactor-a", "SELECT * FROM dns_answer JOIN audit ON true"),
    ("an untrusted language", "responder",
     "CREATE FUNCTION sh() RETURNS int LANGUAGE plpython3u AS $$ return 1 $$"),
    ("a C function", "responder",
     "CREATE FUNCTION evil() RETURNS int AS '/lib/x86_64-linux-gnu/libc.so.6', 'system' LANGUAGE C"),
]


@pytest.fixture(scope="module")
def one_world(pg_dsn: str) -> Iterator[PostgresStore]:
    """One world for every escape below: each one must leave it exactly as it was."""
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, row_cap=20, time_limit_s=0.5)
    try:
        yield store
    finally:
        store.drop()


@pytest.mark.parametrize("what, role, sql", REFUSED, ids=[case[0] for case in REFUSED])
def test_an_escape_is_refused_and_the_session_goes_on(
    one_world: PostgresStore, what: str, role: str, sql: str
) -> None:
    pg_store = one_world
    EXFIL.unlink(missing_ok=True)
    before = snapshot(pg_store)
    results = pg_store.execute(role, sql)
    failed = [r for r in results if not r.ok]
    assert failed, f"{what}: {results}"
    assert failed[0].error and "\n" not in failed[0].error
    assert failed[0].error_kind in ("refused", "error", "syntax"), failed[0]
    assert not EXFIL.exists()
    assert one(pg_store, role, "SELECT count(*) FROM plan").rows == ((3,),)
    assert snapshot(pg_store) == before


def test_the_limits_a_player_turns_off_come_back_with_the_next_statement(pg_store: PostgresStore) -> None:
    assert one(pg_store, "planner", "SELECT set_config('statement_timeout', '0', false)").ok
    slow = one(pg_store, "planner", "SELECT pg_sleep(5)")
    assert slow.error_kind == "timeout"
    assert slow.elapsed_ms < 2000
    # and inside one statement, the watchdog still stops it
    both = one(pg_store, "planner", "SELECT set_config('statement_timeout', '0', true), pg_sleep(5)")
    assert both.error_kind == "timeout" and both.elapsed_ms < 3000
    assert one(pg_store, "planner", "SELECT 1").ok


def test_a_role_reset_by_set_config_reaches_only_an_empty_login(pg_store: PostgresStore) -> None:
    """`set_config('role', 'none')` falls back to the role's own login, which holds nothing."""
    leaked = pg_store.execute(
        "responder",
        "DO $$ BEGIN PERFORM set_config('role', 'none', false); "
        f"EXECUTE 'CREATE TABLE \"{pg_store.names.world}\".escaped (x int)'; END $$")
    assert not leaked[0].ok and leaked[0].error_kind == "refused"
    assert one(pg_store, "responder", "SELECT current_user LIKE '%responder'").rows == ((True,),)


@pytest.mark.parametrize("sql", [
    "DO $$ BEGIN LOOP END LOOP; END $$",
    "SELECT pg_sleep(60)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "SELECT count(*) FROM numbers a, numbers b, numbers c, numbers d, numbers e, numbers f",
])
def test_a_runaway_statement_stops_at_the_time_limit(pg_store: PostgresStore, sql: str) -> None:
    started = time.perf_counter()
    result = one(pg_store, "responder", sql)
    assert result.error_kind == "timeout"
    # stopped by the limit, not run to its end (pg_sleep(60), an endless loop): how fast the
    # server answers the cancel is a benchmark's question, not this test's (a bound of 1.5 s
    # failed on a busy server while the limit itself held)
    assert time.perf_counter() - started < 10
    assert one(pg_store, "responder", "SELECT 1").ok


def test_an_advisory_lock_is_not_held_past_its_statement(pg_store: PostgresStore) -> None:
    assert one(pg_store, "planner", "SELECT pg_advisory_lock(42)").ok
    taken = one(pg_store, "enactor-a", "SELECT pg_try_advisory_lock(42)")
    assert taken.rows == ((True,),)


def test_a_row_lock_is_not_held_past_its_statement(pg_store: PostgresStore) -> None:
    assert one(pg_store, "enactor-a", "SELECT * FROM endpoint FOR UPDATE").ok
    later = one(pg_store, "enactor-b", "UPDATE endpoint SET active_plan_id = 3 WHERE name = 'ddb'")
    assert later.ok and later.rowcount == 1


def test_a_lock_wait_gives_up_instead_of_hanging(pg_dsn: str) -> None:
    """Another client holding a lock (not a player: players cannot keep one) makes a
    statement wait at most the lock timeout."""
    import psycopg

    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, time_limit_s=5)
    try:
        with psycopg.connect(pg_dsn) as holder:
            holder.execute(f'LOCK TABLE "{store.names.world}".plan IN ACCESS EXCLUSIVE MODE')
            started = time.perf_counter()
            waited = one(store, "planner", "SELECT * FROM plan")
            assert waited.error_kind == "timeout" and "lock" in (waited.error or "")
            assert time.perf_counter() - started < 3
        assert one(store, "planner", "SELECT count(*) FROM plan").ok
    finally:
        store.drop()


def test_a_security_definer_function_reaches_no_further_than_its_maker(pg_store: PostgresStore) -> None:
    made = pg_store.execute("responder", f"""
        CREATE FUNCTION peek() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS $$
            SELECT count(*) FROM "{pg_store.names.state}".world_tables $$""")
    assert not made[0].ok  # not even created: the body names a schema the responder cannot use
    made = pg_store.execute("responder", """
        CREATE FUNCTION wipe() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $$
        BEGIN EXECUTE 'DELETE FROM audit'; END $$""")
    assert made[0].ok
    called = one(pg_store, "enactor-a", "SELECT wipe()")
    assert called.error_kind == "refused"  # the responder may not write audit either
    owner = one(pg_store, "responder", "ALTER FUNCTION wipe() OWNER TO raceday_ci")
    assert owner.error_kind == "refused"


def test_a_hijacked_world_trigger_reaches_no_further_than_the_world(pg_store: PostgresStore) -> None:
    """The world's trigger function runs as a role that may write the world and nothing else."""
    hijack = pg_store.execute("responder", f"""
        CREATE OR REPLACE FUNCTION trg_audit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN EXECUTE 'DROP SCHEMA "{pg_store.names.state}" CASCADE'; RETURN new; END $$""")
    assert hijack[0].error_kind == "refused"  # the responder does not own the world's code
    assert pg_store.app_query("SELECT count(*) FROM sqlite_master")[1][0][0] > 0


def test_a_player_cannot_see_another_sessions_world(pg_dsn: str, pg_store: PostgresStore) -> None:
    other = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES)
    try:
        peek = one(pg_store, "planner", f'SELECT * FROM "{other.names.world}".plan')
        assert peek.error_kind == "refused"
    finally:
        other.drop()


def test_raceday_state_is_out_of_every_roles_reach(pg_store: PostgresStore) -> None:
    for role in ("planner", "enactor-a", "enactor-b", "responder"):
        peek = one(pg_store, role, f'SELECT * FROM "{pg_store.names.state}".world_tables')
        assert peek.error_kind == "refused", role


def test_a_spoofed_notification_changes_nothing(pg_store: PostgresStore) -> None:
    before = snapshot(pg_store)
    sent = one(pg_store, "planner", "SELECT pg_notify('raceday', 'the world ended')")
    assert sent.ok  # pg_notify cannot be revoked without a superuser: it is harmless
    assert snapshot(pg_store) == before


def test_interrupt_from_another_thread_during_a_loop(pg_dsn: str) -> None:
    store = PostgresStore.create(pg_dsn, WORLD_SQL, ROLES, time_limit_s=30)
    try:
        threading.Timer(0.2, store.interrupt).start()
        result = one(store, "responder", "DO $$ BEGIN LOOP END LOOP; END $$")
        assert result.error_kind == "timeout" and "cancelled" in (result.error or "")
        assert one(store, "responder", "SELECT 1").ok
    finally:
        store.drop()


def test_the_world_script_cannot_escape_either(pg_dsn: str) -> None:
    """The world is trusted SQL, yet it runs as raceday's own login, which is no superuser."""
    from raceday.errors import ExerciseError

    session = "copyworld" + secrets.token_hex(3)  # its own: other runs share the server
    with pytest.raises(ExerciseError):
        PostgresStore.create(pg_dsn, f"COPY (SELECT 1) TO PROGRAM 'touch {EXFIL}'", ROLES,
                             session=session)
    assert not EXFIL.exists()
    assert os.environ.get("RACEDAY_TEST_PG_DSN")
