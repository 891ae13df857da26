"""An exercise's PostgreSQL variant: its world and SQL where SQLite's dialect differs.

Optional and additive. Beside exercise.yaml, a `postgres.yaml` may say:

    world: world.postgres.sql        # the world in PostgreSQL's dialect
    statements:                      # a statement's SQL by id, where it differs
      writer-b-save: UPDATE ...
    sql:                             # any other SQL of the exercise (a check, a task's
      - sqlite: SELECT ...           # SQL, a panel query), by its exact SQLite text
        postgres: SELECT ...

An exercise without one plays on PostgreSQL with its SQLite text as it is (much of it is
the same in both). The variant is applied to the loaded exercise (`for_postgres`), so the
exercise format and its loader are unchanged.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from raceday.errors import ExerciseError
from raceday.exercise.model import Exercise, Statement
from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located
from raceday.textfile import UnreadableText, read_text

VARIANT_FILE = "postgres.yaml"


@dataclasses.dataclass(frozen=True)
class PostgresVariant:
    world_sql: str | None = None
    statements: dict[str, str] = dataclasses.field(default_factory=dict)
    sql: dict[str, str] = dataclasses.field(default_factory=dict)


def load_variant(folder: Path) -> PostgresVariant | None:
    """The folder's postgres.yaml, or None; raises ExerciseError naming file:line."""
    path = folder / VARIANT_FILE
    if not path.exists():
        return None
    try:
        located, problems = load_located(read_text(path))
    except (UnreadableText, YamlSyntaxError) as exc:
        raise ExerciseError([f"{path}: {exc}"]) from exc
    if problems:
        raise ExerciseError([f"{path}:{line}: {message}" for line, message in problems])
    top = located.value if located is not None else {}
    if not isinstance(top, dict):
        raise ExerciseError([f"{path}:1: expected a mapping (world, statements, sql)"])
    errors: list[str] = []
    unknown = sorted(set(top) - {"world", "statements", "sql"})
    errors += [f"{path}:{top[k].line}: unknown key {k!r} (world, statements, sql)" for k in unknown]
    world_sql = None
    if "world" in top:
        name = _text(top["world"], path, errors)
        if name is not None:
            try:
                world_sql = read_text(folder / name)
            except (OSError, UnreadableText) as exc:
                errors.append(f"{path}:{top['world'].line}: cannot read {name}: {exc}")
    statements: dict[str, str] = {}
    if "statements" in top:
        entries = top["statements"].value
        if not isinstance(entries, dict):
            errors.append(f"{path}:{top['statements'].line}: statements: expected id: SQL")
        else:
            for key, value in entries.items():
                text = _text(value, path, errors)
                if text is not None:
                    statements[str(key)] = text
    sql: dict[str, str] = {}
    if "sql" in top:
        items = top["sql"].value
        if not isinstance(items, list):
            errors.append(f"{path}:{top['sql'].line}: sql: expected a list of sqlite/postgres pairs")
        else:
            for item in items:
                pair = item.value if isinstance(item, Located) else None
                if not isinstance(pair, dict) or set(pair) != {"sqlite", "postgres"}:
                    errors.append(f"{path}:{item.line}: each sql item has sqlite: and postgres:")
                    continue
                old, new = _text(pair["sqlite"], path, errors), _text(pair["postgres"], path, errors)
                if old is not None and new is not None:
                    sql[old.strip()] = new
    if errors:
        raise ExerciseError(errors)
    return PostgresVariant(world_sql, statements, sql)


def _text(value: Located, path: Path, errors: list[str]) -> str | None:
    if not isinstance(value.value, str) or not value.value.strip():
        errors.append(f"{path}:{value.line}: expected text")
        return None
    return value.value


def for_postgres(exercise: Exercise) -> Exercise:
    """The exercise as it plays on PostgreSQL: its variant applied, if it has one."""
    if exercise.path is None:
        return exercise
    variant = load_variant(exercise.path.parent)
    if variant is None:
        return exercise
    known = {s.id for s in exercise.statements}
    unknown = sorted(set(variant.statements) - known)
    if unknown:
        raise ExerciseError([f"{exercise.path.parent / VARIANT_FILE}: no statement {u!r} in "
                             f"{exercise.id}" for u in unknown])
    statements = tuple(
        dataclasses.replace(s, sql=variant.statements[s.id]) if s.id in variant.statements else s
        for s in exercise.statements
    )
    changed = dataclasses.replace(exercise, statements=statements)
    if variant.world_sql is not None:
        changed = dataclasses.replace(changed, world_sql=variant.world_sql)
    if variant.sql:
        changed = _swap(changed, variant.sql)
    return changed


def _swap(value: Any, sql: dict[str, str]) -> Any:
    """Replace every string of the exercise that is one of the variant's SQLite texts."""
    if isinstance(value, str):
        return sql.get(value.strip(), value)
    if isinstance(value, Statement) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        changes = {f.name: _swap(getattr(value, f.name), sql) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **{k: v for k, v in changes.items()
                                             if v is not getattr(value, k)})
    if isinstance(value, tuple):
        swapped = tuple(_swap(v, sql) for v in value)
        return value if all(a is b for a, b in zip(swapped, value, strict=True)) else swapped
    if isinstance(value, dict):
        return {k: _swap(v, sql) for k, v in value.items()}
    return value
