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
