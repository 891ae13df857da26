"""A tiny exercise built in Python, so engine tests do not depend on the YAML loader."""

from __future__ import annotations

from datetime import datetime

from raceday.exercise.model import (
    Clock,
    DetectionRubric,
    Exercise,
    Finding,
    GoodPath,
    GuardsRubric,
    Hint,
    Inject,
    InjectKind,
    Invariant,
    Milestone,
    Policy,
    RaceStep,
    RecoveryItem,
    RecoveryRubric,
    Retry,
    Role,
    Scoring,
    Statement,
    Task,
)

WORLD = """
CREATE TABLE config (key TEXT PRIMARY KEY, value INTEGER NOT NULL, version INTEGER NOT NULL);
INSERT INTO config VALUES ('limit', 10, 1);
CREATE TABLE automation (name TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
INSERT INTO automation VALUES ('writers', 1);
"""


def tiny_exercise(**changes: object) -> Exercise:
    """Writer B reads the limit at 00:01 and writes it back, stale, at 00:05 and on retry."""
    ex = Exercise(
        id="tiny",
        title="Tiny",
        summary="A stale write.",
        length=10,
        level="beginner",
        clock=Clock(datetime(2025, 10, 19, 0, 0), datetime(2025, 10, 19, 0, 30), "PDT", 1),
        world_sql=WORLD,
        roles=(
            Role("operator", "Operator", write=("config", "automation"), schema=True),
            Role("writer-b", "Writer B", write=("config",), automated=True),
            Role("reader", "Reader", read=("automation",)),
        ),
        statements=(
            Statement("b-read", "writer-b", "SELECT value AS seen FROM config WHERE key = 'limit'"),
            Statement("b-write", "writer-b", "UPDATE config SET value = :seen WHERE key = 'limit'"),
        ),
        tasks=(
            Task("read", "writer-b", 1, "Read the limit", statements=("b-read",),
                 remember=("seen",)),
            Task("write", "writer-b", 5, "Write the limit back", statements=("b-write",),
                 when="SELECT 1 FROM automation WHERE enabled = 1",
                 on_zero_rows=Policy.RETRY, on_error=Policy.RETRY,
                 retry=Retry(every=5, until=25)),
        ),
        injects=(Inject("page", 3, "Limit changed", kind=InjectKind.ALARM),),
        invariants=(Invariant("lost", "The limit went back to 10",
                              "SELECT 1 FROM config WHERE key = 'limit' AND value = 10 "
                              "AND version > 1"),),
        milestones=(Milestone("stopped", "Automation stopped",
                              "SELECT 1 FROM automation WHERE enabled = 0"),),
        findings=(Finding("stale-write", "A stale write", True),
                  Finding("disk", "The disk is full", False)),
        hints=(Hint("h1", "Look at the version", cost=3),),
        scoring=Scoring(
            detection=DetectionRubric(30, "lost", full_within=2, zero_after=12, match="limit",
                                      wrong_finding_cost=5, event_minutes=50),
            guards=GuardsRubric(
                40,
                steps=(RaceStep("stale-write", "write",
                                "SELECT 1 FROM config WHERE value = 10 AND version > 1", points=40),),
                good_path=(GoodPath("fresh", "A fresh write still works", ("UPDATE config SET "
                                    "value = 99, version = version + 1",), "writer-b", 20),),
            ),
            recovery=RecoveryRubric(30, items=(
                RecoveryItem("first", "Stopped first", 10, milestone="stopped"),
                RecoveryItem("healthy", "Healthy at the end", 15, healthy_at_end=True),
                RecoveryItem("held", "Held", 5, no_relapse=True),
            ), event_minutes=157),
        ),
        default_roles=("operator",),
    )
    if changes:
        from dataclasses import replace

        ex = replace(ex, **changes)  # type: ignore[arg-type]
    return ex


