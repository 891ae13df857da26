"""`raceday history`: each exercise's attempts over time, by team or by player, with a text
chart of the score and of the time to detect; and the best and last score the launcher shows.

Everything here reads `history.db` (brought up to date with the transcripts first); nothing
re-decides a score: the numbers are the ones scoring wrote into each session's score event.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from raceday.history.index import sync
from raceday.inert import inert

BAR = 20  # characters of a full bar
NO_TEAM = "(no names given)"


@dataclass(frozen=True)
class Attempt:
    """One finished session as the history shows it."""

    session: str
    exercise: str
    title: str
    started_at: str
    team: str
    players: tuple[str, ...]  # every name that played (empty when none was given)
    total: int
    max: int
    fault_occurred: bool
    detect_minutes: int | None
    scripted: bool = False  # a headless run of a play script, not a session people played
    team_name: str = ""  # the team's name, when a facilitator hosted several teams
    night: str = ""  # an unknown night's drawn night; "" when the night was the one told

    @property
    def team_words(self) -> str:
        """A named team's name ('red', whoever played in it); else who played ('Ana, Bo')."""
        return self.team_name or self.team or NO_TEAM


@dataclass(frozen=True)
class BestLast:
    """An exercise's best and last score, for the launcher."""

    best: int
    last: int
    max: int
    attempts: int

    @property
    def words(self) -> str:
        return f"best {self.best}/{self.max} · last {self.last}/{self.max}"


def load_attempts(root: Path, *, scripts: bool = False) -> tuple[list[Attempt], list[str]]:
    """Every attempt in `root`'s history, oldest first, and the warnings of indexing; a
    headless run of a script (`raceday run`) only with `scripts` (`history --all`)."""
    if not root.is_dir():  # nothing played here yet: create nothing either
        return [], []
    db, warnings = sync(root)
    try:
        players: dict[str, list[str]] = {}
        for row in db.query("SELECT session_id, player FROM people WHERE player != '' "
                            "ORDER BY session_id, player"):
            players.setdefault(row["session_id"], []).append(row["player"])
        attempts = [
            Attempt(session=r["id"], exercise=r["exercise"], title=r["title"],
                    started_at=r["started_at"] or "", team=r["team"] or "",
                    players=tuple(dict.fromkeys(players.get(r["id"], []))),
                    total=r["total"], max=r["max"], fault_occurred=bool(r["fault_occurred"]),
                    detect_minutes=r["detect_minutes"],
                    scripted=(r["origin"] or "") == "script",
                    team_name=r["team_name"] or "", night=r["night"] or "")
            for r in db.query("SELECT * FROM sessions ORDER BY started_at, id")
        ]
    finally:
        db.close()
    return [a for a in attempts if scripts or not a.scripted], warnings


def best_and_last(root: Path) -> dict[str, BestLast]:
    """exercise id -> its best and last score (exercises never played are absent)."""
    return best_and_last_of(load_attempts(root)[0])


def best_and_last_of(attempts: Sequence[Attempt]) -> dict[str, BestLast]:
    """best_and_last of attempts already read (the launcher also wants their order)."""
    out: dict[str, BestLast] = {}
    for exercise in dict.fromkeys(a.exercise for a in attempts):
        mine = [a for a in attempts if a.exercise == exercise]
        best = max(mine, key=lambda a: a.total / a.max if a.max else 0)
        out[exercise] = BestLast(best.total, mine[-1].total, mine[-1].max, len(mine))
    return out


