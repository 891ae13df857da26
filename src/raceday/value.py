"""`Value`: the `__eq__`, `__hash__` and `__repr__` of a frozen dataclass, written once.

The dataclass decorator compiles these three for every class it makes, at import: for the
~110 value classes of events, verdicts, the exercise model and the debrief model, that was
~330 small functions compiled at every command's start (about a fifth of `raceday run`'s
imports). The other frozen classes a headless `raceday run` imports (a script's steps, a
YAML value's line, the timeline chart, the judge's and the debrief's readings, ~20 more) are
Values too. A class declared `@dataclass(frozen=True, eq=False, repr=False)` on `Value`
behaves as the plain frozen dataclass: equal when of the same class with equal fields
(`NotImplemented` otherwise), the hash of its fields' tuple, `Name(field=value, ...)`. (Not
for a class with a `field(compare=False)` or `field(repr=False)`: Value compares and prints
every field. The store's results stay plain dataclasses: the store imports nothing of
raceday but errors.)
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any

_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class Value:
    """A frozen dataclass's comparison, hash and repr (see the module's docstring)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            names = _field_names(self.__class__)
            return (tuple([getattr(self, n) for n in names])
                    == tuple([getattr(other, n) for n in names]))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple([getattr(self, n) for n in _field_names(self.__class__)]))

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        return (self.__class__.__qualname__ + "(" + ", ".join(
            [f"{n}={getattr(self, n)!r}" for n in _field_names(self.__class__)]) + ")")
