"""Read an exercise folder into the frozen model, or say everything that is wrong with it.

An exercise is data written by people, so the loader is strict and talkative: every unknown
key, wrong type, dangling reference, impossible time and SQL that does not prepare becomes
one line `file:line: what is wrong`, and all of them are raised together as one
`ExerciseError`, so an author fixes a file in one pass instead of one error per run.

The exercise package knows no database: compiling the SQL against the world is a `SqlChecker`
the caller passes in (the store's, through `raceday.engine.load.load_exercise`).

This module reads the file as a whole; the parts are read by a chain of small readers, each
in its own module: reader.py (one node's fields, ids, times, SQL; references checked),
read_play.py (roles, statements, tasks, injects, hints), read_scoring.py (rubrics, replay,
practice nights), read_debrief.py (the debrief and what injects cite of it). fields.py holds
the format's keys; sql_check.py what a SQL checker gives back.
"""

from __future__ import annotations

from pathlib import Path

from raceday.errors import ExerciseError
from raceday.exercise import EXERCISE_FILE as EXERCISE_FILE  # re-exported: it was defined here
from raceday.exercise.customers import TABLE_NAME, CustomerTable, with_queries
from raceday.exercise.fields import BUILTIN_PARAMETERS, LEVELS
from raceday.exercise.model import OWN_WORDS, Exercise, Finding, Milestone
from raceday.exercise.read_debrief import DebriefReader
from raceday.exercise.reader import listed_ids
from raceday.exercise.rubric_text import expand_rubric
from raceday.exercise.sql_check import SqlChecker
from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located
from raceday.textfile import UnreadableText, read_text


def load_exercise(path: Path, *, sql_checker: SqlChecker | None = None) -> Exercise:
    """Load the exercise in folder `path` (or the `exercise.yaml` file itself).

    Raises `ExerciseError` with every problem found. Without `sql_checker` the SQL is not
    compiled against the world (a quick look, for listings); `raceday.engine.load` passes
    the store's.
    """
    path = Path(path)
    if path.is_dir():
        yaml_path = path / EXERCISE_FILE
    elif path.exists() or path.suffix in (".yaml", ".yml"):
        yaml_path = path
    else:
        raise ExerciseError([f"{path}: no such exercise folder or file"])
    try:
        text = read_text(yaml_path)
    except FileNotFoundError:
        raise ExerciseError([f"{yaml_path}: not found (an exercise folder holds {EXERCISE_FILE})"]) from None
    except UnreadableText as exc:
        where = f"{yaml_path}:{exc.line}" if exc.line is not None else str(yaml_path)
        raise ExerciseError([f"{where}: {exc.reason}"]) from None
    reader = _Reader(yaml_path, sql_checker=sql_checker)
    exercise = reader.read(text)
    if reader.problems or exercise is None:
        raise ExerciseError(reader.problems or [f"{yaml_path}:1: not an exercise"])
    return exercise


