"""Issue 58: a limit on what NLB failover may remove (AWS's later velocity control) earned no
guard points, because the guard replay ends at 04:30, before any NLB phase of the race. A
practice night brings the outage's network backlog to a fleet that holds its leases, so
failover crosses the NLB's floor within the replay: a cap keeps it, and earns there; failover
that may never remove anything keeps it too, but leaves the normal night's broken node in
DNS, and earns nothing.

The practice night plays on the session's variant (its minutes counted from a drawn number,
its DWFM hosts renumbered): the same cap keyed on tonight's minutes, on a count of minutes
or on tonight's hosts keeps nothing there, and earns nothing; written as an edit of the
failover statement, it earns what the trigger earns. (At 4,000 droplets: the practice night
crosses the floor there as at 20,000, 106 minutes from 02:28, at a fifth of the cost.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from reference_plays import ReferencePlays

HERE = Path(__file__).parent / "rul"
BUNDLED = Path(__file__).resolve().parents[2] / "exercises" / "recovery-under-load" / "scripts"
NIGHT = "backlog-on-a-leased-fleet"


def _floor(result: dict[str, Any]) -> dict[str, Any]:
    return next(h for h in result["guards"]["harms"]
                if h["id"] == "capacity-below-floor" and h["practice"] == NIGHT)


@pytest.mark.parametrize(("script", "floor_points", "guard_points"), [
    (BUNDLED / "nothing.yaml", 0, 0),
    (HERE / "cap-only.yaml", 5, 5),
    (HERE / "never-remove.yaml", 5, 0),
    (BUNDLED / "velocity-limit.yaml", 5, None),
    (BUNDLED / "throttle-by-queue.yaml", 0, None),
])
def test_a_cap_on_failover_earns_on_its_practice_night_and_only_a_cap(
        reference_play: ReferencePlays, script: Path, floor_points: int,
        guard_points: int | None) -> None:
    result = reference_play("recovery-under-load", script).result
    floor = _floor(result)
    assert floor["points"] == floor_points, result["guards"]["reasons"]
    if floor_points:
        assert floor["minutes"] == 0 and floor["baseline"] > 30
    if guard_points is not None:
        assert result["guards"]["points"] == guard_points
    if script.stem == "never-remove":
        assert result["guards"]["collateral"] > 0


def test_the_velocity_limit_play_reads_limits_done_on_its_own_night(
        reference_play: ReferencePlays) -> None:
    played = reference_play("recovery-under-load", BUNDLED / "velocity-limit.yaml")
    text = (played.folder / "debrief.md").read_text(encoding="utf-8")
    assert "### Limits on what one automation may remove: done" in text
    assert "on the practice night: the outage's network backlog reaching a fleet" in text


@pytest.mark.parametrize(("script", "floor_points"), [
    (HERE / "cap-edited.yaml", 5),           # the same cap, as an edited nlb-failover
    (HERE / "cap-keyed-on-minute.yaml", 0),  # NEW.removed_at <= 125
    (HERE / "cap-keyed-on-count.yaml", 0),   # count(*) FROM minute_stats <= 125
    (HERE / "cap-keyed-on-hosts.yaml", 0),   # max(id) FROM dwfm_host <= 40
])
def test_the_cap_earns_in_any_form_and_never_keyed_on_tonights_numbers(
        reference_play: ReferencePlays, script: Path, floor_points: int) -> None:
    result = reference_play.sized("recovery-under-load", script, 4000).result
    floor = _floor(result)
    assert floor["points"] == floor_points, result["guards"]["reasons"]
    assert floor["baseline"] == 106
    assert result["guards"]["points"] == floor_points
    assert result["guards"]["collateral"] == 0
