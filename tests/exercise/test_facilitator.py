"""The facilitator's guide: the timeline, what each inject is for, the answer key."""

from __future__ import annotations

import io

from rich.console import Console

from raceday.cli import main
from raceday.engine.load import load_named_exercise
from raceday.exercise.facilitator import facilitator_markdown


def test_the_guide_has_the_timeline_the_purposes_and_the_answer_key() -> None:
    exercise = load_named_exercise("dynamodb-dns-race")
    guide = facilitator_markdown(exercise)
    assert "For the facilitator only" in guide
    assert "| 60 min | 3.75x |" in guide
    for inject in exercise.injects:
        assert inject.title.split(":")[0] in guide
    assert "RACE STEP stale-apply happens here" in guide
    right = [f for f in exercise.findings if f.correct]
    wrong = [f for f in exercise.findings if not f.correct]
    assert all(f"**right**: {f.text}" in guide for f in right)
    assert all(f"**WRONG (costs points)**: {f.text}" in guide for f in wrong)
    assert "### Hints" in guide and "## How the score is made" in guide
    # the team game day the host opens with agrees with the table above: 45 min, 5x
    assert "| 45 min | 5x |" in guide
    assert "`raceday host dynamodb-dns-race --seats ROLE,ROLE,...` plays the night in about " \
           "45 minutes (5x;" in guide
    # a person holding a race step's role is told how to keep the race on its minute
    assert "hold the fault step (**f**) until they have acted" in guide


def test_brief_keeps_the_guide_apart_from_the_players_briefing(capsys: object) -> None:
    out = io.StringIO()
    from raceday.commands import print_briefing

    print_briefing("lost-update-basics", Console(file=out, width=100))
    assert "WRONG" not in out.getvalue() and "Answer key" not in out.getvalue()
    assert main(["brief", "lost-update-basics", "--facilitator"]) == 0


def test_the_guide_says_how_long_a_flapping_fault_must_hold() -> None:
    # STS's second impact follows NLB capacity below the floor over the flapping's spells
    guide = facilitator_markdown(load_named_exercise("recovery-under-load"))
    assert "| fault `capacity-below-floor` held 3h of the last 4h | alarm |" in guide
    assert "| fault `leases-lost` begins +10 min | alarm |" in guide
