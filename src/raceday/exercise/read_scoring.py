"""Reading how a night is judged: the scoring rubrics, the replay and its shifted race,
practice nights and the truth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from raceday.exercise.fields import HAPPENED_PARAMETERS
from raceday.exercise.model import (
    HARM_GRADES,
    PRACTICE_BASELINES,
    QUIET_NIGHT,
    RACE_NIGHT,
    DetectionRubric,
    FamilyNight,
    GoodPath,
    GuardsRubric,
    HarmWorth,
    NightsSpec,
    PracticeChange,
    PracticeNight,
    RaceStep,
    RecoveryItem,
    RecoveryRubric,
    ReplaySpec,
    SafetyNet,
    Scoring,
    ShiftSpec,
    Task,
    Truth,
    TruthView,
)
from raceday.exercise.read_play import PlayReader
from raceday.exercise.reader import Ref, SqlUse, describe
from raceday.exercise.times import parse_hhmm
from raceday.exercise.yaml_lines import Located


class ScoringReader(PlayReader):
    """Scoring, replay, practice nights, truth, detection, guards, harms, recovery."""

    # -- scoring -----------------------------------------------------------------------

    def scoring(self, top: dict[str, Located], tasks: tuple[Task, ...]) -> Scoring:
        task_points = sum(task.points for task in tasks)
        node = top.get("scoring")
        if node is None:
            return Scoring(tasks=task_points)
        m = self.fields(node, "scoring", "scoring")
        if m is None:
            return Scoring(tasks=task_points)
        total = self.integer(m, "tasks", "scoring", default=task_points)
        if "tasks" in m and total != task_points:
            self.problem(
                m["tasks"].line,
                f'scoring: "tasks" is {total} but the tasks\' points add up to {task_points}',
            )
        return Scoring(
            detection=self.detection(m),
            guards=self.guards(m),
            recovery=self.recovery(m),
            tasks=total,
        )

    def replay(self, top: dict[str, Located]) -> ReplaySpec | None:
        node = top.get("replay")
        if node is None:
            return None
        m = self.fields(node, "replay", "replay")
        if m is None:
            return None
        delayed = self.refs_list(m, "delayed", "replay", "task")
        practice = tuple(self.practice_night(f, i, line, delayed) for f, i, line
                         in self.items(m, "practice", "practice_night", "replay: practice"))
        return ReplaySpec(
            until=self.clock_time(m, "until", "replay"),
            delayed=delayed,
            normal=self.refs_list(m, "normal", "replay", "task"),
            shifted=self.shifted(m),
            practice=practice,
            practice_baselines=self.choice(m, "practice_baselines", "replay",
                                           PRACTICE_BASELINES, "per-variant"),
            nights=self.nights(m, {n.id for n in practice}),
        )

    def nights(self, replay: dict[str, Located], practice: set[str]) -> NightsSpec | None:
        """The family an unknown session draws from: "race", "quiet" or a practice night's
        id, each with a weight and how much later its fault may come."""
        node = replay.get("nights")
        if node is None:
            return None
        what = "replay: nights"
        m = self.fields(node, "nights", what)
        if m is None:
            return None
        draw = m.get("draw")
        if draw is None or not isinstance(draw.value, list) or not draw.value:
            self.problem((draw or node).line, f'{what}: "draw" must be a list of nights, not '
                         f"{describe(draw) if draw is not None else 'missing'}")
            return None
        known = [RACE_NIGHT, QUIET_NIGHT, *sorted(practice)]
        family: list[FamilyNight] = []
        seen: set[str] = set()
        for index, item in enumerate(draw.value, start=1):
            where = f"{what}: draw item {index}"
            f = self.fields(item, "family_night", where)
            if f is None or "night" not in f:
                continue
            night = f["night"].value
            if not isinstance(night, str) or night not in known:
                self.problem(f["night"].line, f'{where}: night "{night}" is none of '
                             f"{', '.join(known)} (a practice night's id, or race or quiet)")
                continue
            if night in seen:
                self.problem(f["night"].line, f'{where}: night "{night}" is drawn twice')
                continue
            seen.add(night)
            weight = self.integer(f, "weight", where, default=1)
            if weight < 1:
                self.problem(f["weight"].line, f"{where}: weight must be 1 or more, not {weight}")
                weight = 1
            later = None
            if "later" in f:
                if night == QUIET_NIGHT:
                    self.problem(f["later"].line, f'{where}: a quiet night has no fault to move '
                                 'later: leave out "later"')
                else:
                    def lateness(n: Located, t: str = night, w: str = where) -> int | None:
                        return self.duration({t: n}, t, f"{w}: later")

                    span = self._range(f["later"], f"{where}: later", lateness, stepped=True)
                    if span is not None:
                        later = (span[0], span[1], span[2] if len(span) == 3 else 1)
            family.append(FamilyNight(night=night, weight=weight, later=later, line=item.line))
        if not family:
            return None
        return NightsSpec(family=tuple(family), situation=self.text(m, "situation", what))

    def practice_night(self, m: dict[str, Located], ident: str, line: int,
                       delayed: tuple[str, ...] = ()) -> PracticeNight:
        what = f'practice night "{ident}"'
        node = m.get("changes")
        changes: list[PracticeChange] = []
        if node is not None and (not isinstance(node.value, list) or not node.value):
            self.problem(node.line, f'{what}: "changes" must be a list of changes, not '
                         f"{describe(node)}")
        elif node is not None:
            for index, item in enumerate(node.value, start=1):
                change = self.practice_change(item, f"{what}: changes item {index}", delayed)
                if change is not None:
                    changes.append(change)
        if ident:
            self.practice_nights[ident] = line
        return PracticeNight(id=ident, title=self.text(m, "title", what, empty=False),
                             changes=tuple(changes), line=line)

    def practice_change(self, item: Located, where: str,
                        delayed: tuple[str, ...] = ()) -> PracticeChange | None:
        """One change of a practice night. A run of a delayed task (one the normal night
        leaves out) is a change by itself: the night plays it once, at `at`."""
        f = self.fields(item, "practice_change", where)
        if f is None:
            return None
        bind = self.named_values(f, "bind", where, "a number or text", lambda v: (
            not isinstance(v, bool) and isinstance(v, (int, float, str))))
        bind_sql = self.named_values(f, "bind_sql", where, "a query",
                                     lambda v: isinstance(v, str) and bool(v.strip()))
        skip = self.refs_list(f, "skip", where, "statement")
        then = self.refs_list(f, "then", where, "statement")
        task = f.get("task")
        runs_delayed = task is not None and task.value in delayed
        if not runs_delayed and not any(key in f for key in ("bind", "bind_sql", "skip", "then")):
            self.problem(item.line, f'{where}: give "bind", "bind_sql", "skip" or "then" (or name '
                         "a delayed task, which the night then runs): a change that changes "
                         "nothing tests nothing")
        return PracticeChange(task=self.ref(f, "task", where, "task") or "",
                              at=self.clock_time(f, "at", where) or 0, bind=tuple(bind),
                              bind_sql=tuple((n, str(v)) for n, v in bind_sql), skip=skip,
                              then=then, line=item.line)

    def named_values(self, m: dict[str, Located], key: str, what: str, wanted: str,
                     accept: Callable[[object], bool]) -> list[tuple[str, Any]]:
        """A mapping of names to values `accept` takes; anything else is a problem at its
        line, naming what was `wanted`."""
        node = m.get(key)
        if node is None:
            return []
        if not isinstance(node.value, dict):
            self.problem(node.line, f'{what}: "{key}" must map names to values, not '
                         f"{describe(node)}")
            return []
        found: list[tuple[str, Any]] = []
        for name, value in node.value.items():
            if accept(value.value):
                found.append((str(name), value.value))
            else:
                self.problem(value.line, f'{what}: {key} "{name}" must be {wanted}, not '
                             f"{describe(value)}")
        return found

    def _range(self, node: Located, what: str, read: Callable[[Located], int | None],
               *, stepped: bool = False) -> tuple[int, ...] | None:
        """A [least, most] pair (drawn from for each session), each read by `read`; with
        `stepped`, an optional third value: the step between the values drawn."""
        sizes = (2, 3) if stepped else (2,)
        if not isinstance(node.value, list) or len(node.value) not in sizes:
            form = "[least, most] or [least, most, step]" if stepped else "[least, most]"
            self.problem(node.line, f"{what} must be one value or a range {form}, not "
                         f"{describe(node)}")
            return None
        values = [read(item) for item in node.value]
        if any(v is None for v in values):
            return None
        bounds = tuple(v for v in values if v is not None)
        if bounds[1] < bounds[0]:
            self.problem(node.line, f"{what}: the range [least, most] runs backwards")
            return None
        if len(bounds) == 3 and bounds[2] <= 0:
            self.problem(node.line, f"{what}: the step must be more than 0")
            return None
        return bounds

    def shifted(self, replay: dict[str, Located]) -> ShiftSpec | None:
        node = replay.get("shifted")
        if node is None:
            return None
        m = self.fields(node, "shifted", "replay: shifted")
        if m is None or "start" not in m:
            return None
        what = "replay: shifted"
        if self.start is None:
            return None
        origin = self.start.hour * 60 + self.start.minute

        def moved(node: Located) -> int | None:
            start = self._hhmm(node, "start", what)
            return parse_hhmm(start) - origin if start is not None else None

        span = self._range(m["start"], f'{what}: "start"', moved) \
            if isinstance(m["start"].value, list) else None
        clock_range = (span[0], span[1]) if span is not None else None
        clock = clock_range[0] if clock_range else moved(m["start"])
        if clock is None:
            return None
        later: list[tuple[str, int]] = []
        later_range: list[tuple[str, int, int, int]] = []
        node_later = m.get("later")
        if node_later is not None:
            if not isinstance(node_later.value, dict):
                self.problem(node_later.line, f'{what}: "later" must map task ids to '
                             f"durations, not {describe(node_later)}")
            else:
                for task_id, item in node_later.value.items():
                    self.refs.append(Ref(item.line, f"{what}: later", "task", task_id))
                    if isinstance(item.value, list):
                        def lateness(n: Located, t: str = task_id) -> int | None:
                            return self.duration({t: n}, t, f"{what}: later")

                        span = self._range(item, f"{what}: later: {task_id}", lateness,
                                           stepped=True)
                        if span is not None:
                            later.append((task_id, span[0]))
                            step = span[2] if len(span) == 3 else 1
                            later_range.append((task_id, span[0], span[1], step))
                        continue
                    minutes = self.duration({task_id: item}, task_id, f"{what}: later")
                    if minutes is not None:
                        later.append((task_id, minutes))
        renumber = None
        if "renumber" in m:
            pair = self._range(m["renumber"], f'{what}: "renumber"',
                               lambda n: self.integer({"renumber": n}, "renumber", what))
            renumber = (pair[0], pair[1]) if pair is not None else None
        count_from, count_range = self.count_from(m, what)
        seed = self.text(m, "seed", what)
        if ":offset" in seed and renumber is None:
            self.problem(m["seed"].line, f'{what}: "seed" uses :offset but no "renumber" range '
                         "says what to draw it from")
        if ":count_from" in seed and "count_from" not in m:
            self.problem(m["seed"].line, f'{what}: "seed" uses :count_from but no "count_from" '
                         "says where the minutes are counted from")
        return ShiftSpec(clock=clock, later=tuple(later), seed=seed, clock_range=clock_range,
                         later_range=tuple(later_range), renumber=renumber,
                         swap=self.swap_groups(m, what), count_from=count_from,
                         count_from_range=count_range)

    def count_from(self, m: dict[str, Located],
                   what: str) -> tuple[int, tuple[int, int] | None]:
        """`count_from`: the minute the variant's minutes are counted from (every `:now`
        reads that many more), a whole number of 0 or more, or a [least, most] range."""
        node = m.get("count_from")
        if node is None:
            return 0, None

        def minute(n: Located) -> int | None:
            return self.integer({"count_from": n}, "count_from", what)

        if isinstance(node.value, list):
            span = self._range(node, f'{what}: "count_from"', minute)
            return (span[0], (span[0], span[1])) if span is not None else (0, None)
        return self.integer(m, "count_from", what), None

    def swap_groups(self, m: dict[str, Located], what: str) -> tuple[tuple[str, ...], ...]:
        """`swap`: a list of groups, each a list of two or more distinct names."""
        node = m.get("swap")
        if node is None:
            return ()
        if not isinstance(node.value, list):
            self.problem(node.line, f'{what}: "swap" must be a list of groups of names, not '
                         f"{describe(node)}")
            return ()
        groups: list[tuple[str, ...]] = []
        for item in node.value:
            names = item.value if isinstance(item.value, list) else None
            texts = tuple(str(n.value) for n in names or ()
                          if isinstance(n.value, str) and n.value and "'" not in n.value)
            if names is None or len(texts) != len(names) or len(set(texts)) < 2 \
                    or len(set(texts)) != len(texts):
                self.problem(item.line, f'{what}: each "swap" group must list two or more '
                             "different names (no quotes in them), not "
                             f"{describe(item)}")
                continue
            groups.append(texts)
        return tuple(groups)

    def truth(self, top: dict[str, Located]) -> Truth | None:
        node = top.get("truth")
        if node is None:
            return None
        m = self.fields(node, "truth", "truth")
        if m is None:
            return None
        views = tuple(
            TruthView(name=i, sql=self.sql_text(f, "sql", f'truth view "{i}"'))
            for f, i, _l in self.items(m, "views", "truth_view", "truth.views")
        )
        return Truth(tables=self.texts(m, "tables", "truth"), views=views)

    def detection(self, scoring: dict[str, Located]) -> DetectionRubric | None:
        node = scoring.get("detection")
        if node is None:
            return None
        what = "scoring.detection"
        m = self.fields(node, "detection", what)
        if m is None:
            return None
        full_within = self.duration(m, "full_within", what)
        zero_after = self.duration(m, "zero_after", what)
        if full_within is not None and zero_after is not None and zero_after <= full_within:
            self.problem(m["zero_after"].line, f'{what}: "zero_after" must be longer than "full_within"')
        return DetectionRubric(
            points=self.integer(m, "points", what),
            invariant=self.ref(m, "invariant", what, "invariant") or "",
            full_within=full_within or 0,
            zero_after=zero_after or 0,
            match=self.text(m, "match", what),
            wrong_finding_cost=self.integer(m, "wrong_finding_cost", what),
            event_minutes=self.duration(m, "event_minutes", what),
        )

    def guards(self, scoring: dict[str, Located]) -> GuardsRubric | None:
        node = scoring.get("guards")
        if node is None:
            return None
        what = "scoring.guards"
        m = self.fields(node, "guards", what)
        if m is None:
            return None
        step_items = list(self.items(m, "steps", "race_step", f"{what}.steps"))
        steps = tuple(self.race_step(f, i, line) for f, i, line in step_items)
        points = self.integer(m, "points", what, default=sum(step.points for step in steps))
        seen: set[str] = set()
        for step, (_f, _i, line) in zip(steps, step_items, strict=True):
            if step.after is not None and step.after not in seen:
                self.problem(line, f'race step "{step.id}": "after" must name an earlier step '
                             f'(got "{step.after}")')
            seen.add(step.id)
        if steps and "points" in m and sum(step.points for step in steps) != points:
            self.problem(
                m["points"].line,
                f'{what}: "points" is {points} but the steps\' points add up to '
                f"{sum(step.points for step in steps)}",
            )
        good_path = tuple(
            self.good_path(f, i) for f, i, _l in self.items(m, "good_path", "good_path", f"{what}.good_path")
        )
        harms = self.harms(m, what)
        if harms:
            if any(step.points for step in steps):
                self.problem(m["harms"].line, f"{what}: with \"harms\" the race steps tell the "
                             "story and earn nothing: give the points to the harms")
            points = self.integer(m, "points", what, default=sum(h.points for h in harms))
            if "points" in m and sum(h.points for h in harms) != points:
                self.problem(m["points"].line, f'{what}: "points" is {points} but the harms\' '
                             f"points add up to {sum(h.points for h in harms)}")
        return GuardsRubric(points=points, steps=steps, good_path=good_path, harms=harms,
                            collateral=self.integer(m, "collateral", what, default=5))

    def harms(self, m: dict[str, Located], what: str) -> tuple[HarmWorth, ...]:
        node = m.get("harms")
        if node is None:
            return ()
        if not isinstance(node.value, list) or not node.value:
            self.problem(node.line, f'{what}: "harms" must be a list of harms, not '
                         f"{describe(node)}")
            return ()
        harms: list[HarmWorth] = []
        for index, item in enumerate(node.value, start=1):
            where = f"{what}.harms item {index}"
            f = self.fields(item, "harm", where)
            if f is None:
                continue
            night = self.text(f, "night", where)
            if night:
                self.night_refs.append((f["night"].line, where, night))
            harms.append(HarmWorth(
                invariant=self.ref(f, "invariant", where, "invariant") or "",
                points=self.integer(f, "points", where),
                grade=self.choice(f, "grade", where, HARM_GRADES, "minutes"),
                night=night,
                line=item.line))
        return tuple(harms)

    def race_step(self, m: dict[str, Located], ident: str, line: int = 0) -> RaceStep:
        what = f'race step "{ident}"'
        task = self.ref(m, "task", what, "task") or ""
        return RaceStep(
            id=ident,
            task=task,
            happened=self.sql_text(
                m, self.spelled(m, "race_step", "when"), what, parameters=HAPPENED_PARAMETERS,
                runs_as=("task", task)
            ),
            title=self.text(m, "title", what),
            points=self.integer(m, "points", what),
            after=self.text(m, "after", what) or None,
            line=line,
        )

    def good_path(self, m: dict[str, Located], ident: str) -> GoodPath:
        what = f'good path "{ident}"'
        role = self.ref(m, "role", what, "role") or ""
        node = m.get("sql")
        sql: tuple[str, ...] = ()
        if node is not None and isinstance(node.value, str):
            sql = (self.sql_text(m, "sql", what, parameters=(), runs_as=("role", role)),)
        elif node is not None:
            sql = self.texts(m, "sql", what)
            if isinstance(node.value, list):
                if not node.value:
                    self.problem(node.line, f'{what}: "sql" must hold at least one statement')
                for index, item in enumerate(node.value, start=1):
                    if isinstance(item.value, str) and item.value.strip():
                        self.sql.append(
                            SqlUse(item.line, what, f"sql[{index}]", item.value, (), ("role", role))
                        )
        return GoodPath(
            id=ident,
            title=self.text(m, "title", what, empty=False),
            sql=sql,
            role=role,
            penalty=self.integer(m, "penalty", what),
        )

    def recovery(self, scoring: dict[str, Located]) -> RecoveryRubric | None:
        node = scoring.get("recovery")
        if node is None:
            return None
        what = "scoring.recovery"
        m = self.fields(node, "recovery", what)
        if m is None:
            return None
        items = tuple(
            self.recovery_item(f, i, line)
            for f, i, line in self.items(m, "items", "recovery_item", f"{what}.items")
        )
        points = self.integer(m, "points", what, default=sum(item.points for item in items))
        if items and "points" in m and sum(item.points for item in items) != points:
            self.problem(
                m["points"].line,
                f'{what}: "points" is {points} but the items\' points add up to '
                f"{sum(item.points for item in items)}",
            )
        nets = tuple(
            SafetyNet(id=ident, title=self.text(f, "title", f'safety net "{ident}"', empty=False),
                      broken=self.sql_text(f, "broken", f'safety net "{ident}"', parameters=()),
                      penalty=self.integer(f, "penalty", f'safety net "{ident}"'))
            for f, ident, _line in self.items(m, "safety_nets", "safety_net",
                                              f"{what}.safety_nets")
        )
        return RecoveryRubric(
            points=points, items=items, event_minutes=self.duration(m, "event_minutes", what),
            forged=tuple(t.lower() for t in self.texts(m, "forged", what)), safety_nets=nets,
        )

    def recovery_item(self, m: dict[str, Located], ident: str, line: int) -> RecoveryItem:
        what = f'recovery item "{ident}"'
        milestone = self.ref(m, "milestone", what, "milestone")
        before = self.ref(m, "before", what, "milestone")
        healthy = self.boolean(m, "healthy_at_end", what)
        no_relapse = self.boolean(m, "no_relapse", what)
        outage = self.boolean(m, "outage", what)
        if "before" in m and "milestone" not in m:
            self.problem(m["before"].line, f'{what}: "before" needs "milestone"')
        if "milestone" not in m and not healthy and not no_relapse and not outage:
            self.problem(
                line,
                f'{what} checks nothing: give "milestone", "healthy_at_end: true" or "no_relapse: true"',
            )
        return RecoveryItem(
            id=ident,
            title=self.text(m, "title", what, empty=False),
            points=self.integer(m, "points", what),
            milestone=milestone,
            before=before,
            healthy_at_end=healthy,
            no_relapse=no_relapse,
            outage=outage,
            full_within=self.duration(m, "full_within", what) or 0,
        )
