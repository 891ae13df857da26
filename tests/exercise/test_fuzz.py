"""Fuzzing the loaders: any input gives a result or a one-line InputError, never another exception.

Property-based (hypothesis) with a fixed seed (`derandomize`) and a bounded number of
examples, so the suite runs in seconds and fails the same way on every machine. Inputs are
mutations of the real minimal exercise and of a real play script (so the fuzz reaches deep
into the loaders, not only the YAML parser), YAML documents built from random values, and
raw text full of what broke raceday before: brackets, escapes, control characters, aliases.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from exercise_fixtures import MINIMAL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raceday.engine.load import load_exercise
from raceday.engine.script import load_script
from raceday.errors import InputError
from raceday.exercise.model import Exercise
from raceday.store.prepare import prepare_each

FUZZ = settings(
    derandomize=True,
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

EXERCISE_TEXT = (MINIMAL / "exercise.yaml").read_text(encoding="utf-8")
WORLD_SQL = (MINIMAL / "world.sql").read_text(encoding="utf-8")
SCRIPT_TEXT = """\
roles: [operator]
steps:
  - as: operator
    sql: SELECT value, version FROM config
  - at: "+2m"
    as: operator
    monitor: {name: version, sql: SELECT version FROM config}
  - as: operator
    edit: {statement: writer-b-save, sql: "UPDATE config SET value = 1"}
  - wait: next
  - as: operator
    declare: lost-update
  - as: operator
    hint: true
  - end: true
"""

# Pieces that broke (or could break) a YAML loader or what comes after it.
NASTY = [
    "[" * 300,
    "]",
    "{",
    "}",
    "- ",
    ": ",
    "\n  ",
    "\t",
    "#",
    "&a ",
    "*a",
    "*b",
    "<<: *a",
    "!!int ",
    "!!bool ",
    "!!binary ",
    "!!python/object:os.system ",
    "? ",
    "|",
    ">-#",
    "---\n",
    "...\n",
    '"\\0"',
    '"\\ud800"',
    '"\\x1b]0;pwned\\x07"',
    "\x00",
    "\x07",
    "\x1b",
    "\ufeff",
    "\u2028",
    "\ud800",
    "'",
    '"',
    "23:48",
    "99999999999999999999",
    "-1",
    "1e999",
    ".nan",
    "null",
    "~",
    "yes",
    "2025-13-45",
    "+99999999999999999999m",
    ";",
    "SELECT printf('%.*c', 900000000, 'x')",
    "ATTACH 'x' AS y",
    "PRAGMA writable_schema = ON",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(NASTY),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=10), st.sampled_from(["steps", "as", "sql", "roles"])),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@st.composite
def mutated(draw: st.DrawFn, base: str) -> str:
    """`base` with a few random edits: pieces inserted, spans deleted or duplicated."""
    text = base
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "text"]))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(NASTY)) + text[at:]
        elif kind == "text":
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
        else:
            end = min(len(text), at + draw(st.integers(min_value=1, max_value=80)))
            text = text[:at] + (text[at:end] * 2 if kind == "duplicate" else "") + text[end:]
    return text


def assert_one_line_each(error: InputError) -> None:
    assert error.problems, "an InputError names at least one problem"
    for problem in error.problems:
        assert isinstance(problem, str) and problem
        assert len(problem.splitlines()) == 1, problem


def outcome(call: Callable[[], Any]) -> Any:
    """The call's result, or None when it raised a one-line InputError; anything else fails."""
    try:
        return call()
    except InputError as exc:
        assert_one_line_each(exc)
        return None


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


def exercise_folder(root: Path, exercise_text: str, world_sql: str = WORLD_SQL) -> Path:
    folder = root / "minimal"
    folder.mkdir()
    write(folder, "exercise.yaml", exercise_text)
    write(folder, "world.sql", world_sql)
    (folder / "briefing.md").write_text("# Briefing\n", encoding="utf-8")
    return folder


# -- the exercise loader ------------------------------------------------------------------


@FUZZ
@given(mutated(EXERCISE_TEXT))
def test_a_mutated_exercise_loads_or_says_why_in_one_line_each(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = exercise_folder(Path(tmp), text)
        loaded = outcome(lambda: load_exercise(folder))
        assert loaded is None or isinstance(loaded, Exercise)


@FUZZ
@given(documents)
def test_any_yaml_document_as_an_exercise_is_a_result_or_one_line_each(document: Any) -> None:
    text = yaml.safe_dump(document, allow_unicode=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = exercise_folder(Path(tmp), text)
        outcome(lambda: load_exercise(folder, check_sql=False))


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=12)), max_size=12).map("".join))
def test_any_text_as_an_exercise_is_a_result_or_one_line_each(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = exercise_folder(Path(tmp), text)
        outcome(lambda: load_exercise(folder, check_sql=False))


@FUZZ
@given(mutated(WORLD_SQL))
def test_a_mutated_world_sql_is_checked_or_says_why_in_one_line_each(world_sql: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = exercise_folder(Path(tmp), EXERCISE_TEXT, world_sql)
        outcome(lambda: load_exercise(folder))


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=12)), max_size=10).map("".join))
def test_prepare_each_never_raises(sql: str) -> None:
    result = prepare_each(sql, [("a", sql), ("b", "SELECT 1")], time_limit=2.0)
    if result.world_error is not None:
        line, message = result.world_error
        assert line >= 1 and "\n" not in message


# -- the play-script loader ---------------------------------------------------------------

MINIMAL_EXERCISE = load_exercise(MINIMAL)


def script_outcome(text: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), "play.yaml", text)
        return outcome(lambda: load_script(path, MINIMAL_EXERCISE))


@FUZZ
@given(mutated(SCRIPT_TEXT))
def test_a_mutated_play_script_loads_or_says_why_in_one_line_each(text: str) -> None:
    script_outcome(text)


@FUZZ
@given(documents)
def test_any_yaml_document_as_a_play_script_is_a_result_or_one_line_each(document: Any) -> None:
    script_outcome(yaml.safe_dump(document, allow_unicode=True))


@FUZZ
@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "as": st.one_of(st.sampled_from(["operator", "writer-a", "nobody"]), scalars),
                "sql": documents,
                "monitor": documents,
                "edit": documents,
                "declare": documents,
                "wait": documents,
                "at": documents,
                "hint": documents,
                "end": documents,
                "replay": documents,
            },
        ),
        max_size=5,
    )
)
def test_any_steps_are_a_script_or_one_line_each(steps: list[dict[str, Any]]) -> None:
    script_outcome(yaml.safe_dump({"roles": ["operator"], "steps": steps}, allow_unicode=True))


def test_the_seed_inputs_themselves_load() -> None:
    # The fuzz starts from inputs that are valid: a broken fixture would make it vacuous.
    assert script_outcome(SCRIPT_TEXT) is not None
    with tempfile.TemporaryDirectory() as tmp:
        assert isinstance(load_exercise(exercise_folder(Path(tmp), EXERCISE_TEXT)), Exercise)
