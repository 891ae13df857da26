"""What the loader asks of whoever compiles an exercise's SQL (the store, through the
engine): the exercise package itself knows no database."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol


class PreparedSql(Protocol):
    """What a `SqlChecker` found for one labelled piece of SQL."""

    @property
    def label(self) -> str: ...

    @property
    def error(self) -> str | None:
        """Why SQLite would not compile it; None when it compiles."""

    @property
    def parameters(self) -> tuple[str, ...]:
        """The named parameters it uses, without their `:`."""


class SqlCheckResult(Protocol):
    """What a `SqlChecker` found: the world's first error (line, message), or each item's."""

    @property
    def world_error(self) -> tuple[int, str] | None: ...

    @property
    def items(self) -> Sequence[PreparedSql]: ...


SqlChecker = Callable[[str, Sequence[tuple[str, str]]], SqlCheckResult]
"""Builds the world from its SQL, then compiles each (label, sql) without running it."""
