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


def test_raceday_run_team_unknown_plays_the_night_and_says_it(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    script = (Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
              / "scripts" / "nothing.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "raceday", "run", "dynamodb-dns-race", "--script", str(script),
         "--team", "--json", "--unknown", "--night", "quiet", "--transcripts", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["night"]["id"] == "quiet"
    assert result["fault"]["outcome"] == "quiet night"
