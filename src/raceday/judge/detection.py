"""Detection the fault caused, judged against the final replay's normal night.

The team's alerts and the looks behind its diagnoses were run again on the replay's normal
night at the same minutes (`ReplayResult.monitor_checks`). An alert that fires there too keyed
on the clock or the plan numbers, not on the world's state: noise. A diagnosis counts only
when a look behind it shows something a night without the fault would not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from raceday.judge.facts import Look
from raceday.transcript.events import MonitorCheck, ReplayResult

TimeOf = Callable[[int], str]
Alert = tuple[int, str]  # (minute, monitor)
Declared = tuple[int, str, tuple[Look, ...]]  # (minute, finding, the looks behind it)


def _checks(result: ReplayResult) -> dict[tuple[str, str], MonitorCheck]:
    return {(c.name, c.at): c for c in result.monitor_checks}


def sort_alerts(alerts: Sequence[Alert], result: ReplayResult,
                time_of: TimeOf) -> tuple[list[Alert], dict[str, tuple[int, str]]]:
    """The alerts the fault caused, and each noisy monitor's first noisy minute and why."""
    checks = _checks(result)
    kept: list[Alert] = []
    noisy: dict[str, tuple[int, str]] = {}
    for minute, name in alerts:
        check = checks.get((name, time_of(minute)))
        if check is None or check.caused_by_fault:
            kept.append((minute, name))
            continue
        if name not in noisy:
            why = (f"it could not be run on the normal night ({check.error})" if check.error
                   else f"on the normal night, with no fault, it returned {check.rows} "
                        f"row{'s' if check.rows != 1 else ''} at {check.at} too")
            noisy[name] = (minute, why)
    return kept, noisy


def judge_diagnoses(declared: Sequence[Declared], confirmed: Sequence[tuple[int, str]],
                    noisy_monitors: Collection[str], result: ReplayResult, time_of: TimeOf,
                    ) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """The confirmed findings once each rests on a look that could show the fault, and the
    ones taken back as blind (minute, finding, the last look's SQL).

    `SELECT 1 FROM endpoint LIMIT 0` before the right finding shows nothing a healthy night
    would not show; a repeat after a blind first declaration, resting on a real look, counts
    in its place."""
    checks = _checks(result)
    credited_now = sorted(confirmed)
    blind: list[tuple[int, str, str]] = []
    settled: set[str] = set()  # findings whose first declaration with a real look is known
    for minute, finding, looks in declared:
        if finding in settled:
            continue
        # a monitor judged noise shows nothing about the fault, whatever it returned
        kept = tuple(k for k in looks if k.monitor not in noisy_monitors)
        seen = [checks.get((k.name, time_of(k.minute))) for k in kept]
        real = bool(kept) and (any(c is None for c in seen) or any(  # None: no normal night
            c is not None and (c.error or c.digest != k.digest)
            for c, k in zip(seen, kept, strict=True)))
        credited = next((c for c in credited_now if c[1] == finding), None)
        if real:
            settled.add(finding)
            if credited is None:  # a repeat after a blind first: this one counts
                credited_now.append((minute, finding))
                credited_now.sort()
        elif credited is not None and credited[0] == minute:
            credited_now.remove(credited)
            blind.append((minute, finding, looks[-1].sql))
    return credited_now, blind
