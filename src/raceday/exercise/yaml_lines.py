"""YAML that remembers where every value was written.

Every problem in an exercise (or a play script) is reported as `file:line: what is wrong`,
so values must keep their line. PyYAML's safe composer gives nodes with marks; this module
walks those nodes into plain values wrapped in `Located`, where a mapping's values carry the
line of their key (the line a person looks at) and list items the line they start on.

Parsing uses libyaml (PyYAML's C parser, about 15 times faster: it was most of the time an
exercise took to load) when PyYAML has it, and PyYAML's own parser otherwise. A document
libyaml refuses is parsed again by PyYAML's parser, so what is wrong is always said in the
same words, whichever parser is installed.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from raceday.value import Value, frozen

_FAST_LOADER: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)
# Text PyYAML's parser refuses in places where libyaml takes it: a tab, a byte-order mark
# (see _fast_located), a block scalar's header with a comment right after it ("|#", ">-#").
_HEADER_COMMENT = re.compile(r"[|>][-+0-9]{0,2}#")
_STR = "tag:yaml.org,2002:str"


class YamlSyntaxError(Exception):
    """The text is not YAML; `line` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"{line}: {message}")
        self.line = line
        self.message = message


@frozen
class Located(Value):
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


class _Differs(Exception):
    """libyaml's tree may differ from what PyYAML's parser makes of the text: parse again."""


class _Walker:
    """Turns a node tree into `Located` values.

    `fast` says the tree is libyaml's: then anything where the two parsers are known to
    part ways (a `?` inside a flow collection, which PyYAML's parser refuses; a lone `!` tag
    on an empty scalar; any problem, whose message quotes the text only with PyYAML's
    marks) raises `_Differs`, and the caller parses the text again with PyYAML's parser.
    """

    def __init__(self, *, fast: bool = False) -> None:
        self.problems: list[tuple[int, str]] = []
        self._scalars = yaml.SafeLoader("")
        self._nodes = 0
        self._fast = fast

    def problem(self, line: int, message: str) -> None:
        if self._fast:
            raise _Differs
        self.problems.append((line, message))

    def walk(self, node: yaml.Node, line: int, depth: int = 0, flow: bool = False) -> Located:
        self._nodes += 1
        if depth > _MAX_DEPTH or self._nodes > _MAX_NODES:
            raise YamlSyntaxError(line, "the document nests too deeply or aliases blow it up")
        if isinstance(node, yaml.MappingNode):
            return Located(self._mapping(node, depth, flow or bool(node.flow_style)), line)
        if isinstance(node, yaml.SequenceNode):
            flow = flow or bool(node.flow_style)
            items = [self.walk(item, item.start_mark.line + 1, depth + 1, flow) for item in node.value]
            return Located(items, line)
        assert isinstance(node, yaml.ScalarNode)
        if self._fast:
            self._check_fast(node, flow)
        try:
            # Text is most of an exercise: what SafeConstructor.construct_yaml_str returns.
            value = node.value if node.tag == _STR else self._scalars.construct_object(node, deep=True)
        except Exception as exc:  # not only YAMLError: `!!int ""` is an IndexError, `!!bool x` a KeyError
            self.problem(line, f"cannot read the value {_shown(node.value)}: {_one_line(exc)}")
            value = node.value
        if isinstance(value, str):
            value = self._clean(value, line)
        # PyYAML's parser marks a plain scalar with style None, libyaml with ''.
        return Located(value, line, text=str(node.value), plain=not node.style)

    def _clean(self, text: str, line: int) -> str:
        """Text a double-quoted escape made that no later step can take: reported, replaced.

        `"\\0"` is a NUL (SQLite and the transcript refuse it), `"\\ud800"` a lone surrogate
        (not encodable as UTF-8: the transcript could not be written). A file read as UTF-8
        holds neither, so only escapes make them.
        """
        if "\x00" in text:
            self.problem(line, "text holds a NUL character (\\0), which raceday cannot use")
            text = text.replace("\x00", "\ufffd")
        if _has_surrogate(text):
            self.problem(line, "text holds a lone surrogate (such as \\ud800), which is not valid Unicode")
            text = text.encode("utf-8", "replace").decode("utf-8")
        return text

    def _check_fast(self, node: yaml.ScalarNode, flow: bool) -> None:
        if flow and "?" in node.value:
            raise _Differs
        if not node.style and not node.value and node.tag == _STR:
            raise _Differs

    def _mapping(self, node: yaml.MappingNode, depth: int, flow: bool) -> dict[str, Located]:
        result: dict[str, Located] = {}
        lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if self._fast and isinstance(key_node, yaml.ScalarNode):
                self._check_fast(key_node, flow)
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "..."
                if key_node.tag == "tag:yaml.org,2002:merge":
                    self.problem(key_line, "merge keys (<<) are not supported")
                else:
                    self.problem(key_line, f"keys must be text; {shown!r} reads as {_kind(key_node)}")
                continue
            key = self._clean(str(key_node.value), key_line)
            if key in lines:
                self.problem(key_line, f'duplicate key "{key}" (first written at line {lines[key]})')
                continue
            lines[key] = key_line
            result[key] = self.walk(value_node, key_line, depth + 1, flow)
        return result


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _shown(value: str) -> str:
    shown = value if len(value) <= 60 else value[:57] + "..."
    return repr(shown)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _kind(node: yaml.Node) -> str:
    tag = str(node.tag).rsplit(":", 1)[-1]
    return {"int": "a number", "float": "a number", "bool": "true/false", "null": "null"}.get(tag, tag)


