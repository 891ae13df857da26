"""The leaderboard of a group of teams: each team's standing, read from its own transcript.

While the night runs it says only what the room may know (who plays, how busy each team
is, whether it has declared); once a team is scored, its total and the parts of it.
Ranked by total, then fewer minutes of outage, then the earlier detection; teams equal on
all three share a place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raceday.errors import RacedayError
from raceday.inert import inert
from raceday.team.group import GroupInfo
from raceday.transcript import events as ev
from raceday.transcript import verdicts as vd
from raceday.transcript.log import read_events


@dataclass(frozen=True)
class Standing:
    team: str
    folder: Path
    players: tuple[str, ...] = ()
    statements: int = 0
    declarations: int = 0
    lost_seats: tuple[str, ...] = ()
    score: vd.Score | None = None
    error: str | None = None

    @property
    def ended(self) -> bool:
        return self.score is not None

    def rank_key(self) -> tuple[int, int, int, int, str]:
        score = self.score
        if score is None:
            return (1, 0, 0, 0, self.team)
        outage = score.recovery.outage_minutes if score.recovery else None
        latency = score.detection.latency_minutes if score.detection else None
        return (0, -score.total, outage if outage is not None else 0,
                latency if latency is not None else 10_000, self.team)


def standing(team: str, folder: Path) -> Standing:
    """One team's standing from its events (a team whose log cannot be read says why)."""
    try:
        events = read_events(folder).events
    except (RacedayError, OSError) as exc:
        return Standing(team, folder, error=str(exc).splitlines()[0])
    players: dict[str, str] = {}
    lost: dict[str, str] = {}
    statements = declarations = 0
    score: vd.Score | None = None
    for event in events:
        if isinstance(event, ev.SeatJoined):
            players[event.seat] = event.player
            lost.pop(event.seat, None)
        elif isinstance(event, ev.SeatLost):
            lost[event.seat] = event.player
        elif isinstance(event, ev.Statement) and not event.automated:
            statements += 1
        elif isinstance(event, ev.Declaration):
            declarations += 1
        elif isinstance(event, ev.ScoreEvent):
            score = event.score
    return Standing(team, folder, tuple(players.values()), statements, declarations,
                    tuple(lost.values()), score)


def standings(group: GroupInfo) -> list[Standing]:
    """Every team of the group, best first (teams still playing last, by name)."""
    return sorted((standing(name, folder) for name, folder in group.teams),
                  key=Standing.rank_key)


def leaderboard_lines(rows: list[Standing]) -> list[str]:
    """The leaderboard as plain lines (the console, `raceday host` and `watch` show them)."""
    lines = [f"{'':>2}  {'team':<12} {'score':>7}  {'detect':>6} {'guards':>6} "
             f"{'recover':>7}  {'outage':>7}  players"]
    scored = [r.rank_key()[:4] for r in rows if r.score is not None]
    for row in rows:
        who = inert(", ".join(row.players) or "nobody yet", one_line=True)
        name = inert(row.team, one_line=True)[:12]
        if row.error is not None:
            lines.append(f"{'':>2}  {name:<12} {'?':>7}  {inert(row.error, one_line=True)}")
            continue
        score = row.score
        if score is None:
            busy = (f"playing: {row.statements} statement{'s' * (row.statements != 1)}, "
                    f"{row.declarations} declared")
            if row.lost_seats:
                busy += f", lost: {', '.join(row.lost_seats)}"
            lines.append(f"{'':>2}  {name:<12} {'—':>7}  {inert(busy, one_line=True)}  [{who}]")
            continue
        place = 1 + sum(1 for key in scored if key < row.rank_key()[:4])  # ties share it
        outage = score.recovery.outage_minutes if score.recovery else None
        lines.append(
            f"{place:>2}. {name:<12} {score.total:>3}/{score.max:<3}  "
            f"{_points(score.detection):>6} {_points(score.guards):>6} "
            f"{_points(score.recovery):>7}  "
            f"{(f'{outage} min' if outage is not None else '—'):>7}  {who}")
    return lines


def _points(part: vd.Detection | vd.Guards | vd.Recovery | None) -> str:
    return "—" if part is None else f"{part.points}/{part.max}"
