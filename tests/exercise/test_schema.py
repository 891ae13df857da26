"""The JSON Schema for editors says what the loader says."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from exercise_fixtures import MINIMAL

import raceday.exercise
from raceday.engine.load import load_exercise
from raceday.exercise.catalog import BUNDLED_DIR
from raceday.exercise.fields import FIELDS
from raceday.exercise.yaml_lines import load_located

SCHEMA_PATH = Path(raceday.exercise.__file__).parent / "exercise.schema.json"
BUNDLED = sorted(p.parent for p in BUNDLED_DIR.glob("*/exercise.yaml"))


def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def as_json(path: Path) -> Any:
    """The YAML file as JSON would hold it (unquoted dates become text)."""
    root, _ = load_located(path.read_text(encoding="utf-8"))
    assert root is not None

    def convert(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, date):
            return value.isoformat()
        return value

    return convert(root.plain_value())


def test_schema_is_json_with_the_top_level_keys() -> None:
    data = schema()
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert data["type"] == "object" and data["additionalProperties"] is False
    assert set(data["properties"]) == set(FIELDS["exercise"][0] + FIELDS["exercise"][1])
    assert set(data["required"]) == set(FIELDS["exercise"][0])


@pytest.mark.parametrize("kind", sorted(set(FIELDS) - {"exercise"}))
def test_schema_objects_match_the_loader(kind: str) -> None:
    required, optional = FIELDS[kind]
    definition = schema()["$defs"][kind]
    assert definition["additionalProperties"] is False
    assert set(definition["properties"]) == set(required + optional)
    assert set(definition["required"]) == set(required)


def _validate(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(as_json(path)), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema())


def test_minimal_fixture_validates() -> None:
    _validate(MINIMAL / "exercise.yaml")


@pytest.mark.parametrize("folder", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_exercise_validates(folder: Path) -> None:
    _validate(folder / "exercise.yaml")


@pytest.mark.parametrize("folder", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_exercise_loads(folder: Path) -> None:
    assert load_exercise(folder).id == folder.name


def test_schema_rejects_what_the_loader_rejects(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema())
    good = as_json(MINIMAL / "exercise.yaml")
    assert validator.is_valid(good)
    changes: tuple[Callable[[dict[str, Any]], object], ...] = (
        lambda d: d.update(colour="red"),
        lambda d: d["clock"].update(start="24:00"),
        lambda d: d["tasks"][0].update(on_error="halt"),
        lambda d: d["tasks"][0].pop("title"),
        lambda d: d["tasks"][2]["retry"].update(every="5 minutes"),
        lambda d: d["scoring"]["recovery"]["items"][0].pop("milestone"),
    )
    for change in changes:
        bad = json.loads(json.dumps(good))
        change(bad)
        assert not validator.is_valid(bad)
