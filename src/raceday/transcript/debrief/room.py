"""The after-action report for the room: several teams played the same exercise on one night
(`raceday host --teams`, `raceday run --team`), and the hot wash wants one report for all of
them (`raceday aar GROUP`).

Each team's part is its own debrief, built from its own transcript with what the room wrote
into its AAR (`load_debrief`): the objectives (the parts of the score) side by side, the
harms its customers saw over the night, its strengths and areas for improvement, and its
corrective actions, merged into one improvement plan for the room that names, on every row,
the teams it comes from. Nothing is decided here: every line is a team's debrief's, or a
harm's minutes as the team's transcript recorded them.

`room_render` writes it (`room_markdown`, `room_html`) and `room_render.room_command` writes
both into the group's folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from raceday.errors import RacedayError
from raceday.transcript import events as ev
from raceday.transcript.debrief.build import build_debrief
from raceday.transcript.debrief.expectations import MarkedObjective, objective_name
from raceday.transcript.debrief.files import with_edits
from raceday.transcript.debrief.model import Debrief
from raceday.transcript.log import read_events
from raceday.value import Value, frozen

ROOM_MD = "aar.md"
ROOM_HTML = "aar.html"
DAY = 24 * 60


@frozen
class HarmSpell(Value):
    """A harm's spell for one team: [start, end) in minutes since the clock's start;
    `open` when it still held as the transcript ends."""

    start: int
    end: int
    open: bool = False


@frozen
class TeamHarm(Value):
    """One harm (the exercise's invariant) as one team's customers saw it."""

    id: str
    words: str
    spells: tuple[HarmSpell, ...]

    @property
    def minutes(self) -> int:
        return sum(s.end - s.start for s in self.spells)


@frozen
class TeamPart(Value):
    """One team's part of the room's report: its debrief (None when its transcript cannot
    be read, and then `error` says why), its harms and when it left."""

    team: str
    folder: str
    """Its session folder (inside the group's: from there)."""
    debrief: Debrief | None
    error: str = ""
    harms: tuple[TeamHarm, ...] = ()
    end: int = 0
    """The last minute its transcript reached."""
    left: int | None = None
    """When it ended early (the automation played the rest of the night)."""
    players: str = ""
    origin: int = 0
    """Its clock at minute 0, in minutes after midnight (every team's is the same)."""
    zone: str = ""


@frozen
class RoomAction(Value):
    """A row of the room's improvement plan: a corrective action, and for each team it came
    from, what its AAR says (the origin, and the owner and dates the room gave it)."""

    action: str
    teams: tuple[tuple[str, str], ...]
    """(team, its row's origin, owner and dates in words)"""


@frozen
class RoomObjective(Value):
    """One objective (a part of the score) and each team's points and rating on it."""

    name: str
    cells: tuple[tuple[str, str], ...]  # (team, "30/30 P") ; "—" when the team has no score


@frozen
class RoomAar(Value):
    """The room's after-action report."""

    title: str
    exercise: str
    folder: str
    teams: tuple[TeamPart, ...]
    objectives: tuple[RoomObjective, ...]
    figures: tuple[RoomObjective, ...]
    actions: tuple[RoomAction, ...]
    origin: int
    """The night's clock at minute 0, in minutes after midnight."""
    end: int
    """The last minute any team's transcript reached."""
    zone: str = ""

    def time(self, minute: int) -> str:
        total = (self.origin + minute) % DAY
        return f"{total // 60:02d}:{total % 60:02d}"

    @property
    def harm_ids(self) -> tuple[tuple[str, str], ...]:
        """(id, words) of every harm any team saw, in the order they first began."""
        seen: dict[str, tuple[int, str]] = {}
        for part in self.teams:
            for harm in part.harms:
                first = harm.spells[0].start if harm.spells else 0
                if harm.id not in seen or first < seen[harm.id][0]:
                    seen[harm.id] = (first, seen.get(harm.id, (0, harm.words))[1])
        return tuple((i, w) for i, (_, w) in sorted(seen.items(), key=lambda kv: kv[1][0]))


def build_room(title: str, exercise: str, folder: Path,
               teams: Sequence[tuple[str, Path]]) -> RoomAar:
    """The room's report from each team's session folder."""
    parts = [replace(_team_part(name, path), folder=_shown(path, folder))
             for name, path in teams]
    first = next((p for p in parts if p.debrief is not None), None)
    origin, zone = (first.origin, first.zone) if first else (0, "")
    return RoomAar(title=title, exercise=exercise, folder=str(folder), teams=tuple(parts),
                   objectives=_objectives(parts), figures=_figures(parts),
                   actions=_actions(parts), origin=origin,
                   end=max((p.end for p in parts), default=0), zone=zone)


def _shown(path: Path, group: Path) -> str:
    """A team's session folder as the report names it: inside the group's, from there."""
    try:
        return str(path.relative_to(group))
    except ValueError:
        return str(path)


def _team_part(team: str, folder: Path) -> TeamPart:
    try:
        log = read_events(folder)
    except (RacedayError, OSError) as exc:
        return TeamPart(team, str(folder), None, error=str(exc).splitlines()[0])
    events = log.events
    try:
        debrief = with_edits(build_debrief(events, log.warning), folder)
    except RacedayError as exc:
        return TeamPart(team, str(folder), None, error=str(exc).splitlines()[0])
    end = max((e.minute for e in events), default=0)
    left = next((e.minute for e in events if isinstance(e, ev.TeamLeft)), None)
    players = ", ".join(f"{role} ({who})" for role, who in debrief.names) or ", ".join(
        debrief.summary.players)
    start = next((e for e in events if isinstance(e, ev.SessionStart)), None)
    origin = 0
    if start is not None:
        try:
            clock = datetime.fromisoformat(start.clock_start)
            origin = clock.hour * 60 + clock.minute
        except ValueError:
            pass
    return TeamPart(team, str(folder), debrief, harms=harms(events, end), end=end, left=left,
                    players=players, origin=origin, zone=start.zone if start else "")


def harms(events: Sequence[ev.Event], end: int) -> tuple[TeamHarm, ...]:
    """Each harm's spells from a transcript's `fault` and `invariant_clear` events, in the
    order they first began; a harm still holding at the end runs to `end`."""
    spells: dict[str, list[list[int]]] = {}
    words: dict[str, str] = {}
    holding: set[str] = set()
    for e in events:
        if isinstance(e, ev.Fault):
            words.setdefault(e.invariant, " ".join(e.fault.split()))
            if e.invariant not in holding:
                spells.setdefault(e.invariant, []).append([e.minute, e.minute])
                holding.add(e.invariant)
        elif isinstance(e, ev.InvariantClear) and e.invariant in holding:
            spells[e.invariant][-1][1] = e.minute
            holding.discard(e.invariant)
    return tuple(TeamHarm(i, words[i], tuple(
        HarmSpell(s, max(s, end) if i in holding and n == len(runs) - 1 else t,
                  open=i in holding and n == len(runs) - 1)
        for n, (s, t) in enumerate(runs))) for i, runs in spells.items())


def _rating(debrief: Debrief | None, name: str) -> str:
    if debrief is None:
        return "—"
    o = next((o for o in debrief.objectives if objective_name(o) == name), None)
    if o is None:
        return "—"
    marked = f" ({o.marked})" if isinstance(o, MarkedObjective) else ""
    return f"{o.points}/{o.max} {o.rating}{marked}"


def _objectives(parts: Sequence[TeamPart]) -> tuple[RoomObjective, ...]:
    names: list[str] = []
    for p in parts:
        for o in (p.debrief.objectives if p.debrief else ()):
            if objective_name(o) not in names:
                names.append(objective_name(o))
    rows = [RoomObjective(n, tuple((p.team, _rating(p.debrief, n)) for p in parts))
            for n in names]
    if names:
        rows.append(RoomObjective("total", tuple(
            (p.team, f"{p.debrief.score.total}/{p.debrief.score.max}"
             if p.debrief and p.debrief.score else "—") for p in parts)))
    return tuple(rows)


def _figures(parts: Sequence[TeamPart]) -> tuple[RoomObjective, ...]:
    """The times the score measured (time to alert, minutes of outage…), each team's beside
    the others' (and that night's, when the exercise compares with one)."""
    labels: list[str] = []
    night: dict[str, str] = {}
    for p in parts:
        for f in (p.debrief.score.figures if p.debrief and p.debrief.score else ()):
            if f.label not in labels:
                labels.append(f.label)
            if f.night:
                night.setdefault(f.label, f.night)
    rows = []
    for label in labels:
        cells = []
        for p in parts:
            figures = p.debrief.score.figures if p.debrief and p.debrief.score else ()
            cells.append((p.team, next((f.team for f in figures if f.label == label), "—")))
        if label in night:
            cells.append(("that night", night[label]))
        rows.append(RoomObjective(label, tuple(cells)))
    return tuple(rows)


def _actions(parts: Sequence[TeamPart]) -> tuple[RoomAction, ...]:
    """Every team's corrective actions, one row per action (teams that share it share the
    row), in the order they first appear."""
    rows: dict[str, list[tuple[str, str]]] = {}
    for p in parts:
        for a in (p.debrief.after_action.actions if p.debrief else ()):
            detail = "; ".join(x for x in (
                a.origin, f"issue: {a.issue}" if a.issue else "",
                f"owner: {a.owner}" if a.owner else "", f"start: {a.start}" if a.start else "",
                f"due: {a.due}" if a.due else "") if x)
            rows.setdefault(a.action, []).append((p.team, detail))
    return tuple(RoomAction(action, tuple(teams)) for action, teams in rows.items())