def load_located(text: str) -> tuple[Located | None, list[tuple[int, str]]]:
    """Parse one YAML document (safe tags only) into `Located` values.

    Returns the root (None for an empty document) and the problems that do not stop reading
    (duplicate keys, keys that are not text), each as (line, message). Raises
    `YamlSyntaxError` when the text is not YAML at all.
    """
    fast = _fast_located(text)
    if fast is not None:
        return fast
    node = _compose(text)
    if node is None:
        return None, []
    walker = _Walker()
    root = walker.walk(node, node.start_mark.line + 1)
    return root, walker.problems


def _fast_located(text: str) -> tuple[Located | None, list[tuple[int, str]]] | None:
    """What `load_located` returns, by libyaml; None when PyYAML's parser must have its say.

    That is: no libyaml, a tab, a byte-order mark or a block header with a comment right
    after it (PyYAML's parser refuses some that libyaml takes), anything libyaml refuses
    (the error is PyYAML's to word), and the cases `_Walker` knows the parsers differ on.
    """
    if _FAST_LOADER is None or "\t" in text or "\ufeff" in text or _HEADER_COMMENT.search(text):
        return None
    try:
        node = yaml.compose(text, Loader=_FAST_LOADER)
        if node is None:
            return None, []
        if isinstance(node, yaml.ScalarNode) and not node.value:
            return None  # "---" alone: the parsers place the empty document on different lines
        return _Walker(fast=True).walk(node, node.start_mark.line + 1), []
    except Exception:  # _Differs, a YAMLError, or a limit: all of it again, as before
        return None


def _compose(text: str) -> yaml.Node | None:
    """The document's node tree by PyYAML's own parser; its errors as YamlSyntaxError."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(line, _one_line_text(message) or "not valid YAML") from None
    except yaml.reader.ReaderError as exc:
        # A control character: PyYAML gives its offset in the text, not its line.
        line = text.count("\n", 0, max(0, exc.position)) + 1
        character = exc.character
        code = ord(character) if isinstance(character, str) else int(character)
        raise YamlSyntaxError(
            line, f"unacceptable character #x{code:04x}: control characters are not allowed"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, _one_line(exc)) from None
    except RecursionError:
        # PyYAML's composer recurses once per level: thousands of `[` exhaust the stack.
        line = _too_deep_line(text)
        raise YamlSyntaxError(line, f"the document nests deeper than {_MAX_DEPTH} levels") from None


def _one_line_text(message: str) -> str:
    return " ".join(message.split())


def _too_deep_line(text: str) -> int:
    """The line where the document first nests deeper than _MAX_DEPTH (by events: no recursion)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > _MAX_DEPTH:
                    mark = event.start_mark
                    return int(mark.line) + 1 if mark is not None else 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except (yaml.YAMLError, RecursionError):
        pass
    return 1
