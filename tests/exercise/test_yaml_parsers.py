"""libyaml parses exercises fast; the result is always what PyYAML's own parser makes of them.

load_located uses libyaml when PyYAML has it and PyYAML's parser otherwise (or when libyaml
refuses the text, or where the two are known to differ). These tests run both ways and
compare, so an exercise loads (or fails, in the same words) on every machine alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import raceday.exercise.yaml_lines as yaml_lines
from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located

ROOT = Path(__file__).resolve().parents[2]
YAML_FILES = sorted(
    p for p in ROOT.glob("**/*.y*ml") if ".venv" not in p.parts and "build" not in p.parts
)

pytestmark = pytest.mark.skipif(
    getattr(yaml, "CSafeLoader", None) is None, reason="PyYAML was built without libyaml"
)


@pytest.fixture
def pure_python(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(yaml_lines, "_FAST_LOADER", None)
    yield


def outcome(text: str) -> tuple[object, ...]:
    try:
        return ("ok", *load_located(text))
    except YamlSyntaxError as exc:
        return ("syntax error", exc.line, exc.message)


def both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[object, ...], tuple[object, ...]]:
    fast = outcome(text)
    with monkeypatch.context() as patch:
        patch.setattr(yaml_lines, "_FAST_LOADER", None)
        slow = outcome(text)
    return fast, slow


def test_the_fast_parser_is_used_for_the_bundled_exercises(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = yaml_lines._fast_located

    def spy(text: str) -> tuple[Located | None, list[tuple[int, str]]] | None:
        result = real(text)
        calls.append("fast" if result is not None else "slow")
        return result

    monkeypatch.setattr(yaml_lines, "_fast_located", spy)
    for path in sorted((ROOT / "exercises").glob("*/exercise.yaml")):
        load_located(path.read_text(encoding="utf-8"))
    assert calls and set(calls) == {"fast"}


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_of_the_repository_reads_the_same(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = both_ways(path.read_text(encoding="utf-8"), monkeypatch)
    assert fast == slow


@pytest.mark.parametrize(
    "text",
    [
        "sql: SELECT a,\tb FROM t\n",  # a tab inside a plain scalar: PyYAML's parser refuses it
        "to: [oper?ator]\n",  # ? inside a flow collection
        "to: {a: b?c}\n",
        "to: [a ?b]\n",
        "text: >-#\n  x\n",  # a comment right after a block scalar's header
        "text: |#\n  x\n",
        "a: b\n\ufeff",  # a byte-order mark after the start
        "a: ! \n",  # a lone ! tag on an empty scalar: null for PyYAML, '' for libyaml
        "- !\n",
        "---",  # an empty document: the two put it on different lines
        "a: !x y\n",  # problems quote the text only with PyYAML's marks
        "a: !!int\n",
        "a: !!bool maybe\n",
        "a: !!timestamp never\n",
        "a: !!binary ~~~\n",
        "a: 1\na: 2\n4: x\n<<: {b: 1}\n",
        "a: [1, 2\nb: 3\n",  # not YAML: the message is PyYAML's
        "a: &x [*x]\n",
    ],
)
def test_where_the_parsers_differ_the_result_is_pyyamls(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = both_ways(text, monkeypatch)
    assert fast == slow


def test_a_tab_in_a_plain_scalar_stays_an_error() -> None:
    with pytest.raises(YamlSyntaxError) as info:
        load_located("sql: SELECT a,\tb FROM t\n")
    assert "cannot start any token" in info.value.message


def test_a_bad_tagged_value_is_a_problem_not_a_crash() -> None:
    # PyYAML's constructor raises IndexError, KeyError or AttributeError for these.
    for text in ("a: !!int\n", "a: !!float\n", "a: !!bool maybe\n", "a: !!timestamp never\n"):
        root, problems = load_located(text)
        assert root is not None and "a" in root.value, text
        ((line, message),) = problems
        assert line == 1 and message.startswith("cannot read the value"), text


def test_plain_is_the_same_for_both_parsers(pure_python: None) -> None:
    root, _ = load_located('a: 23:48\nb: "23:48"\nc: |\n  x\n')
    assert root is not None
    assert [root.value[k].plain for k in "abc"] == [True, False, False]


def test_plain_with_libyaml() -> None:
    root, _ = load_located('a: 23:48\nb: "23:48"\nc: |\n  x\n')
    assert root is not None
    assert [root.value[k].plain for k in "abc"] == [True, False, False]
