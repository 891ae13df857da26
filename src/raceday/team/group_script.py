"""Play several teams' scripts through one facilitator's host, as `raceday run --team` does
with a teams file:

    exercise: dynamodb-dns-race
    teams:
      red: red.yaml        # a play script (with `seats:` or `roles:`), beside this file
      blue: blue.yaml

Every team gets its own world, transcript, seats and clients; the steps of all teams are
taken in the order of the clock (the earliest next step first), so the teams play at once
on one night. Each team's transcript is the headless play of its own script, seats aside.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raceday.engine.clock import Pace
from raceday.engine.headless import DEFAULT_TRANSCRIPTS, minute_of
from raceday.engine.script import Script, Step, load_script
from raceday.engine.session import Session
from raceday.errors import ScriptError
from raceday.exercise.model import Exercise
from raceday.exercise.yaml_lines import YamlSyntaxError, load_located
from raceday.team.group import GroupError, Teams, TeamSpec, team_names
from raceday.team.host import Host
from raceday.team.script import TeamPlay, script_seats
from raceday.team.yaml_file import YamlFileError, beside, read_mapping
from raceday.textfile import UnreadableText, read_text

_log = logging.getLogger(__name__)
_KEYS = {"exercise", "teams", "description"}


@dataclass(frozen=True)
class TeamsFile:
    path: Path
    scripts: tuple[tuple[str, Script], ...]


def is_teams_file(path: Path) -> bool:
    """A YAML mapping with `teams:` at the top (a play script has `steps:`)."""
    try:
        root, _ = load_located(read_text(path))
    except (OSError, UnreadableText, YamlSyntaxError):
        return False
    return root is not None and root.is_mapping and "teams" in root.value


def load_teams_file(path: Path, exercise: Exercise) -> TeamsFile:
    """Read a teams file and every script it names; problems are `file:line: what`."""
    problems: list[str] = []
    try:
        top, yaml_problems = read_mapping(path, "teams file", "teams")
    except YamlFileError as exc:
        raise ScriptError([str(exc)]) from None
    problems += [f"{path}:{line}: {message}" for line, message in yaml_problems]
    for key, node in top.items():
        if key not in _KEYS:
            problems.append(f"{path}:{node.line}: unknown key '{key}' (expected one of: "
                            f"{', '.join(sorted(_KEYS))})")
    if "exercise" in top and str(top["exercise"].plain_value()) != exercise.id:
        problems.append(f"{path}:{top['exercise'].line}: this file is for exercise "
                        f"'{top['exercise'].plain_value()}', not '{exercise.id}'")
    teams = top["teams"]
    scripts: list[tuple[str, Script]] = []
    if not teams.is_mapping or not teams.value:
        problems.append(f"{path}:{teams.line}: teams maps a team's name to its play script")
    else:
        try:
            team_names(",".join(teams.value))
        except GroupError as exc:
            problems.append(f"{path}:{teams.line}: {str(exc).removeprefix('--teams: ')}")
        for name, node in teams.value.items():
            if not isinstance(node.value, str) or not node.value.strip():
                problems.append(f"{path}:{node.line}: team {name}: the path of a play script")
                continue
            try:  # a script in the teams file's folder, and a play script, or not read
                script = beside(path.parent, node.value.strip(), *_reference_plays(exercise))
                read_mapping(script, "play script", "steps")
                scripts.append((name, load_script(script, exercise)))
            except YamlFileError as exc:
                problems.append(f"{path}:{node.line}: team {name}: {exc}")
            except ScriptError as exc:
                problems += [f"{path}:{node.line}: team {name}: {p}" for p in exc.problems]
    if problems:
        raise ScriptError(problems)
    return TeamsFile(path, tuple(scripts))


def _reference_plays(exercise: Exercise) -> tuple[Path, ...]:
    """The exercise's own scripts: a teams file may name them wherever it sits."""
    return (exercise.folder / "scripts",) if exercise.folder is not None else ()


class GroupPlay:
    """A group's host pumping in a thread, and every team's seats as clients."""

    def __init__(self, exercise: Exercise, teams: TeamsFile,
                 transcripts: Path = DEFAULT_TRANSCRIPTS) -> None:
        self.teams = Teams(exercise, [TeamSpec(name, tuple(script_seats(exercise, script)))
                                      for name, script in teams.scripts],
                           transcripts=transcripts, pace=Pace.TURNS)
        self.folder = self.teams.start()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self.teams.run, args=(self._stop,),
                                        name="raceday-teams", daemon=True)
        self._thread.start()
        self.plays = {name: TeamPlay(exercise, [], host=host, pumping=self._thread)
                      for name, host in self.teams.hosts.items()}

    def finish(self, reason: str = "ended") -> None:
        for play in self.plays.values():
            if not play.host.ended:
                play.finish(reason)
        self._stop.set()
        self._thread.join(timeout=60)
        self.teams.close()


def _due(play: TeamPlay, step: Step, where: str) -> int:
    """The minute a team's next step happens at (now, unless it says `at:`)."""
    at = step.at

    def minute(session: Session) -> int:
        return minute_of(at, session, where) if at is not None else session.minute

    return play.facilitate(minute)


def _to_the_end(host: Host) -> Callable[[Session], None]:
    return lambda session: host.advance_to(session.end_minute)


def run_group_script(exercise: Exercise, teams: TeamsFile,
                     transcripts: Path = DEFAULT_TRANSCRIPTS) -> GroupPlay:
    """Play every team's script at once on one host, then score each team."""
    group = GroupPlay(exercise, teams, transcripts)
    scripts = dict(teams.scripts)
    left = {name: list(script.steps) for name, script in teams.scripts}
    try:
        while left:
            due = {}
            for name, steps in left.items():
                where = f"{scripts[name].path}:{steps[0].line}"
                due[name] = _due(group.plays[name], steps[0], where)
            name = min(due, key=lambda n: (due[n], list(scripts).index(n)))
            play, step = group.plays[name], left[name].pop(0)
            if step.action == "end":
                play.finish("ended")
                del left[name]
                continue
            play.play(step, f"{scripts[name].path}:{step.line}")
            if not left[name]:
                del left[name]
        for play in group.plays.values():  # the rest of the night, as a headless run plays it
            if not play.host.ended:
                play.facilitate(_to_the_end(play.host))
    except BaseException:
        _log.exception("the teams file %s stopped", teams.path)
        group.finish("aborted")
        raise
    group.finish()
    return group
