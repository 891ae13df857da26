"""YAML that remembers where every value was written.

Every problem in an exercise (or a play script) is reported as `file:line: what is wrong`,
so values must keep their line. PyYAML's safe composer gives nodes with marks; this module
walks those nodes into plain values wrapped in `Located`, where a mapping's values carry the
line of their key (the line a person looks at) and list items the line they start on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml


class YamlSyntaxError(Exception):
    """The text is not YAML; `line` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"{line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Located:
    """A YAML value and the line it was written on.

    `value` is a dict[str, Located], a list[Located] or a scalar (str, int, float, bool,
    None, date, datetime). `text` is a scalar's source text and `plain` says it was written
    without quotes: YAML reads an unquoted 23:48 as the number 1428, and the loader wants to
    say so instead of "expected text".
    """

    value: Any
    line: int
    text: str = ""
    plain: bool = False

    @property
    def is_mapping(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def plain_value(self) -> Any:
        """The value with every `Located` removed (for JSON Schema checks and debugging)."""
        if isinstance(self.value, dict):
            return {key: item.plain_value() for key, item in self.value.items()}
        if isinstance(self.value, list):
            return [item.plain_value() for item in self.value]
        return self.value


_MAX_DEPTH = 100
_MAX_NODES = 1_000_000


class _Walker:
    def __init__(self) -> None:
        self.problems: list[tuple[int, str]] = []
        self._scalars = yaml.SafeLoader("")
        self._nodes = 0

    def walk(self, node: yaml.Node, line: int, depth: int = 0) -> Located:
        self._nodes += 1
        if depth > _MAX_DEPTH or self._nodes > _MAX_NODES:
            raise YamlSyntaxError(line, "the document nests too deeply or aliases blow it up")
        if isinstance(node, yaml.MappingNode):
            return Located(self._mapping(node, depth), line)
        if isinstance(node, yaml.SequenceNode):
            items = [self.walk(item, item.start_mark.line + 1, depth + 1) for item in node.value]
            return Located(items, line)
        assert isinstance(node, yaml.ScalarNode)
        try:
            value = self._scalars.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            self.problems.append((line, f"cannot read the value {node.value!r}: {exc}"))
            value = node.value
        return Located(value, line, text=str(node.value), plain=node.style is None)

    def _mapping(self, node: yaml.MappingNode, depth: int) -> dict[str, Located]:
        result: dict[str, Located] = {}
        lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "..."
                if key_node.tag == "tag:yaml.org,2002:merge":
                    self.problems.append((key_line, "merge keys (<<) are not supported"))
                else:
                    self.problems.append(
                        (key_line, f"keys must be text; {shown!r} reads as {_kind(key_node)}")
                    )
                continue
            key = str(key_node.value)
            if key in lines:
                self.problems.append(
                    (key_line, f'duplicate key "{key}" (first written at line {lines[key]})')
                )
                continue
            lines[key] = key_line
            result[key] = self.walk(value_node, key_line, depth + 1)
        return result


def _kind(node: yaml.Node) -> str:
    tag = str(node.tag).rsplit(":", 1)[-1]
    return {"int": "a number", "float": "a number", "bool": "true/false", "null": "null"}.get(tag, tag)


def load_located(text: str) -> tuple[Located | None, list[tuple[int, str]]]:
    """Parse one YAML document (safe tags only) into `Located` values.

    Returns the root (None for an empty document) and the problems that do not stop reading
    (duplicate keys, keys that are not text), each as (line, message). Raises
    `YamlSyntaxError` when the text is not YAML at all.
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(line, message or "not valid YAML") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, str(exc)) from None
    if node is None:
        return None, []
    walker = _Walker()
    root = walker.walk(node, node.start_mark.line + 1)
    return root, walker.problems
