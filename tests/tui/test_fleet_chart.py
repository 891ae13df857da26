"""The world panel's charts: a series that grows reads as growing, and that night's moments
are marked once the clock has reached them (never before)."""

from __future__ import annotations

from raceday.engine.snapshot import ChartView
from raceday.tui.widgets.chart import BLOCKS, render_charts_text


def chart(upto: int) -> ChartView:
    minutes = tuple(range(upto + 1))
    return ChartView(
        label="The fleet", series=("queue", "leased"), minutes=minutes,
        values=(tuple(float(m) for m in minutes), tuple(float(upto - m) for m in minutes)),
        marks=((30, "That night, 02:55: hosts restarted"), (90, "That night, 03:55: later")),
        clock=tuple(f"m{m}" for m in minutes))


def test_a_growing_series_rises_and_marks_wait_for_the_clock() -> None:
    text = render_charts_text((chart(60),), width=30)
    queue = next(line for line in text.splitlines() if line.startswith("queue"))
    bars = [c for c in queue[8:38] if c in BLOCKS]
    assert bars == sorted(bars, key=BLOCKS.index)  # never falls
    assert bars[-1] == BLOCKS[-1] and queue.endswith(" 60")
    assert "m30 hosts restarted" in text
    assert "later" not in text  # 03:55 has not come yet
    leased = next(line for line in text.splitlines() if line.startswith("leased"))
    assert leased.endswith(" 0") and BLOCKS[-1] in leased


def test_no_figures_yet_says_so() -> None:
    empty = ChartView(label="The fleet", series=("queue",), minutes=(), values=((),))
    assert "no figures yet" in render_charts_text((empty,))
