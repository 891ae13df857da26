"""What the host publishes beside the events, as JSON: the screen's snapshot of the session,
the tables of the world, and the results of a seat's statements.

Events have their own codec (`transcript.events`); these are the other values a client
shows, turned to JSON and back here and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from raceday.engine.snapshot import Answer, ChartView, MonitorView, PendingView, Snapshot, WorldView
from raceday.inert import json_text
from raceday.store.results import ColumnInfo, ForeignKeyInfo, StatementResult, TableInfo


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    return value


def _uncell(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$bytes"}:
        return bytes.fromhex(str(value["$bytes"]))
    return value


def dumps(value: Any) -> str:
    return json_text(value, separators=(",", ":"), default=str)


# -- statement results -------------------------------------------------------------------


def results_to_json(results: Sequence[StatementResult]) -> str:
    return dumps([{
        **{k: v for k, v in asdict(r).items() if k != "rows"},
        "rows": [[_cell(c) for c in row] for row in r.rows],
    } for r in results])


def results_from_json(text: str) -> list[StatementResult]:
    out = []
    for item in json.loads(text):
        out.append(StatementResult(
            sql=item["sql"], columns=tuple(item["columns"]),
            rows=tuple(tuple(_uncell(c) for c in row) for row in item["rows"]),
            rowcount=item["rowcount"], truncated=item["truncated"],
            elapsed_ms=item["elapsed_ms"], error=item["error"], error_kind=item["error_kind"],
            writes=tuple(item["writes"]), schema_changed=item["schema_changed"],
            break_glass=tuple(item["break_glass"]),
        ))
    return out


# -- the world's tables --------------------------------------------------------------------


def tables_to_json(tables: Sequence[TableInfo]) -> str:
    return dumps([asdict(t) for t in tables])


def tables_from_json(text: str) -> tuple[TableInfo, ...]:
    return tuple(TableInfo(
        name=t["name"], kind=t["kind"],
        columns=tuple(ColumnInfo(**c) for c in t["columns"]),
        sql=t["sql"], triggers=tuple(t["triggers"]),
        foreign_keys=tuple(ForeignKeyInfo(columns=tuple(f["columns"]),
                                          other_table=f["other_table"],
                                          other_columns=tuple(f["other_columns"]))
                           for f in t["foreign_keys"]),
    ) for t in json.loads(text))


# -- the snapshot ----------------------------------------------------------------------------


def snapshot_to_json(snapshot: Snapshot) -> str:
    """Everything but the tables, which are published apart (they change seldom)."""
    data = asdict(snapshot)
    data.pop("tables")
    world = data["world"]
    if world["answers"] is not None:
        world["answers"] = [{"endpoint": a["endpoint"],
                             "addresses": [[_cell(x), _cell(w)] for x, w in a["addresses"]]}
                            for a in world["answers"]]
    return dumps(data)


def snapshot_from_json(text: str, tables: tuple[TableInfo, ...] | None = None) -> Snapshot:
    data = json.loads(text)
    world = data["world"]
    answers = None
    if world["answers"] is not None:
        answers = tuple(Answer(a["endpoint"],
                               tuple((_uncell(x), _uncell(w)) for x, w in a["addresses"]))
                        for a in world["answers"])
    return Snapshot(
        minute=data["minute"], clock_face=data["clock_face"], end_minute=data["end_minute"],
        timeline_over=data["timeline_over"], ended=data["ended"], healthy=data["healthy"],
        next_inject=data["next_inject"],
        pending=tuple(PendingView(**p) for p in data["pending"]),
        monitors=tuple(MonitorView(**m) for m in data["monitors"]),
        world=WorldView(answers=answers,
                        counts=tuple((str(n), int(c)) for n, c in world["counts"]),
                        switches=tuple((str(n), bool(e)) for n, e in world["switches"]),
                        error=world["error"],
                        answers_label=str(world.get("answers_label", "")),
                        switches_label=str(world.get("switches_label", "")),
                        tables=tuple((str(label), tuple(map(str, cols)),
                                      tuple(tuple(map(str, r)) for r in rows))
                                     for label, cols, rows in world.get("tables", ())),
                        answers_total=int(world.get("answers_total", 0)),
                        answers_empty=int(world.get("answers_empty", 0)),
                        charts=tuple(_chart(c) for c in world.get("charts", ()))),
        tables=tables,
        statement_sql=tuple((str(a), str(b)) for a, b in data["statement_sql"]),
    )


def _chart(data: dict[str, Any]) -> ChartView:
    return ChartView(
        label=str(data["label"]), series=tuple(map(str, data["series"])),
        minutes=tuple(int(m) for m in data["minutes"]),
        values=tuple(tuple(float(v) for v in row) for row in data["values"]),
        marks=tuple((int(m), str(t)) for m, t in data.get("marks", ())),
        start=str(data.get("start", "")), clock=tuple(map(str, data.get("clock", ()))))
