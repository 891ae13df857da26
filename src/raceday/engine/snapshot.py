"""What the play screen shows of a session, read in the worker thread that holds the session.

Widgets never read the session themselves: a worker builds a `Snapshot` after each call and
posts it. The world panel is the exercise's: its `panel:` queries, with their labels (what
that night's dashboards showed; items marked `onboarding` only in onboarding). An exercise
without a panel gets its tables' row counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from raceday.errors import first_line
from raceday.store.results import TableInfo
from raceday.value import Value, frozen

if TYPE_CHECKING:
    from collections.abc import Mapping

    from raceday.engine.core import Monitor, PendingTask
    from raceday.exercise.model import Exercise, PanelItem
    from raceday.store.protocol import Store

Query = Callable[[str], tuple[tuple[str, ...], Any]]
"""A trusted read of the world: the store's `app_query`, or the session's `world_query`
(its answer kept while the tables it reads are not written)."""

class WorldSource(Protocol):
    """What the world panel and the charts read of a session (the session is one)."""

    exercise: Exercise
    store: Store

    def time_of(self, minute: int) -> str: ...

    def world_query(self, sql: str, params: Mapping[str, Any] | None = None,
                    ) -> tuple[tuple[str, ...], list[Any]]: ...


class Playing(WorldSource, Protocol):
    """What the screen shows of a session (the session is one): the snapshot reads no more."""

    minute: int
    ended: bool
    timeline_over: bool
    pending: dict[str, PendingTask]
    monitors: dict[str, Monitor]
    statement_sql: dict[str, str]

    @property
    def clock_face(self) -> str: ...

    @property
    def end_minute(self) -> int: ...

    @property
    def healthy(self) -> bool: ...

    def next_inject_minute(self) -> int | None: ...


_COUNT_TABLES = 12
_PANEL_ROWS = 8
ANSWERS_SHOWN = 12
"""The most endpoints a panel or list names: a world of 100k endpoints shows what is wrong
first, then a count, so that no screen's cost grows with the world."""
_ANSWER_ROWS = 256
"""The answer rows read as they are; a longer answer is counted by the database instead."""


@frozen
class PendingView(Value):
    """A task of a player's role that is due and not done."""

    task: str
    role: str
    title: str
    due: str
    context: str
    hint: bool
    minute: int = -1
    """The first minute it fell due without being done since (-1: not said)."""


@frozen
class MonitorView(Value):
    name: str
    role: str
    sql: str


@frozen
class Answer(Value):
    """One endpoint's DNS answer now: its (address, weight) pairs, empty when it has none."""

    endpoint: str
    addresses: tuple[tuple[str, Any], ...]


@frozen
class ChartView(Value):
    """A `chart` panel item: minutes, one series per other column, and the night's marks."""

    label: str
    series: tuple[str, ...]
    minutes: tuple[int, ...]
    values: tuple[tuple[float, ...], ...]  # one tuple per series, aligned with `minutes`
    marks: tuple[tuple[int, str], ...] = ()  # (minute, what happened that night)
    start: str = ""  # the clock face at minute 0
    clock: tuple[str, ...] = ()  # the clock face of each minute in `minutes`


@frozen
class WorldView(Value):
    """The world at a glance: grouped answers, or row counts; switches; other rows; a problem."""

    answers: tuple[Answer, ...] | None = None
    """Every endpoint's answer, or (a world of many) those that are empty first, then the
    first others, at most ANSWERS_SHOWN: `answers_total` and `answers_empty` count them all."""
    counts: tuple[tuple[str, int], ...] = ()
    switches: tuple[tuple[str, bool], ...] = ()
    error: str | None = None
    answers_label: str = ""
    switches_label: str = ""
    tables: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]], ...] = ()
    """Each `rows` panel item: its label, its columns, its rows as text."""
    charts: tuple[ChartView, ...] = ()
    answers_total: int = 0
    answers_empty: int = 0

    @property
    def endpoint_counts(self) -> tuple[int, int]:
        """(how many endpoints, how many of them empty), counted beyond those listed."""
        listed = self.answers or ()
        empty = sum(1 for a in listed if not a.addresses)
        return max(self.answers_total, len(listed)), max(self.answers_empty, empty)


@frozen
class Snapshot(Value):
    minute: int
    clock_face: str
    end_minute: int
    timeline_over: bool
    ended: bool
    healthy: bool
    next_inject: int | None
    pending: tuple[PendingView, ...] = ()
    monitors: tuple[MonitorView, ...] = ()
    world: WorldView = field(default_factory=WorldView)
    tables: tuple[TableInfo, ...] | None = None
    statement_sql: tuple[tuple[str, str], ...] = ()