def print_history(root: Path, out: Console, *, exercise: str | None = None,
                  player: str | None = None, by: str = "team", scripts: bool = False) -> int:
    """The whole report (see the module's docstring); one line when there is nothing yet.
    Headless runs of scripts are left out unless `scripts` (and then said to be there)."""
    everything, warnings = load_attempts(root, scripts=True)
    for warning in warnings:  # diagnostics to stderr; stdout carries the history
        sys.stderr.write(inert(f"raceday: warning: {warning}") + "\n")
    attempts = [a for a in everything if scripts or not a.scripted]
    left_out = len(everything) - len(attempts)
    if exercise is not None:
        attempts = [a for a in attempts if a.exercise == exercise]
    if player is not None:
        attempts = [a for a in attempts if player in a.players]
    more = (f" ({_plural(left_out, 'headless run')} of play scripts left out: --all shows "
            f"{'it' if left_out == 1 else 'them'})") if left_out else ""
    if not attempts:
        which = " ".join(filter(None, [f"of {exercise}" if exercise else "",
                                       f"by {player}" if player else ""]))
        out.print(inert(f"No finished sessions {which + ' ' if which else ''}in {root} yet"
                        + more + "."), markup=False, soft_wrap=True)
        return 0
    for exercise_id in dict.fromkeys(a.exercise for a in attempts):
        mine = [a for a in attempts if a.exercise == exercise_id]
        out.print(Text.assemble((inert(mine[-1].title), "bold"), f"  ({inert(exercise_id)}) · ",
                                _plural(len(mine), "attempt")))
        for who, group in _groups(mine, by):
            if by == "player" and player is not None and who != player:
                continue  # the others who played with them have their own history
            out.print(_chart(who, group, by))
        unknown = [a for a in mine if a.night]
        if unknown:
            out.print(_by_night(unknown))
        out.print()
    if more:
        out.print(inert(more.strip(" ()").capitalize() + "."), markup=False, soft_wrap=True)
    return 0


def _groups(attempts: Sequence[Attempt], by: str) -> list[tuple[str, list[Attempt]]]:
    """Attempts by team (the same names together) or by player (each name on its own)."""
    groups: dict[str, list[Attempt]] = {}
    for a in attempts:
        keys = (a.players or (NO_TEAM,)) if by == "player" else (a.team_words,)
        for key in keys:
            groups.setdefault(key, []).append(a)
    return list(groups.items())


def _chart(who: str, attempts: Sequence[Attempt], by: str) -> Table:
    longest = max((a.detect_minutes or 0 for a in attempts), default=0) or 1
    table = Table(title=inert(f"{by}: {who}"), title_justify="left", box=None,
                  pad_edge=False, show_edge=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("when (UTC)")
    table.add_column("score", no_wrap=True)
    table.add_column("", justify="right")
    table.add_column("time to detect", no_wrap=True)
    table.add_column("", justify="right")
    for n, a in enumerate(attempts, start=1):
        if not a.fault_occurred and a.night == "quiet":
            detect, minutes = Text("quiet night", style="green"), ""
        elif not a.fault_occurred:
            detect, minutes = Text("no fault (prevented)", style="green"), ""
        elif a.detect_minutes is None:
            detect, minutes = Text("never", style="red"), ""
        else:
            detect = _bar(a.detect_minutes, longest, "yellow")
            minutes = f"{a.detect_minutes} min"
        table.add_row(str(n), a.started_at[:16].replace("T", " "),
                      _bar(a.total, a.max, "cyan"), f"{a.total}/{a.max}", detect, minutes)
    return table


def _by_night(attempts: Sequence[Attempt]) -> Table:
    """Unknown nights: time to detect by kind of night, first and last, so a person sees
    detection improve on nights they were not told of."""
    table = Table(title="unknown nights: time to detect by night", title_justify="left",
                  box=None, pad_edge=False, show_edge=False)
    for name in ("night", "played", "detected", "first", "last", "best"):
        table.add_column(name, justify="left" if name == "night" else "right")
    for night in sorted(dict.fromkeys(a.night for a in attempts)):
        mine = [a for a in attempts if a.night == night]
        faulty = [a for a in mine if a.fault_occurred]
        seen = [a.detect_minutes for a in faulty if a.detect_minutes is not None]
        if not faulty:  # a quiet night (or one the team's guards kept away)
            table.add_row(inert(night), str(len(mine)), "no fault", "", "", "")
            continue
        table.add_row(inert(night), str(len(mine)), f"{len(seen)}/{len(faulty)}",
                      _minutes(faulty[0].detect_minutes), _minutes(faulty[-1].detect_minutes),
                      _minutes(min(seen) if seen else None))
    return table


def _minutes(value: int | None) -> str:
    return "never" if value is None else f"{value} min"


def _bar(value: int, full: int, style: str) -> Text:
    """A bar of `BAR` characters at most, in eighths; a non-zero value shows at least one."""
    eighths = round(BAR * 8 * max(value, 0) / full) if full > 0 else 0
    if value > 0:
        eighths = max(eighths, 1)
    text = "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]
    return Text(text.ljust(BAR), style=style)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
