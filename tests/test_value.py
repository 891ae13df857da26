"""Value classes (events, verdicts, the exercise and debrief models, a script's steps)
compare, hash, print and refuse writes exactly as the plain frozen dataclasses they were:
`raceday.value.Value` writes those methods once instead of the decorator compiling them per
class at import (`@frozen` compiles only `__init__`)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import pickle
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.transcript.debrief import load_debrief
from raceday.transcript.log import read_events
from raceday.value import Value, frozen

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


def test_values_refuse_every_write_as_frozen_dataclasses_do() -> None:
    flagship = load_exercise(FLAGSHIP)
    found = [*values(read_events(EXAMPLE).events), *values(load_debrief(EXAMPLE)),
             *values(flagship)]
    for v in {type(v): v for v in found}.values():  # one of each class
        name = dataclasses.fields(v)[0].name  # type: ignore[arg-type]
        before = getattr(v, name)
        twin_value = twin(type(v))(**{f.name: getattr(v, f.name)
                                      for f in dataclasses.fields(v)})  # type: ignore[arg-type]
        for target in (v, twin_value):
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"'{name}'"):
                setattr(target, name, "changed")
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"'{name}'"):
                delattr(target, name)
            with pytest.raises(dataclasses.FrozenInstanceError, match="'not_a_field'"):
                target.not_a_field = 1
        assert getattr(v, name) is before
        assert pickle.loads(pickle.dumps(v)) == v  # the replay's children send values back
        assert copy.deepcopy(v) == v and copy.copy(v) == v


def test_frozen_makes_only_values() -> None:
    class Plain:
        name: str

    with pytest.raises(TypeError, match="@frozen makes Values: .*Plain is not one"):
        frozen(Plain)  # type: ignore[type-var]

    @frozen(kw_only=True)
    class Step(Value):
        name: str
        after: tuple[str, ...] = ()

        def __post_init__(self) -> None:  # as a frozen dataclass allows it
            object.__setattr__(self, "after", tuple(self.after))

    step = Step(name="apply", after=["check"])  # type: ignore[arg-type]
    assert step == Step(name="apply", after=("check",)) and step.after == ("check",)
    assert dataclasses.replace(step, name="clean") == Step(name="clean", after=("check",))


def test_a_values_init_takes_and_refuses_what_the_frozen_dataclass_init_does() -> None:
    @frozen
    class Plan(Value):
        id: int
        records: tuple[str, ...] = ()
        notes: list[str] = dataclasses.field(default_factory=list)
        seen: int = dataclasses.field(default=0, init=False)
        applied_by: str = dataclasses.field(default="", kw_only=True)

    @dataclasses.dataclass(frozen=True)
    class Twin:
        id: int
        records: tuple[str, ...] = ()
        notes: list[str] = dataclasses.field(default_factory=list)
        seen: int = dataclasses.field(default=0, init=False)
        applied_by: str = dataclasses.field(default="", kw_only=True)

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}), ((1, ("a",)), {}), ((), {"id": 2, "applied_by": "enactor-b"}),
        ((3, ("a", "b"), ["n"]), {"applied_by": "x"}), ((), {"records": (), "id": 4}),
        ((), {}), ((1, (), [], 5), {}), ((1,), {"id": 1}), ((), {"id": 1, "seen": 2}),
        ((), {"id": 1, "nope": 2}), ((1, (), []), {"applied_by": "x", "notes": []}),
    ]
    for args, kwargs in calls:
        try:
            expected: Any = Twin(*args, **kwargs)
        except TypeError:
            with pytest.raises(TypeError, match=r"Plan\.__init__\(\) "):
                Plan(*args, **kwargs)
            continue
        made = Plan(*args, **kwargs)
        assert [getattr(made, f.name) for f in dataclasses.fields(made)] == [
            getattr(expected, f.name) for f in dataclasses.fields(expected)]
        assert list(vars(made)) == [f.name for f in dataclasses.fields(made)]  # JSON's order
    assert Plan(1).notes is not Plan(1).notes  # a new list each time, as the factory says
    with pytest.raises(dataclasses.FrozenInstanceError):
        Plan(1).id = 2  # type: ignore[misc]
