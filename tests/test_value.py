"""Value classes (events, verdicts, the exercise and debrief models, a script's steps)
compare, hash and print exactly as the plain frozen dataclasses they were:
`raceday.value.Value` writes those three methods once instead of the decorator compiling
them per class at import."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript.debrief import load_debrief
from raceday.transcript.log import read_events
from raceday.value import Value

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "transcripts" / "examples" / "lost-update-basics-solo-complete"
FLAGSHIP = ROOT / "exercises" / "dynamodb-dns-race"


def values(root: Any) -> Iterator[Value]:
    """Every Value reachable from `root` (fields, tuples, mappings)."""
    stack, seen = [root], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Value):
            yield item
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))  # type: ignore[arg-type]
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (tuple, list)):
            stack.extend(item)


_TWINS: dict[type[Any], type[Any]] = {}


def twin(cls: type[Any]) -> type[Any]:
    """The plain frozen dataclass with the same name and fields (the decorator's methods)."""
    if cls not in _TWINS:
        names = [f.name for f in dataclasses.fields(cls)]
        body = {"__qualname__": cls.__qualname__, "__module__": cls.__module__,
                "__annotations__": dict.fromkeys(names, "Any"),
                **{n: dataclasses.field(default=None) for n in names}}
        _TWINS[cls] = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), body))
    return _TWINS[cls]


def hashed(x: object) -> int | str:
    try:
        return hash(x)
    except TypeError as exc:
        return f"unhashable: {exc}"


def test_values_compare_hash_and_print_as_plain_frozen_dataclasses() -> None:
    flagship = load_exercise(FLAGSHIP)
    found = [*values(read_events(EXAMPLE).events), *values(load_debrief(EXAMPLE)),
             *values(flagship),
             *values(load_script(FLAGSHIP / "scripts" / "as-it-happened.yaml", flagship))]
    assert len({type(v) for v in found}) > 50  # events, verdicts, exercise and debrief
    twins = {id(v): twin(type(v))(**{f.name: getattr(v, f.name)
                                     for f in dataclasses.fields(v)})  # type: ignore[arg-type]
             for v in found}
    for v in found:
        t = twins[id(v)]
        assert repr(v) == repr(t)
        assert hashed(v) == hashed(t)
        assert v == dataclasses.replace(v)  # type: ignore[type-var]
        assert v.__eq__(t) is NotImplemented and v != t
    by_class: dict[type[Any], list[Value]] = {}
    for v in found:
        by_class.setdefault(type(v), []).append(v)
    for group in by_class.values():
        for a, b in itertools.islice(itertools.combinations(group, 2), 200):
            assert (a == b) == (twins[id(a)] == twins[id(b)])
            assert (a != b) == (twins[id(a)] != twins[id(b)])
