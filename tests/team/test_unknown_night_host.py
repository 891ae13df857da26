"""`raceday host --unknown`: a team session on a night the seats are not told."""

from __future__ import annotations

from pathlib import Path

from raceday.team.start_host import build_host
from raceday.transcript import events as ev
from raceday.transcript.log import read_events


def test_a_hosted_unknown_night_plays_the_picked_night_and_tells_it_at_the_end(
        tmp_path: Path) -> None:
    host = build_host("dynamodb-dns-race", "responder", "turns", None, tmp_path,
                      night="empty-plan")
    assert host.night is not None and host.night.night == "empty-plan"
    host.start()
    try:
        score = host.end()
    finally:
        host.close()
    events = read_events(host.folder).events
    start = events[0]
    assert isinstance(start, ev.SessionStart) and start.unknown == host.night.seed
    revealed = [e for e in events if isinstance(e, ev.NightRevealed)]
    assert [r.night for r in revealed] == ["empty-plan"]
    assert score.score.fault.started_at == revealed[0].began_at is not None
    joined = (host.folder / "join.txt")
    if joined.exists():  # the seats' join lines never name the night
        assert "empty-plan" not in joined.read_text() and "no records" not in joined.read_text()