class _Reader(DebriefReader):
    """One pass over one exercise file, collecting problems instead of stopping at them."""

    # -- the file ----------------------------------------------------------------------

    def read(self, text: str) -> Exercise | None:
        try:
            root, yaml_problems = load_located(text)
        except YamlSyntaxError as exc:
            self.problem(exc.line, f"YAML syntax error: {exc.message}")
            return None
        for line, message in yaml_problems:
            self.problem(line, message)
        if root is None:
            self.problem(1, "the file is empty")
            return None
        top = self.fields(root, "exercise", "the exercise")
        if top is None:
            return None
        what = "the exercise"
        ident = self.ident(top, "id", what)
        folder_name = self.folder.resolve().name
        if ident and ident != folder_name:
            self.problem(top["id"].line, f'id "{ident}" must equal the folder name "{folder_name}"')
        title = self.text(top, "title", what, empty=False)
        summary = self.text(top, "summary", what, empty=False)
        length = self.duration(top, "length", what, positive=True) or 0
        level = self.choice(top, "level", what, LEVELS, "")
        default_roles = self.refs_list(top, "default_roles", what, "role")
        clock = self.clock(top)
        roles = tuple(self.role(f, i) for f, i, _l in self.items(top, "roles", "role", "roles"))
        if "roles" in top and not roles and isinstance(top["roles"].value, list):
            self.problem(top["roles"].line, "roles must name at least one role")
        statements = tuple(
            self.statement(f, i, line)
            for f, i, line in self.items(top, "statements", "statement", "statements")
        )
        tasks = tuple(self.task(f, i, line) for f, i, line in self.items(top, "tasks", "task", "tasks"))
        injects = tuple(
            self.inject(f, i, line) for f, i, line in self.items(top, "injects", "inject", "injects")
        )
        invariants = tuple(
            self.invariant(f, i, line)
            for f, i, line in self.items(top, "invariants", "invariant", "invariants")
        )
        milestones = tuple(
            Milestone(
                id=i,
                label=self.text(f, "label", f'milestone "{i}"', empty=False),
                sql=self.sql_text(f, self.spelled(f, "milestone", "when"), f'milestone "{i}"'),
                line=line,
                again=self.boolean(f, "again", f'milestone "{i}"'),
            )
            for f, i, line in self.items(top, "milestones", "milestone", "milestones")
        )
        self.customers = self.customer_tables(top)
        evidence_lines: dict[str, int] = {}  # finding id -> the line of its evidence
        found: list[Finding] = []
        for f, i, line in self.items(top, "findings", "finding", "findings"):
            found.append(Finding(
                id=i,
                text=self.text(f, "text", f'finding "{i}"', empty=False),
                correct=self.boolean(f, "correct", f'finding "{i}"'),
                explanation=self.text(f, "explanation", f'finding "{i}"'),
                evidence=self.text(f, "evidence", f'finding "{i}"') or None,
                line=line,
            ))
            evidence_lines[i] = f["evidence"].line if "evidence" in f else line
            if i == OWN_WORDS:
                self.problem(line, f'finding "{i}": the id is reserved for a finding in a '
                             "player's own words; give this one another id")
        findings = tuple(found)
        hints, tasks = self.hints(top, tasks)
        scoring = self.scoring(top, tasks)
        replay = self.replay(top)
        debrief = self.debrief(top)
        self.check_cited(debrief)
        truth = self.truth(top)
        panel = self.panel(top)
        evidence_ids = {i.id for i in invariants} | {
            s.id for s in (scoring.guards.steps if scoring.guards else ())}
        for finding in findings:
            if finding.evidence is not None and finding.evidence not in evidence_ids:
                self.problem(evidence_lines.get(finding.id, finding.line or 1),
                             f'finding "{finding.id}": evidence "{finding.evidence}" is neither '
                             f"an invariant nor a race step{listed_ids(evidence_ids, 'ids')}")
        self.check_refs()
        world_file = self.text(top, "world", what, empty=False)
        briefing_file = self.text(top, "briefing", what, empty=False)
        world_sql = self.read_file(top, "world", world_file)
        briefing = self.read_file(top, "briefing", briefing_file)
        if briefing is not None and scoring is not None:  # its points are the rubric's
            where = self.folder / briefing_file
            briefing = expand_rubric(briefing, scoring, lambda line, message: self.problems.append(
                f"{where}:{line}: {message}"))
        if world_sql is not None and self.sql_checker is not None:
            self.prepare(self.sql_checker, world_file, world_sql)
        if clock is None:
            return None
        return Exercise(
            id=ident,
            title=title,
            summary=summary,
            length=length,
            level=level,
            clock=clock,
            world_sql=world_sql or "",
            roles=roles,
            statements=statements,
            tasks=tasks,
            injects=injects,
            invariants=invariants,
            milestones=milestones,
            customers=self.customers,
            findings=findings,
            hints=hints,
            scoring=scoring,
            briefing=briefing or "",
            default_roles=default_roles,
            replay=replay,
            debrief=debrief,
            truth=truth,
            panel=panel,
            path=self.yaml_path.resolve(),
            moved=tuple(self.moved),
        )

    def customer_tables(self, top: dict[str, Located]) -> tuple[CustomerTable, ...]:
        """The customers' view's tables: each a plain SQL name and the query that reads it."""
        tables = []
        for f, name, line in self.items(top, "customers", "customer_table", "customers"):
            what = f'customer table "{name}"'
            if not TABLE_NAME.match(name):
                self.problem(f["id"].line, f"{what}: the name must be a plain SQL name "
                             "(lower-case letters, digits and _), as checks write it")
            tables.append(CustomerTable(name=name, sql=self.sql_text(f, "from", what),
                                        line=line))
        return tuple(tables)

    # -- across the file ---------------------------------------------------------------

    def read_file(self, top: dict[str, Located], key: str, name: str) -> str | None:
        if not name:
            return None
        line = top[key].line
        target = self.folder / name
        try:
            inside = target.resolve().is_relative_to(self.folder.resolve())
        except OSError:
            inside = False
        if Path(name).is_absolute() or not inside:
            self.problem(line, f'"{key}" must name a file inside the exercise folder, not "{name}"')
            return None
        try:
            return read_text(target)
        except FileNotFoundError:
            self.problem(line, f'{key} file "{name}" not found in {self.folder}')
        except UnreadableText as exc:
            if exc.line is not None:
                self.problems.append(f"{self.folder / name}:{exc.line}: {exc.reason}")
            else:
                self.problem(line, f'{key} file "{name}" is {exc.reason}')
        return None

    def prepare(self, sql_checker: SqlChecker, world_name: str, world_sql: str) -> None:
        """Report SQL that does not prepare, and parameters nothing will bind.

        The engine binds :now, :now_hhmm and the values tasks remember to automation SQL
        (statements, `when`, `done_when`), race steps' `happened` (also :failed, :rowcount)
        and good paths; invariants, milestones and examples run without parameters. An
        unknown name would silently be NULL at play, so it is reported here.
        """
        items = [(str(index), with_queries(entry.sql, self.customers))
                 for index, entry in enumerate(self.sql)]
        result = sql_checker(world_sql, items)
        if result.world_error is not None:
            line, message = result.world_error
            self.problems.append(f"{self.folder / world_name}:{line}: {message}")
            return
        for prepared in result.items:
            entry = self.sql[int(prepared.label)]
            if prepared.error is not None:
                self.problem(
                    entry.line,
                    f'{entry.what}: "{entry.key}" does not prepare against {world_name}: {prepared.error}',
                )
                continue
            if not prepared.parameters:
                continue
            names = ", ".join(f":{name}" for name in prepared.parameters)
            if entry.parameters is None:
                self.problem(
                    entry.line,
                    f'{entry.what}: "{entry.key}" uses {names}, but it runs without parameters',
                )
                continue
            roles = self.roles_running(entry.runs_as)
            bound = set(BUILTIN_PARAMETERS) | set(entry.parameters)
            if roles:
                bound |= set.intersection(*(self.remembered.get(r, set()) for r in roles))
            else:  # a dangling reference, reported already: be lenient
                bound |= set().union(*self.remembered.values())
            unknown = [name for name in prepared.parameters if name not in bound]
            if unknown:
                names = ", ".join(f":{name}" for name in unknown)
                known = ", ".join(f":{name}" for name in sorted(bound))
                who = f"role {roles[0]}" if len(roles) == 1 else f"roles {', '.join(roles)}"
                self.problem(
                    entry.line,
                    f'{entry.what}: "{entry.key}" uses {names}, which no task of {who} '
                    f"remembers (bound: {known})",
                )

    def roles_running(self, runs_as: tuple[str, str]) -> list[str]:
        """The roles whose remembered values SQL is run with (the engine keeps them by role)."""
        kind, ident = runs_as
        if kind == "statement":
            users = self.statement_users.get(ident) or {self.statement_roles.get(ident, "")}
        elif kind == "task":
            users = {self.task_roles.get(ident, "")}
        elif kind == "role":
            users = {ident}
        else:
            users = set()
        return sorted(role for role in users if role in self.ids["role"])