@dataclass
class WorldPlan:
    """Which queries show this world, decided once from the exercise's panel (or its tables)."""

    items: tuple[PanelItem, ...] = ()
    tables: tuple[str, ...] = ()

    @classmethod
    def from_tables(cls, tables: list[TableInfo]) -> WorldPlan:
        """No panel in the exercise: the row counts of its tables."""
        return cls(tables=tuple(t.name for t in tables if t.kind == "table")[:_COUNT_TABLES])

    @classmethod
    def for_exercise(cls, exercise: Exercise, tables: list[TableInfo], *,
                     onboarding: bool) -> WorldPlan:
        items = tuple(i for i in exercise.panel if onboarding or not i.onboarding)
        if not exercise.panel:
            return cls.from_tables(tables)
        return cls(items=items)


def read_world(session: WorldSource, plan: WorldPlan) -> WorldView:
    """Query the world for the panel (worker thread only); charts get that night's marks.
    A query whose tables were not written since the last snapshot is answered as it was."""
    world = read_store_world(session.store, plan, session.world_query)
    if not world.charts:
        return world
    from dataclasses import replace

    from raceday.exercise.times import parse_time

    start = session.exercise.clock.start
    marks = []
    for inject in session.exercise.injects:
        if inject.kind.value != "reveal" or inject.at is None:
            continue
        try:
            minute = parse_time(inject.event_at, start) if inject.event_at else inject.at
        except ValueError:
            minute = inject.at
        marks.append((minute, inject.title))
    charts = tuple(replace(c, marks=tuple(sorted(marks)), start=session.time_of(0),
                           clock=tuple(session.time_of(m) for m in c.minutes))
                   for c in world.charts)
    return replace(world, charts=charts)


def read_store_world(store: Store, plan: WorldPlan, query: Query | None = None) -> WorldView:
    """Query a world (the session's, or the replay's) for the panel (worker thread only),
    through `query` when given (else the store's `app_query`)."""
    ask: Query = query or store.app_query
    answers: tuple[Answer, ...] | None = None
    total = empty = 0
    answers_label = switches_label = ""
    counts: list[tuple[str, int]] = []
    switches: tuple[tuple[str, bool], ...] = ()
    tables: list[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]]] = []
    charts: list[ChartView] = []
    try:
        for item in plan.items:
            if item.show == "answers":
                answers, total, empty = _answers(ask, item)
                answers_label = item.label
                continue
            if item.show == "rows":
                columns, rows = ask(_head(item.sql, _PANEL_ROWS))
                shown = tuple(tuple("NULL" if v is None else str(v) for v in r)
                              for r in rows[:_PANEL_ROWS])
                tables.append((item.label, tuple(columns), shown))
                continue
            columns, rows = ask(item.sql)
            if item.show == "chart":
                charts.append(_chart(item.label, columns, rows))
            else:
                switches = tuple((str(r[0]), bool(r[1])) for r in rows if len(r) > 1)
                switches_label = item.label
        for table in plan.tables:
            quoted = '"' + table.replace('"', '""') + '"'
            _, rows = ask(f"SELECT count(*) FROM {quoted}")
            counts.append((table, int(rows[0][0]) if rows else 0))
    except Exception as exc:  # the players may have dropped or changed a table
        return WorldView(answers, tuple(counts), switches, error=first_line(exc),
                         answers_label=answers_label, switches_label=switches_label,
                         tables=tuple(tables), answers_total=total, answers_empty=empty)
    return WorldView(answers, tuple(counts), switches, answers_label=answers_label,
                     switches_label=switches_label, tables=tuple(tables), charts=tuple(charts),
                     answers_total=total, answers_empty=empty)


def _head(sql: str, limit: int) -> str:
    """The exercise's query, its first `limit` rows only (in its own order)."""
    inner = sql.strip().rstrip(";")
    return f"SELECT * FROM (\n{inner}\n) AS panel_head LIMIT {limit}"


def _group(rows: list[Any]) -> dict[str, list[tuple[str, Any]]]:
    """Answer rows (a name, then an address and its weight; no address: none) by name."""
    grouped: dict[str, list[tuple[str, Any]]] = {}
    for row in rows:
        bucket = grouped.setdefault(str(row[0]), [])
        if len(row) > 1 and row[1] is not None:
            bucket.append((str(row[1]), row[2] if len(row) > 2 else None))
    return grouped


