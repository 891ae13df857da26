"""`Value` and `@frozen`: a frozen dataclass whose generic methods are written once.

The dataclass decorator compiles every method it makes, at import, for each class: a frozen
class's `__init__`, `__setattr__`, `__delattr__`, `__eq__`, `__hash__` and `__repr__`. For the
~150 value classes of events, verdicts, the exercise model and the debrief model that was
most of every command's import time. None of them is compiled here:

- `__init__` (`_init_of`) takes the parameters the decorator's would (positional in the
  fields' order, keyword-only ones, defaults and default factories) and raises the same
  TypeErrors; it sets the fields straight into the instance's dict, which also makes an
  instance quicker to make than through `__setattr__`.

- comparison, hash and repr (`Value`): equal when of the same class with equal fields
  (`NotImplemented` otherwise), the hash of its fields' tuple, `Name(field=value, ...)`. (Not
  for a class with a `field(compare=False)` or `field(repr=False)`: Value compares and prints
  every field.)
- immutability (`Value.__setattr__`, `__delattr__`): a field is set once, by `__init__`;
  assigning it again, deleting it or adding an attribute raises `FrozenInstanceError`, as on a
  frozen dataclass. `object.__setattr__` still works where a frozen dataclass allows it
  (`__post_init__`), and copies (`dataclasses.replace`, pickle, `copy`) are made as before.

Declare a value `@frozen` (or `@frozen(kw_only=True)`) on `Value`; type checkers read it as
`@dataclass(frozen=True)` (`dataclass_transform`), so an assignment is an error there too.
Measured: the frozen methods compiled per class cost `raceday run` 52 ms of 235 ms of
imports, and `__init__` alone about 0.2 ms a class more; a plain frozen dataclass costs
about 0.7 ms a class (the store's results, its SQL pieces and checks are Values too).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_V = TypeVar("_V", bound="Value")

_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class Value:
    """A frozen dataclass's comparison, hash, repr and immutability (see the module's
    docstring)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        # the first assignment of a field is its `__init__`'s; every other one is refused
        fields = self.__dict__
        if name in fields or name not in self.__dataclass_fields__:  # type: ignore[attr-defined]
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        fields[name] = value

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

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


@overload
def frozen(cls: type[_V], /) -> type[_V]: ...


@overload
def frozen(*, kw_only: bool = False) -> Callable[[type[_V]], type[_V]]: ...


@dataclass_transform(frozen_default=True, eq_default=False,
                     field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: type[_V] | None = None, /, *, kw_only: bool = False) -> Any:
    """`@dataclass(frozen=True)` for a `Value`: nothing is compiled for the class."""

    def make(value_class: type[_V]) -> type[_V]:
        if not issubclass(value_class, Value):
            raise TypeError(f"@frozen makes Values: {value_class.__qualname__} is not one")
        if hasattr(value_class, "__post_init__"):  # the decorator's own: it calls it
            return dataclasses.dataclass(value_class, eq=False, repr=False, kw_only=kw_only)
        made = dataclasses.dataclass(value_class, init=False, eq=False, repr=False,
                                     kw_only=kw_only)
        made.__init__ = _init_of(made)  # type: ignore[method-assign]
        return made

    return make if cls is None else make(cls)


def _init_of(cls: type[Value]) -> Callable[..., None]:
    """The class's `__init__`, as the decorator would write it (the same parameters,
    defaults and TypeErrors), made of its fields at run time instead of compiled."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    positional = tuple(f.name for f in fields if f.init and not f.kw_only)
    accepted = frozenset(f.name for f in fields if f.init)
    each = tuple((f.name, f.default, f.default_factory, f.init) for f in fields)
    missing = dataclasses.MISSING
    where = f"{cls.__qualname__}.__init__()"

    def __init__(self: Value, *args: Any, **kwargs: Any) -> None:
        if args:
            if len(args) > len(positional):
                raise TypeError(f"{where} takes {len(positional) + 1} positional arguments "
                                f"but {len(args) + 1} were given")
            for name, value in zip(positional, args, strict=False):  # fewer args: defaults
                if name in kwargs:
                    raise TypeError(f"{where} got multiple values for argument '{name}'")
                kwargs[name] = value
        if not accepted.issuperset(kwargs):
            unexpected = next(name for name in kwargs if name not in accepted)
            raise TypeError(f"{where} got an unexpected keyword argument '{unexpected}'")
        values = self.__dict__  # in the fields' order, as the decorator's __init__ sets them
        for name, default, factory, init in each:
            if name in kwargs:
                values[name] = kwargs[name]
            elif default is not missing:
                values[name] = default
            elif factory is not missing:
                values[name] = factory()
            elif init:
                raise TypeError(f"{where} missing 1 required argument: '{name}'")

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.sets_fields_only = True  # type: ignore[attr-defined]  # a decoder may do it itself
    return __init__
