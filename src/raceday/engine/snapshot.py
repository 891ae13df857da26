"""What the play screen shows of a session, read in the worker thread that holds the session.

Widgets never read the session themselves: a worker builds a `Snapshot` after each call and
posts it. The world panel is data-driven: an exercise whose world has `endpoint` and
`dns_answer` gets every endpoint's DNS answer; any other gets its tables' row counts. A kill
switch table (`automation(name, enabled)`) is shown when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from raceday.store.results import TableInfo

if TYPE_CHECKING:
    from raceday.engine.session import Session
    from raceday.store.protocol import Store

_COUNT_TABLES = 12


@dataclass(frozen=True)
class PendingView:
    """A task of a player's role that is due and not done."""

    task: str
    role: str
    title: str
    due: str
    context: str
    hint: bool


@dataclass(frozen=True)
class MonitorView:
    name: str
    role: str
    sql: str


@dataclass(frozen=True)
class Answer:
    """One endpoint's DNS answer now: its (address, weight) pairs, empty when it has none."""

    endpoint: str
    addresses: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class WorldView:
    """The world at a glance: DNS answers, or row counts; the kill switches; a problem."""

    answers: tuple[Answer, ...] | None = None
    counts: tuple[tuple[str, int], ...] = ()
    switches: tuple[tuple[str, bool], ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Snapshot:
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
    """Which queries show this world, decided once from its tables."""

    dns: bool = False
    switches: bool = False
    tables: tuple[str, ...] = ()

    @classmethod
    def from_tables(cls, tables: list[TableInfo]) -> WorldPlan:
        by_name = {t.name.lower(): t for t in tables}

        def has(name: str, *columns: str) -> bool:
            info = by_name.get(name)
            return info is not None and set(columns) <= {c.name.lower() for c in info.columns}

        return cls(
            dns=has("dns_answer", "endpoint", "address") and has("endpoint", "name"),
            switches=has("automation", "name", "enabled"),
            tables=tuple(t.name for t in tables if t.kind == "table")[:_COUNT_TABLES],
        )


def read_world(session: Session, plan: WorldPlan) -> WorldView:
    """Query the world for the panel (worker thread only)."""
    return read_store_world(session.store, plan)


def read_store_world(store: Store, plan: WorldPlan) -> WorldView:
    """Query a world (the session's, or the replay's) for the panel (worker thread only)."""
    answers: tuple[Answer, ...] | None = None
    counts: list[tuple[str, int]] = []
    switches: tuple[tuple[str, bool], ...] = ()
    try:
        if plan.dns:
            rows = _answers(store)
            grouped: dict[str, list[tuple[str, Any]]] = {}
            for name, address, weight in rows:
                bucket = grouped.setdefault(str(name), [])
                if address is not None:
                    bucket.append((str(address), weight))
            answers = tuple(Answer(n, tuple(a)) for n, a in grouped.items())
        else:
            for table in plan.tables:
                quoted = '"' + table.replace('"', '""') + '"'
                _, rows = store.app_query(f"SELECT count(*) FROM {quoted}")
                counts.append((table, int(rows[0][0]) if rows else 0))
        if plan.switches:
            _, rows = store.app_query("SELECT name, enabled FROM automation ORDER BY name")
            switches = tuple((str(n), bool(e)) for n, e in rows)
    except Exception as exc:  # the players may have dropped or changed a table
        return WorldView(answers, tuple(counts), switches, error=_one_line(exc))
    return WorldView(answers, tuple(counts), switches)


def _answers(store: Store) -> list[Any]:
    sql = ("SELECT e.name, d.address, d.weight FROM endpoint AS e "
           "LEFT JOIN dns_answer AS d ON d.endpoint = e.name ORDER BY {}")
    try:
        return store.app_query(sql.format("e.rowid, d.address"))[1]
    except Exception:  # a WITHOUT ROWID endpoint table: order by name instead
        return store.app_query(sql.format("e.name, d.address"))[1]


def take_snapshot(session: Session, plan: WorldPlan, *, tables: bool = False) -> Snapshot:
    """Everything the screen shows, read at once (worker thread only)."""
    pending = tuple(
        PendingView(p.task.id, p.task.role, p.task.title, session.time_of(p.due), p.context,
                    bool(p.task.hint))
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


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
