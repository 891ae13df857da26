"""The store as the engine sees it: no sqlite3 here, and SQLite's and PostgreSQL's stores
both stand behind it (`sqlite_store.WorldStore`, `postgres.store.PostgresStore`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Literal, Protocol

from raceday.store.results import Answer, Row, StatementResult, TableInfo

Backend = Literal["sqlite", "postgresql"]
"""Which database holds a world: the engine asks the store, and never imports one to find
out (a replay asks only how the world forks: `Store.world_file`)."""
StoreKind = Backend


class RoleRights(Protocol):
    """What the store needs to know of a role to guard its connection.

    The exercise's `Role` is one; the store does not import the exercise model, so the
    exercise package stays free to sit beside the store instead of above or below it.
    """

    @property
    def id(self) -> str: ...

    @property
    def schema(self) -> bool: ...

    @property
    def write(self) -> tuple[str, ...]: ...

    @property
    def break_glass(self) -> tuple[str, ...]: ...

    def may_read(self, table: str) -> bool: ...

    def may_write(self, table: str) -> bool: ...


class Store(Protocol):
    """One statement path for players and automation alike."""

    row_cap: int
    time_limit_s: float
    """How long one statement may run (the players' limit)."""

    def limit_raised_to(self, seconds: float) -> AbstractContextManager[None]: ...

    def automation_limits(self, steps: int, seconds: float) -> AbstractContextManager[None]: ...

    @property
    def backend(self) -> Backend:
        """Which database holds the world (what a replay forks)."""
        ...

    def execute(
        self, role: str, sql: str, params: Mapping[str, Any] | None = None
    ) -> list[StatementResult]: ...

    def app_query(
        self, sql: str, params: Mapping[str, Any] | None = None
    ) -> tuple[tuple[str, ...], list[Row]]: ...

    def app_queries(self, sqls: Sequence[str]) -> list[Answer]: ...

    def probe(
        self, role: str, statements: Sequence[str], params: Mapping[str, Any] | None = None
    ) -> list[StatementResult]: ...

    def interrupt(self) -> None: ...

    # What the store can say of its own answers, so that a session keeps an answer while it
    # still holds and asks again only what may have changed (`engine/checks.py`,
    # `engine/monitors.py`). A store that cannot say answers False, 0 or None, never by
    # lacking the attribute: then the session asks every time.
    @property
    def reads_complete(self) -> bool:
        """Whether a result's `reads` and `writes` name every table the statement read and
        wrote (then a monitor's answer is kept while none of its tables is written)."""
        ...

    @property
    def writes_complete(self) -> bool:
        """Whether a result's `writes` name every world table the statement wrote (its
        triggers' and functions' rows included) and `catalog_writes` counts every change of
        the schema (then a trusted read whose tables `reads_of` names is kept)."""
        ...

    @property
    def catalog_writes(self) -> int:
        """Statements so far that changed the schema, whatever their keyword said (0 for a
        store that does not count them: its schema changes are told by their results)."""
        ...

    @property
    def asks_together(self) -> bool:
        """Whether `app_queries` answers several checks in less time than asking each (then a
        session asks a round's checks at once)."""
        ...

    def reads_of(self, sql: str, params: Mapping[str, Any] | None = None) -> frozenset[str] | None:
        """The tables a trusted query reads, when its answer can change only with them; None
        when the store cannot say."""
        ...

    # A transaction a role holds open across calls (the isolation lab): its statements run
    # in it until commit or rollback; an error in it rolls it back. `isolation` is the
    # database's own word (PostgreSQL's levels, SQLite's DEFERRED/IMMEDIATE/EXCLUSIVE), None
    # its default. Each returns a result; none raises for what the exercise asked.
    def begin(self, role: str, isolation: str | None = None) -> StatementResult: ...

    def commit(self, role: str) -> StatementResult: ...

    def rollback(self, role: str) -> StatementResult: ...

    def holds(self, role: str) -> str | None: ...

    def tables(self) -> list[TableInfo]: ...

    def backup_to(self, path: Path) -> None: ...

    # How a replay forks this world (`engine/replay.py`): a world in a file is copied
    # (`replay_world.build_replay_world`) and its nights played in forked children that
    # open their copies; a world on a server is forked there (`ServerWorld.fork`).
    @property
    def world_file(self) -> Path | None:
        """The file that holds the world (SQLite's), or None: the world is on a server, and
        the store is a `ServerWorld`."""
        ...

    def close(self) -> None: ...

    @property
    def closed(self) -> bool: ...


class WorldSource(Protocol):
    """What the forks of a server's world copy of it (its schema's definitions, its tables,
    its owner roles), read once for every fork of a replay (`ServerWorld.fork_source`)."""

    @property
    def session(self) -> str: ...

    @property
    def pre(self) -> str:
        """The schema's definitions before its rows (pg_dump's pre-data)."""
        ...

    def digest(self) -> str:
        """What a world forked from this source is built of, whichever session it is: two
        sources with one digest fork into the same world."""
        ...


class ServerWorld(Store, Protocol):
    """A world on a server (PostgreSQL: the session's schemas and roles): a replay forks it
    on the same server, a new world on connections of its own for each night."""

    @property
    def session(self) -> str: ...

    def fork_source(self) -> WorldSource: ...

    def fork(self, seed_sql: str, renumber: str = "", source: Any = None,
             ) -> tuple[ServerWorld, list[str]]:
        """A new world: this one's schema with the exercise's seed rows (`source`: this
        world's `fork_source`, read once for several forks), and warnings."""
        ...

    def new_world(self, world_sql: str, roles: Sequence[RoleRights]) -> ServerWorld:
        """A fresh world of the exercise's own on the same server, with this one's limits."""
        ...

    def reopen(self) -> ServerWorld:
        """The same world on new connections (this store may be closed)."""
        ...

    def drop(self) -> None:
        """Remove the world from the server."""
        ...
