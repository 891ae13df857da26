"""The leaderboard's order: total first, then fewer minutes of outage, then the earlier
detection; equal teams share a place; teams still playing come last and are not ranked."""

from __future__ import annotations

from pathlib import Path

from raceday.team.leaderboard import Standing, leaderboard_lines
from raceday.transcript import verdicts as vd


def scored(team: str, total: int, outage: int | None, latency: int | None) -> Standing:
    score = vd.Score(total=total, max=100,
                     detection=vd.Detection(points=0, max=30, latency_minutes=latency),
                     recovery=vd.Recovery(points=0, max=30, outage_minutes=outage))
    return Standing(team, Path(team), players=(f"{team}-player",), score=score)


def places(rows: list[Standing]) -> list[tuple[str, str]]:
    lines = leaderboard_lines(sorted(rows, key=Standing.rank_key))[1:]
    return [(line[:3].strip(), line[4:16].strip()) for line in lines]


def test_total_then_outage_then_detection_and_ties_share_a_place() -> None:
    rows = [scored("slow", 60, 40, 5), scored("fast", 60, 10, 30), scored("best", 90, 80, 50),
            scored("twin-a", 20, 100, 9), scored("twin-b", 20, 100, 9),
            Standing("late", Path("late"), players=("x",), statements=3)]
    assert places(rows) == [("1.", "best"), ("2.", "fast"), ("3.", "slow"),
                            ("4.", "twin-a"), ("4.", "twin-b"), ("", "late")]
    playing = leaderboard_lines([rows[-1]])[1]
    assert "playing: 3 statements, 0 declared" in playing and "[x]" in playing


def test_the_leaderboard_shows_each_teams_clock_and_phase_and_the_outage_after_it_left(
        tmp_path: Path) -> None:
    from raceday.engine.clock import Pace
    from raceday.engine.load import load_named_exercise
    from raceday.team.group import Teams, TeamSpec, read_group
    from raceday.team.leaderboard import standings
    from raceday.team.seats import SeatSpec

    flagship = load_named_exercise("dynamodb-dns-race")
    seats = (SeatSpec("responder", "responder"),)
    group = Teams(flagship, [TeamSpec("red", seats), TeamSpec("blue", seats)],
                  transcripts=tmp_path, pace=Pace.TURNS)
    folder = group.start()
    group.advance_to(10)
    playing = {r.team: r for r in standings(read_group(folder))}
    assert playing["red"].clock == "23:10" and playing["red"].phase == "service normal"
    line = next(x for x in leaderboard_lines(list(playing.values())) if " red " in x)
    assert "playing 23:10, service normal: 0 statements" in line
    group.hosts["red"].end("the team left")  # at 23:10: the night plays itself out
    group.hosts["blue"].advance_to(70)  # past the fault: the customers are hurt
    blue = {r.team: r for r in standings(read_group(folder))}["blue"]
    assert blue.hurt_since is not None and blue.phase.startswith("customers hurt since ")
    red = {r.team: r for r in standings(read_group(folder))}["red"]
    assert red.score is not None and red.score.recovery is not None
    outage = red.score.recovery.outage_minutes
    assert red.left_at == "23:10" and outage and red.outage_after_left == outage
    [red_line] = [x for x in leaderboard_lines([red]) if " red " in x]
    assert f"(left at 23:10; {outage} min of it after)" in red_line
    group.end()
    group.close()


def test_the_leaderboard_says_a_team_waits_in_the_lobby_and_how_many_are_ready(
        tmp_path: Path) -> None:
    from team_fixtures import send

    from raceday.engine.clock import Pace
    from raceday.engine.load import load_named_exercise
    from raceday.team.client import Client
    from raceday.team.group import Teams, TeamSpec, read_group
    from raceday.team.leaderboard import standings
    from raceday.team.seats import SeatSpec

    flagship = load_named_exercise("dynamodb-dns-race")
    seats = (SeatSpec("responder", "responder"), SeatSpec("enactor-b", "enactor-b"))
    group = Teams(flagship, [TeamSpec("red", seats), TeamSpec("blue", seats)],
                  transcripts=tmp_path, pace=Pace.LIVE, lobby=True)
    folder = group.start()
    red = group.hosts["red"]
    for seat, name in (("responder", "Rita"), ("enactor-b", "Bo")):
        client = Client(red.folder, red.seats[seat].token, name)
        command = client.join()
        group.pump()
        client.wait(command)
        if seat == "responder":
            assert send(red, client, "ready").status == "done"
    rows = {r.team: r for r in standings(read_group(folder))}
    assert rows["red"].phase == "in the lobby, 1 of 2 ready"
    line = next(x for x in leaderboard_lines(list(rows.values())) if " red " in x)
    assert "in the lobby, 1 of 2 ready" in line
    group.start_clock()
    group.hosts["red"].advance_to(5)
    assert {r.team: r for r in standings(read_group(folder))}["red"].phase == "service normal"
    group.end()
    group.close()
