"""Several teams, one facilitator: each team in its own world and transcript on one clock,
a seat of one team cannot act in another's world, and a leaderboard ranks them at the end."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from test_team_play import TEAM_ONLY, comparable

from raceday.cli import main
from raceday.engine.clock import Pace
from raceday.engine.headless import run_script
from raceday.engine.script import load_script
from raceday.errors import ScriptError
from raceday.exercise.model import Exercise
from raceday.store.session_db import SessionDb
from raceday.store.team_db import CommandRow
from raceday.team.client import Client, TeamError
from raceday.team.group import (
    GroupError,
    Teams,
    TeamSpec,
    read_group,
    team_of_token,
    team_session,
)
from raceday.team.group_script import load_teams_file, run_group_script
from raceday.team.leaderboard import leaderboard_lines, standings
from raceday.team.seats import seats_from_roles, sign
from raceday.transcript import events as ev
from raceday.transcript.log import of_kind, read_events

DATA = Path(__file__).parent / "data"
TEAMS_FILE = DATA / "three-teams.yaml"
SEATS = tuple(seats_from_roles(("enactor-a", "responder")))
SAME_TOKENS = {"enactor-a": "token-a", "responder": "token-r"}


def two_teams(flagship: Exercise, transcripts: Path, pace: Pace = Pace.TURNS,
              wall: object = None, **kwargs: object) -> Teams:
    """Red and blue, both given the same tokens on purpose: the team's name, signed into every
    command, is what keeps them apart."""
    extra: dict[str, object] = dict(kwargs)
    if wall is not None:
        extra["wall"] = wall
    teams = Teams(flagship, [TeamSpec("red", SEATS), TeamSpec("blue", SEATS)],
                  transcripts=transcripts, pace=pace,
                  tokens={"red": SAME_TOKENS, "blue": SAME_TOKENS}, **extra)  # type: ignore[arg-type]
    teams.start()
    return teams


def joined(teams: Teams, team: str, seat: str, player: str) -> Client:
    client = Client(teams.host(team).folder, SAME_TOKENS[seat], player)
    command = client.join()
    teams.pump()
    client.wait(command, timeout=5)
    return client


def send(teams: Teams, client: Client, kind: str, **payload: object) -> CommandRow:
    command = client.submit(kind, dict(payload))
    teams.pump()
    return client.wait(command, timeout=5)


def test_three_teams_play_at_once_and_each_transcript_is_its_headless_run(
        flagship: Exercise, tmp_path: Path) -> None:
    teams_file = load_teams_file(TEAMS_FILE, flagship)
    group = run_group_script(flagship, teams_file, tmp_path / "teams")
    info = read_group(group.folder)
    assert [name for name, _ in info.teams] == ["red", "blue", "green"]
    totals = {}
    for name, script in teams_file.scripts:
        solo, _ = run_script(flagship, load_script(script.path, flagship),
                             tmp_path / "headless" / name)
        alone = read_events(solo.folder).events
        together = read_events(info.team_folder(name)).events
        assert comparable(together) == comparable(alone), name
        assert any(isinstance(e, ev.SeatJoined) for e in together)  # seats, not a hot seat
        score = together[-1]
        assert isinstance(score, ev.ScoreEvent)
        totals[name] = score.score.total
    # the race happened in red's world only (at Ana's hand), not in the others'
    red_steps = [e.step for e in of_kind(read_events(info.team_folder("red")).events, ev.RaceStep)]
    assert "stale-apply" in red_steps
    ranked = [row.team for row in standings(info)]
    assert ranked == sorted(totals, key=lambda n: -totals[n])[: len(ranked)]
    assert [row.score.total for row in standings(info) if row.score] == sorted(
        totals.values(), reverse=True)
    lines = leaderboard_lines(standings(info))
    assert lines[1].startswith(" 1.") and ranked[0] in lines[1]


def test_run_team_with_a_teams_file_prints_every_team_s_score(flagship: Exercise,
                                                               tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    code = main(["run", str(Path(__file__).parents[2] / "exercises" / "dynamodb-dns-race"),
                 "--team", "--script", str(TEAMS_FILE), "--json",
                 "--transcripts", str(tmp_path / "t")])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert {t["team"] for t in result["teams"]} == {"red", "blue", "green"}
    for team in result["teams"]:
        [score] = of_kind(read_events(Path(team["session"])).events, ev.ScoreEvent)
        assert team["total"] == score.score.total
    totals = [t["total"] for t in result["teams"]]
    assert totals == sorted(totals, reverse=True)


def test_a_teams_file_names_what_is_wrong_with_a_line(flagship: Exercise,
                                                      tmp_path: Path) -> None:
    bad = tmp_path / "teams.yaml"
    bad.write_text("teams:\n  red: missing.yaml\n  'blue team': x.yaml\n")
    with pytest.raises(ScriptError) as caught:
        load_teams_file(bad, flagship)
    problems = caught.value.problems
    assert any(p.startswith(f"{bad}:2: team red:") and "no such play script" in p
               for p in problems)
    assert any(p.startswith(f"{bad}:1:") and "'blue team' is not a team name" in p
               for p in problems)


def test_a_command_copied_into_another_team_s_world_is_refused_and_recorded(
        flagship: Exercise, tmp_path: Path) -> None:
    teams = two_teams(flagship, tmp_path / "t")
    try:
        joined(teams, "red", "enactor-a", "Ana")
        joined(teams, "blue", "enactor-a", "Bea")
        # Ana signs a command with her own token, for her own team, as her client does, and
        # puts it into blue's session.db (a player on the same machine can write that file)
        payload = json.dumps({"role": "enactor-a", "sql": "DELETE FROM plan"})
        nonce = time.time_ns()
        blue_db = SessionDb.open(teams.host("blue").folder)
        forged = blue_db.insert_raw(CommandRow(
            id=0, seat="enactor-a", nonce=nonce, kind="sql", payload=payload,
            mac=sign(SAME_TOKENS["enactor-a"], "enactor-a", nonce, "sql", payload, "red"),
            status="queued", submitted_at=time.time()))
        teams.pump()
        row = blue_db.command(forged)
        assert row is not None and row.status == "refused"
        assert "team red's seat enactor-a" in (row.error or "")
        assert "cannot act in team blue's world" in (row.error or "")
        blue_events = read_events(teams.host("blue").folder).events
        [refused] = of_kind(blue_events, ev.CommandRefused)
        assert refused.seat == "enactor-a" and refused.player is None  # Bea did not send it
        assert not [e for e in of_kind(blue_events, ev.Statement) if not e.automated]
        red_events = read_events(teams.host("red").folder).events
        assert not list(of_kind(red_events, ev.CommandRefused))
        blue_db.close()
    finally:
        teams.close()


def test_a_token_of_one_team_opens_no_seat_at_another(flagship: Exercise,
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    teams = Teams(flagship, [TeamSpec("red", SEATS), TeamSpec("blue", SEATS)],
                  transcripts=tmp_path / "t", pace=Pace.TURNS)
    folder = teams.start()
    try:
        red_token = teams.host("red").seats["responder"].token
        with pytest.raises(TeamError, match="opens no seat"):
            Client(teams.host("blue").folder, red_token, "Rita")
        assert team_of_token(read_group(folder), red_token) == "red"
        code = main(["join", str(folder), "--team", "blue", "--as", "Rita", "--token", red_token])
        assert code != 0
        err = capsys.readouterr().err
        assert "team red, not team blue" in err and err.count("\n") == 1
        code = main(["join", str(folder), "--as", "Rita", "--token", red_token])
        assert code != 0 and "--team NAME" in capsys.readouterr().err
    finally:
        teams.close()


def test_every_team_runs_on_one_clock(flagship: Exercise, tmp_path: Path) -> None:
    now = [1000.0]
    teams = two_teams(flagship, tmp_path / "t", Pace.LIVE, wall=lambda: now[0])
    try:
        now[0] += 10  # 10 s at 60x: ten simulated minutes
        teams.pump()
        assert [h.need().minute for h in teams.hosts.values()] == [10, 10]
        teams.pause()
        now[0] += 30
        teams.pump()
        assert [h.need().minute for h in teams.hosts.values()] == [10, 10]
        teams.resume()
        teams.skip()  # to the next inject, every team at once
        minutes = {h.need().minute for h in teams.hosts.values()}
        assert len(minutes) == 1 and minutes.pop() > 10
    finally:
        teams.close()


def test_a_rejoin_catches_up_with_its_own_team_only(flagship: Exercise, tmp_path: Path) -> None:
    teams = two_teams(flagship, tmp_path / "t")
    try:
        rita = joined(teams, "blue", "responder", "Rita")
        seen = rita.new_events()
        rita.close()  # her terminal died
        ana = joined(teams, "red", "enactor-a", "Ana")
        send(teams, ana, "sql", sql="SELECT 1")
        bea = joined(teams, "blue", "enactor-a", "Bea")
        send(teams, bea, "sql", sql="SELECT 2")
        again = joined(teams, "blue", "responder", "Rita")
        caught_up = again.new_events()
        assert caught_up[: len(seen)] == seen
        players = {e.player for e in of_kind(tuple(caught_up), ev.SeatJoined)}
        assert players == {"Rita", "Bea"}  # Ana plays in red's world, not blue's
        commands = list(of_kind(tuple(caught_up), ev.SeatCommand))
        assert [c.player for c in commands] == ["Bea"]
    finally:
        teams.close()


def test_a_group_needs_a_team_name_it_has(flagship: Exercise, tmp_path: Path) -> None:
    teams = two_teams(flagship, tmp_path / "t")
    try:
        assert teams.folder is not None
        with pytest.raises(GroupError, match="no team 'green'"):
            read_group(teams.folder).team_folder("green")
        red = teams.host("red").folder
        lines = teams.join_lines()
        assert lines[0] == "team red:"
        assert re.match(rf"  \S*raceday join {re.escape(str(teams.folder))} --team red --as NAME",
                        lines[1]), lines[1]
        assert team_session(teams.folder, "red") == red
        assert team_session(red, "red") == red  # a team's own folder with its name will do
        with pytest.raises(GroupError, match="team red's session, not team blue's"):
            team_session(red, "blue")
        with pytest.raises(GroupError, match="--team NAME"):
            team_session(teams.folder, None)
    finally:
        teams.close()


__all__ = ["TEAM_ONLY"]


def test_raceday_host_headless_with_teams_prints_each_team_s_joins_and_a_leaderboard(
        tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "raceday", "host", "dynamodb-dns-race", "--headless",
         "--teams", "red,blue", "--seats", "responder", "--pace", "turns", "--transcripts",
         str(tmp_path / "t")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(8)]
    joins = [line.split() for line in lines if "raceday join" in line]
    assert [j[j.index("--team") + 1] for j in joins] == ["red", "blue"]
    group = Path(joins[0][2])
    assert read_group(group).exercise.endswith("dynamodb-dns-race")
    blue_token = joins[1][joins[1].index("--token") + 1]
    bob = Client(team_session(group, "blue"), blue_token, "Bob")
    assert bob.wait(bob.join()).status == "done"
    bob.close()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "[blue] 23:00  Bob joined as responder" in out
    board = out[out.index("Leaderboard"):].splitlines()
    assert board[1].split()[:2] == ["team", "score"]
    assert {row.split()[1] for row in board[2:4]} == {"red", "blue"}
    assert any("Bob" in row for row in board[2:4])


def test_one_team_of_a_group_resumes_as_that_team(flagship: Exercise, tmp_path: Path) -> None:
    """`raceday resume` on a team's folder: the host comes back as that team, so its players'
    commands (signed with the team's name) are taken again."""
    from raceday.team.start_host import resumed_host

    teams = two_teams(flagship, tmp_path / "t")
    bea = joined(teams, "blue", "enactor-a", "Bea")
    send(teams, bea, "sql", sql="SELECT 1")
    folder = teams.host("blue").folder
    for host in teams.hosts.values():
        host.need().close()  # the host was killed: nobody scored
    teams.close()
    bea.close()
    again = resumed_host(folder)
    try:
        assert again.team == "blue"
        bea2 = Client(folder, again.seats["enactor-a"].token, "Bea")
        joining = bea2.join()
        again.pump()
        bea2.wait(joining, timeout=5)
        command = bea2.submit("sql", {"sql": "SELECT 2"})
        again.pump()
        assert bea2.wait(command, timeout=5).status == "done"
        bea2.close()
    finally:
        again.close()
