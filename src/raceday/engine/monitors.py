"""The team's saved monitors, run each simulated minute: alerts, their clearing, and the
probes a replay's normal night runs again."""

from __future__ import annotations

from raceday.engine.core import MAX_MONITORS, Monitor
from raceday.engine.evidence import Evidence
from raceday.engine.statement_text import answer_digest, short_rows, steady
from raceday.store.results import StatementResult
from raceday.transcript import events as ev
from raceday.transcript.events import Event


class Monitors(Evidence):
    """Saved monitors and the alerts they raise."""

    def save_monitor(self, role: str, name: str, sql: str) -> Event:
        """Save a monitor after running it once, so a broken query is refused at once."""
        self._require_player(role)
        flood = self._flooded("monitor", role)
        if flood is not None:
            return flood
        name = name.strip()
        if not name:
            return self._emit(ev.Refused(role=role, action="monitor",
                                         error="a monitor needs a name"))
        if name not in self.monitors and len(self.monitors) >= MAX_MONITORS:
            return self._emit(ev.Refused(
                role=role, action="monitor", name=name,
                error=f"{MAX_MONITORS} monitors are saved, the most a session runs each "
                      "minute: remove one first"))
        first = self.store.probe(role, [sql])  # tried and rolled back: a monitor only reads
        why = None
        if first and first[0].error:
            why = first[0].error
        elif len(first) != 1 or not first[0].columns:
            why = "a monitor must be one SELECT"
        elif first[0].writes or first[0].rowcount:
            why = "a monitor must only read (this query writes)"
        if why is not None:
            return self._emit(ev.Refused(role=role, action="monitor", name=name, sql=sql,
                                         error=why))
        self.monitors[name] = Monitor(name, role, sql, self.minute)
        self._alerting.discard(name)
        event = self._emit(ev.MonitorSaved(role=role, name=name, sql=sql))
        self._run_monitor(self.monitors[name])
        return event

    def remove_monitor(self, name: str, role: str | None = None) -> Event | None:
        """Drop a monitor; one asked by a `role` other than the one that saved it is refused
        and recorded (a monitor belongs to whoever saved it)."""
        monitor = self.monitors.get(name)
        if monitor is not None and role is not None and role != monitor.role:
            return self._emit(ev.Refused(
                role=role, action="remove_monitor", name=name,
                error=f"monitor {name!r} is {monitor.role}'s: only who saved it removes it"))
        if monitor is not None and self._flooded("monitor") is not None:
            return None
        if self.monitors.pop(name, None) is not None:
            return self._emit(ev.MonitorRemoved(name=name))
        return None

    def _monitor_result(self, monitor: Monitor) -> StatementResult | None:
        """The monitor's answer now: the one it gave last time while none of the tables it
        read has been written since (nor the schema changed), else it runs again."""
        kept = self._monitor_kept.get(monitor.name)
        if kept is not None and kept[0] == (monitor.role, monitor.sql) \
                and kept[1] == self._world_key(kept[2].reads):
            return kept[2]
        results = self.store.execute(monitor.role, monitor.sql)
        result = results[0] if results else None
        if (result is not None and result.ok and len(results) == 1
                and self.store.reads_complete and steady(monitor.sql)):
            self._monitor_kept[monitor.name] = ((monitor.role, monitor.sql),
                                                self._world_key(result.reads), result)
        else:
            self._monitor_kept.pop(monitor.name, None)
        return result

    def _run_monitor(self, monitor: Monitor) -> None:
        result = self._monitor_result(monitor)
        if result is None or not result.ok:
            error = result.error if result else "no result"
            if monitor.name not in self._alerting:
                self._emit(ev.MonitorError(name=monitor.name, error=error or ""))
                self._alerting.add(monitor.name)
            return
        self._note_reads(result, monitor.role, monitor=monitor.name)
        self._check_world(if_changed=True)
        if result.rows and self.healthy and monitor.name not in self.facts.noisy_monitors:
            # rows while nothing is wrong: noise, now and for the rest of the night
            self.facts.noisy_monitors[monitor.name] = self.minute
        if result.rows and monitor.name not in self._alerting:
            self._alerting.add(monitor.name)
            noise = monitor.name in self.facts.noisy_monitors
            # An alert on the fault counts whatever it selects (`matched`): the final replay
            # keeps it only if the normal night, with no fault, gives no rows at that minute
            # (`_judge_alerts`); rows while the world was healthy made it noise already.
            matched = not noise and not self.healthy
            self._emit(ev.Alert(name=monitor.name, role=monitor.role, columns=tuple(result.columns),
                                rows=short_rows(result.rows), count=len(result.rows), matched=matched,
                                noise=noise))
            if matched:
                self.facts.monitor_alerts.append((self.minute, monitor.name))
                self.alert_sql.append((self.minute, monitor.name, monitor.role, monitor.sql))
                self._detect(f"monitor '{monitor.name}' alerted")
        elif not result.rows and monitor.name in self._alerting:
            self._alerting.discard(monitor.name)
            self._emit(ev.AlertClear(name=monitor.name))

    def _run_probes(self) -> None:
        for minute, name, role, sql in self.probes:
            if minute != self.minute:
                continue
            results = self.store.probe(role, [sql])
            first = results[0] if results else None
            if first is None or not first.ok:
                error = first.error if first is not None and first.error else "no result"
                self.probe_results.append(ev.MonitorCheck(name=name, at=self.clock_face,
                                                          error=error))
            else:
                self.probe_results.append(ev.MonitorCheck(
                    name=name, at=self.clock_face, rows=len(first.rows),
                    digest=answer_digest(first.columns, first.rows)))
