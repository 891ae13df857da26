"""Issue 58: a limit on what NLB failover may remove (AWS's later velocity control) earned no
guard points, because the guard replay ends at 04:30, before any NLB phase of the race. A
practice night brings the outage's network backlog to a fleet that holds its leases, so
failover crosses the NLB's floor within the replay: a cap keeps it, and earns there; failover
that may never remove anything keeps it too, but leaves the normal night's broken node in
DNS, and earns nothing.

The practice night plays on the session's variant (its minutes counted from a drawn number,
its DWFM hosts and NLB nodes renumbered): the same cap keyed on tonight's minutes, on a count
of minutes, on tonight's hosts or on tonight's nodes keeps nothing there, and earns nothing;
written as an edit of the failover statement, it earns what the trigger earns. Failover kept
quiet by never putting a new instance in service fails the good path and earns nothing;
failover only for a node that is itself down (its own health, which the players are given)
is fair and earns. (At 4,000 droplets: the practice night crosses the floor there as at
20,000, 106 minutes from 02:28, at a fifth of the cost.)"""

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
    (HERE / "cap-keyed-on-nodes.yaml", 0),   # NEW.id <= 60: the variant renumbers the nodes
    # failover only for a node that is itself down (nlb_node.broken, the node's own health,
    # which the briefing gives the players): the same as one that ignores the checks failed
    # by new targets still waiting for network; fair, and it keeps the floor
    (HERE / "fail-over-broken-only.yaml", 5),
])
def test_the_cap_earns_in_any_form_and_never_keyed_on_tonights_numbers(
        reference_play: ReferencePlays, script: Path, floor_points: int) -> None:
    result = reference_play.sized("recovery-under-load", script, 4000).result
    floor = _floor(result)
    assert floor["points"] == floor_points, result["guards"]["reasons"]
    assert floor["baseline"] == 106
    assert result["guards"]["points"] == floor_points
    assert result["guards"]["collateral"] == 0


def _good_path(result: dict[str, Any], path_id: str) -> dict[str, Any]:
    return next(p for p in result["guards"]["good_path"] if p["id"] == path_id)


@pytest.mark.parametrize(("script", "guard_points", "in_service"), [
    (HERE / "no-targets.yaml", 0, False),       # new instances never put in service
    (HERE / "deferred-targets.yaml", 5, True),  # put in service once their network is ready
])
def test_failover_kept_quiet_by_keeping_new_instances_out_of_service_earns_nothing(
        reference_play: ReferencePlays, script: Path, guard_points: int,
        in_service: bool) -> None:
    """A trigger that deletes every new target keeps the NLB above its floor on the practice
    night (nothing is left to fail a check), and keeps the customers' new instances out of
    service: the good path (a new instance is put in service once it has network) fails, and
    the guards earn nothing. Waiting for the network before putting an instance in service
    (the record's cause, fixed where it lies) keeps the floor too and passes it: it earns."""
    result = reference_play.sized("recovery-under-load", script, 4000).result
    floor = _floor(result)
    assert floor["minutes"] == 0 and floor["baseline"] == 106, result["guards"]["reasons"]
    assert _good_path(result, "put-in-service")["ok"] is in_service, result["guards"]["reasons"]
    assert result["guards"]["points"] == guard_points, result["guards"]["reasons"]
