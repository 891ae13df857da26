"""Act on what was typed, not on what had arrived: priority keys (F5, ctrl+s, Enter on the
cast) are handled by the app before the keys typed just ahead of them have reached the
widget that takes them, so a fast typist's last letters would be missed."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.message_pump import MessagePump
from textual.widget import Widget


def after_typing(widgets: Sequence[MessagePump], then: Callable[[], None]) -> None:
    """Call `then` once each of `widgets` has handled every message posted to it so far
    (a callback queued behind them, widget by widget)."""
    pending = list(widgets)

    def step(index: int) -> None:
        if index < len(pending):
            pending[index].call_later(step, index + 1)
        else:
            then()

    step(0)


def after_moves(widget: Widget, then: Callable[[], None]) -> None:
    """Call `then` once the keys sent to `widget` so far have moved it. A list's arrows are
    bindings, which the app runs when the key has bubbled up to it through every container
    (Down, Down, then a priority Enter would otherwise read the line they had left)."""
    after_typing(widget.ancestors_with_self, then)
