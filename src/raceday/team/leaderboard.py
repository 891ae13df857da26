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
    clock: str = ""
    """The team's clock as its transcript last says it."""
    hurt_since: str | None = None
    """When the customers' harm began, while it lasts (None: service normal)."""
    left_at: str | None = None
    """When the team left (ended early): the automation played the rest of the night."""
    outage_after_left: int = 0
    """Minutes of outage that came after the team left (in the score's outage, not theirs)."""
    lobby: bool = False
    """The night has not started: the facilitator holds the clock in the lobby."""
    ready: int = 0
    """In the lobby: how many of the team's players said they are ready."""

    @property
    def phase(self) -> str:
        if self.lobby:
            return f"in the lobby, {self.ready} of {len(self.players)} ready"
        if self.left_at is not None and self.score is None:
            return f"left at {self.left_at}"
        if self.hurt_since is not None:
            return f"customers hurt since {self.hurt_since}"
        return "service normal" if self.clock else "not started"

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
    hurt: tuple[int, str] | None = None  # since (minute, clock face)
    spells: list[tuple[int, int]] = []
    left: tuple[int, str] | None = None
    last_minute = 0
    started = False
    ready: set[str] = set()
    for event in events:
        last_minute = max(last_minute, event.minute)
        if isinstance(event, ev.Fault) and hurt is None:
            hurt = (event.minute, event.sim_time)
        elif isinstance(event, ev.Restored) and hurt is not None:
            spells.append((hurt[0], event.minute))
            hurt = None
        elif isinstance(event, ev.TeamLeft) and left is None:
            left = (event.minute, event.sim_time)
        if isinstance(event, ev.Facilitation) and event.action == "start":
            started = True
        elif isinstance(event, ev.SeatReady):
            (ready.add if event.ready else ready.discard)(event.seat)
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
    if hurt is not None:
        spells.append((hurt[0], last_minute))
    after = sum(max(0, end - max(start, left[0])) for start, end in spells) if left else 0
    clock = events[-1].sim_time if events else ""
    return Standing(team, folder, tuple(players.values()), statements, declarations,
                    tuple(lost.values()), score, clock=clock,
                    hurt_since=hurt[1] if hurt is not None else None,
                    left_at=left[1] if left is not None else None, outage_after_left=after,
                    lobby=not started and last_minute == 0 and score is None,
                    ready=len(ready))


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
            busy = (f"{f'playing {row.clock}, {row.phase}' if row.clock else 'playing'}: "
                    f"{row.statements} "
                    f"statement{'s' * (row.statements != 1)}, {row.declarations} declared")
            if row.lost_seats:
                busy += f", lost: {', '.join(row.lost_seats)}"
            lines.append(f"{'':>2}  {name:<12} {'—':>7}  {inert(busy, one_line=True)}  [{who}]")
            continue
        place = 1 + sum(1 for key in scored if key < row.rank_key()[:4])  # ties share it
        outage = score.recovery.outage_minutes if score.recovery else None
        left = ""
        if row.left_at is not None:
            left = (f"  (left at {row.left_at}; {row.outage_after_left} min of it after)"
                    if row.outage_after_left else f"  (left at {row.left_at})")
        lines.append(
            f"{place:>2}. {name:<12} {score.total:>3}/{score.max:<3}  "
            f"{_points(score.detection):>6} {_points(score.guards):>6} "
            f"{_points(score.recovery):>7}  "
            f"{(f'{outage} min' if outage is not None else '—'):>7}  {who}{left}")
    return lines


def _points(part: vd.Detection | vd.Guards | vd.Recovery | None) -> str:
    return "—" if part is None else f"{part.points}/{part.max}"
