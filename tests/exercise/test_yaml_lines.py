"""YAML values keep the line they were written on."""

from __future__ import annotations

from datetime import date

import pytest

from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located

TEXT = """\
# a comment
name: raceday
clock:
  start: "23:00"
  end: 02:40
  late: 23:48
items:
  - id: a
    sql: |
      SELECT 1
  - {id: b}
day: 2025-10-19
"""


def test_lines_of_keys_and_items() -> None:
    root, problems = load_located(TEXT)
    assert problems == []
    assert root is not None and root.line == 2
    assert root.value["name"] == Located("raceday", 2, "raceday", True)
    clock = root.value["clock"]
    assert clock.line == 3
    assert clock.value["start"].line == 4 and clock.value["start"].value == "23:00"
    end = clock.value["end"]
    assert (end.value, end.text, end.plain) == ("02:40", "02:40", True)
    late = clock.value["late"]
    assert (late.value, late.text, late.plain) == (1428, "23:48", True)  # YAML 1.1 base 60
    first, second = root.value["items"].value
    assert (first.line, second.line) == (8, 11)
    assert first.value["sql"].line == 9 and first.value["sql"].value == "SELECT 1\n"
    assert root.value["day"].value == date(2025, 10, 19)


def test_plain_value() -> None:
    root, _ = load_located("a: [1, {b: c}]\n")
    assert root is not None and root.plain_value() == {"a": [1, {"b": "c"}]}


def test_duplicate_and_non_text_keys_are_problems() -> None:
    root, problems = load_located("a: 1\nb: 2\na: 3\n4: x\n")
    assert root is not None and root.value["a"].value == 1
    assert problems == [
        (3, 'duplicate key "a" (first written at line 1)'),
        (4, "keys must be text; '4' reads as a number"),
    ]


def test_empty_document() -> None:
    assert load_located("# nothing\n") == (None, [])


def test_syntax_error_has_a_line() -> None:
    with pytest.raises(YamlSyntaxError) as info:
        load_located("a: 1\nb: [1, 2\nc: 3\n")
    assert info.value.line >= 2
    assert "flow sequence" in info.value.message


def test_unsafe_tags_are_refused() -> None:
    root, problems = load_located("a: !!python/object/apply:os.system ls\n")
    assert root is not None and root.value["a"].value == "ls"
    ((line, message),) = problems
    assert line == 1 and message.startswith("cannot read the value 'ls'")


def test_self_referring_alias_is_refused() -> None:
    with pytest.raises(YamlSyntaxError):
        load_located("a: &x [*x]\n")
