"""What the host publishes beside the events, as JSON: the screen's snapshot of the session,
the tables of the world, and the results of a seat's statements.

Every value crosses through the one codec events and actions use (`transcript.events`'s
`value_to_record` and `value_from_record`: every field, checked field by field as it is
read), with one rule of the wire's own: a cell holding bytes (a BLOB) is `{"$bytes": hex}`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from raceday.engine.snapshot import Snapshot
from raceday.inert import json_text
from raceday.store.results import StatementResult, TableInfo
from raceday.transcript.events import value_from_record, value_to_record


def _unencodable(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    return str(value)


def _bytes(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and "$bytes" in obj:
        return bytes.fromhex(str(obj["$bytes"]))
    return obj


def dumps(value: Any) -> str:
    return json_text(value, separators=(",", ":"), default=_unencodable)


# -- statement results -------------------------------------------------------------------


def results_to_json(results: Sequence[StatementResult]) -> str:
    return dumps([value_to_record(r) for r in results])


def results_from_json(text: str) -> list[StatementResult]:
    """Every field of each result: its rows, what it wrote and read, where a failed one may
    have kept changes (`kept_in`)."""
    return [value_from_record(StatementResult, item, f"result[{i}]")
            for i, item in enumerate(json.loads(text, object_hook=_bytes))]


# -- the world's tables --------------------------------------------------------------------


def tables_to_json(tables: Sequence[TableInfo]) -> str:
    return dumps([value_to_record(t) for t in tables])


def tables_from_json(text: str) -> tuple[TableInfo, ...]:
    return tuple(value_from_record(TableInfo, t, f"table[{i}]")
                 for i, t in enumerate(json.loads(text, object_hook=_bytes)))


# -- the snapshot ----------------------------------------------------------------------------


def snapshot_to_json(snapshot: Snapshot) -> str:
    """Everything but the tables, which are published apart (they change seldom)."""
    data = value_to_record(snapshot)
    data.pop("tables")
    return dumps(data)


def snapshot_from_json(text: str, tables: tuple[TableInfo, ...] | None = None) -> Snapshot:
    snapshot = value_from_record(Snapshot, json.loads(text, object_hook=_bytes),
                                 "snapshot")
    return dataclasses.replace(snapshot, tables=tables) if tables is not None else snapshot
