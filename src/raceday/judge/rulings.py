"""The facilitator's rulings on declarations, as the detection score counts them.

A facilitator who heard the team's reasoning may know better than a pattern whether a finding
was right: a ruling is theirs to make and the score says it was theirs. "right" counts the
declaration as a diagnosis (from the fault on) and costs nothing; "wrong" costs what a wrong
finding costs and takes it out of the diagnoses; "partly" neither costs nor counts.
"""

from __future__ import annotations

from collections.abc import Callable

from raceday.judge.facts import Facts, own_words_key
from raceday.value import Value, frozen

WORDS = {"right": "right", "partly": "partly right", "wrong": "wrong"}


@frozen
class Ruled(Value):
    """The declarations as the score counts them once the rulings are applied."""

    declarations: tuple[tuple[int, str, bool], ...]
    confirmed: tuple[tuple[int, str], ...]
    false_alarms: tuple[tuple[int, str], ...]
    reasons: tuple[str, ...]


def apply_rulings(facts: Facts, time_of: Callable[[int], str],
                  text_of: Callable[[str], str]) -> Ruled:
    ruled: dict[tuple[int, str], tuple[str, str]] = {}
    for minute, finding, ruling, note in facts.rulings:  # the last on a declaration counts
        ruled[(minute, finding)] = (ruling, note)
    declarations: list[tuple[int, str, bool]] = []
    changed: set[tuple[int, str]] = set()
    for minute, finding, correct in facts.declarations:
        ruling = ruled.get((minute, finding), ("", ""))[0]
        now = correct
        if ruling in ("right", "partly") and not correct:
            now = True
        elif ruling == "wrong" and correct:
            now = False
        if now != correct:
            changed.add((minute, finding))
        declarations.append((minute, finding, now))
    false_alarms = []
    for alarm in facts.false_alarms:
        if ruled.get(alarm, ("", ""))[0] in ("right", "partly"):
            changed.add(alarm)
        else:
            false_alarms.append(alarm)
    confirmed = []
    for diagnosis in facts.confirmed:
        if ruled.get(diagnosis, ("", ""))[0] == "wrong":
            changed.add(diagnosis)
        else:
            confirmed.append(diagnosis)
    start = facts.fault_started
    for key, (ruling, _note) in ruled.items():
        if ruling == "right" and start is not None and key[0] >= start \
                and key not in confirmed and any(key == d[:2] for d in facts.declarations):
            confirmed.append(key)
            changed.add(key)
    reasons = [
        f"detection: the facilitator ruled '{text_of(finding)}' at {time_of(minute)} "
        f"{WORDS.get(ruling, ruling)}" + (f": {note}" if note else "")
        for (minute, finding), (ruling, note) in sorted(ruled.items())
        if (minute, finding) in changed]
    for minute, words in facts.own_words:
        key = (minute, own_words_key(words))
        ruling, note = ruled.get(key, ("", ""))
        said = f"detection: '{words}' (own words, {time_of(minute)})"
        noted = f" ({note})" if note else ""
        if not ruling:
            reasons.append(f"{said} was not ruled: it neither counts nor costs")
        elif ruling == "right" and start is not None and minute >= start:
            if key not in confirmed:
                confirmed.append(key)
            reasons.append(f"{said} ruled right{noted}: it counts as a diagnosis")
        elif ruling == "right":
            reasons.append(f"{said} ruled right{noted}, but it came before the fault began: "
                           "it does not count")
        elif ruling == "wrong":
            declarations.append((minute, key[1], False))
            reasons.append(f"{said} ruled wrong{noted}: it costs what a wrong finding costs")
        else:
            reasons.append(f"{said} ruled partly right{noted}: it neither counts nor costs")
    return Ruled(declarations=tuple(declarations), confirmed=tuple(sorted(confirmed)),
                 false_alarms=tuple(false_alarms), reasons=tuple(reasons))