def _answers(ask: Query, item: PanelItem) -> tuple[tuple[Answer, ...], int, int]:
    """An `answers` item bounded: (the answers listed, how many endpoints, how many empty).

    A short answer is read whole. A long one is counted by the database: by the item's `count`
    query when it has one (its cost is the exercise's, not the whole answer's), else over the
    whole answer. Python gets the empty ones first, then the first others, never the world.
    """
    sql = item.sql
    columns, rows = ask(_head(sql, _ANSWER_ROWS + 1))
    if len(rows) <= _ANSWER_ROWS:
        grouped = _group(rows)
        answers = tuple(Answer(n, tuple(a)) for n, a in grouped.items())
        return answers, len(answers), sum(1 for a in answers if not a.addresses)
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    address = "c1" if len(columns) > 1 else "NULL"
    inner = sql.strip().rstrip(";")
    answer = f"WITH answer ({names}) AS (\n{inner}\n) "
    listed: list[Answer] = []
    if item.count:
        total, empty = _counted(ask, item.count)
        if empty:
            # the empty ones in the answer's own order: the scan stops at the last one named
            _, wrong = ask(f"{answer}SELECT c0 FROM answer WHERE {address} IS NULL "
                                       f"LIMIT {min(empty, ANSWERS_SHOWN)}")
            listed = [Answer(n, ()) for n in dict.fromkeys(str(r[0]) for r in wrong)]
    else:
        # one pass counts them; the empty ones are named only when there are some
        _, counted = ask(
            f"{answer}SELECT count(DISTINCT c0), "
            f"count(DISTINCT CASE WHEN {address} IS NOT NULL THEN c0 END) FROM answer")
        total = int(counted[0][0] or 0) if counted else 0
        empty = total - (int(counted[0][1] or 0) if counted else 0)
        if empty:
            _, wrong = ask(
                f"{answer}SELECT c0 FROM answer GROUP BY c0 HAVING count({address}) = 0 "
                f"ORDER BY c0 LIMIT {ANSWERS_SHOWN}")
            listed = [Answer(str(r[0]), ()) for r in wrong]
    head = _group(rows[:_ANSWER_ROWS])
    head.pop(str(rows[_ANSWER_ROWS - 1][0]), None)  # the last name's rows may go on
    for name, addresses in head.items():
        if len(listed) >= ANSWERS_SHOWN:
            break
        if addresses:
            listed.append(Answer(name, tuple(addresses)))
    return tuple(listed), total, empty


def _counted(ask: Query, sql: str) -> tuple[int, int]:
    """An item's `count` query: (how many names, how many of them empty)."""
    columns, rows = ask(sql)
    if len(rows) != 1 or len(columns) < 2:
        raise ValueError(f"the panel's count query gave {len(rows)} row(s) of "
                         f"{len(columns)} column(s), not one row of two (names, empty)")
    try:
        return int(rows[0][0] or 0), int(rows[0][1] or 0)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the panel's count query gave {rows[0][0]!r}, {rows[0][1]!r}, "
                         "not two numbers (names, empty)") from exc


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _chart(label: str, columns: Any, rows: Any) -> ChartView:
    """A chart item's rows: the first column the minute, each other a series."""
    names = tuple(str(c) for c in list(columns)[1:])
    minutes = tuple(int(_number(r[0])) for r in rows if len(r) > 0)
    values = tuple(tuple(_number(r[i + 1]) if len(r) > i + 1 else 0.0 for r in rows)
                   for i in range(len(names)))
    return ChartView(label, names, minutes, values)


def take_snapshot(session: Playing, plan: WorldPlan, *, tables: bool = False) -> Snapshot:
    """Everything the screen shows, read at once (worker thread only)."""
    pending = tuple(
        PendingView(p.task.id, p.task.role, p.task.title, session.time_of(p.due), p.context,
                    bool(p.task.hint), p.since)
        for p in session.pending.values()
    )
    monitors = tuple(MonitorView(m.name, m.role, m.sql) for m in session.monitors.values())
    world = read_world(session, plan) if not session.ended else WorldView()
    infos = tuple(session.store.tables()) if tables and not session.ended else None
    return Snapshot(
        minute=session.minute,
        clock_face=session.clock_face,
        end_minute=session.end_minute,
        timeline_over=session.timeline_over,
        ended=session.ended,
        healthy=session.healthy,
        next_inject=session.next_inject_minute(),
        pending=pending,
        monitors=monitors,
        world=world,
        tables=infos,
        statement_sql=tuple(session.statement_sql.items()),
    )
