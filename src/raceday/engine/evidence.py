"""What the team looked at, and whether a diagnosis rests on a look that could show its
evidence (the looks a declaration is judged by, and replayed on the normal night)."""

from __future__ import annotations

import re

from raceday.engine.checks import WorldChecks
from raceday.engine.looks import CHANCE, UNSTEADY, chance, short_sql, tables_words
from raceday.engine.statement_text import answer_digest, reads_only
from raceday.judge.facts import Look
from raceday.store.results import StatementResult


class Evidence(WorldChecks):
    """The team's looks at the world, and the evidence a finding names."""

    def _note_reads(self, result: StatementResult, role: str, *, monitor: str | None = None,
                    recheck: bool = True) -> None:
        """Remember when the team last read each table (a query of theirs, or a monitor),
        and what the read showed (a monitor shows something only when it returns rows).
        A look whose answer comes from chance or the clock shows nothing (`_blind`)."""
        if result.ok:
            for table in result.reads:
                self._team_reads[table] = len(self.events)
            shown = result.rows or not monitor
            if result.reads and shown and not self.exercise.role(role).automated:
                digest = answer_digest(result.columns, result.rows)
                self._looks.append(Look(n=len(self._looks) + 1, since=len(self.events),
                                         minute=self.minute, role=role, sql=result.sql,
                                         tables=frozenset(result.reads), monitor=monitor,
                                         digest=digest,
                                         blind=self._blind(role, result.sql, digest, recheck)))

    def _blind(self, role: str, sql: str, digest: str, recheck: bool) -> str:
        """Why a look cannot show the fault, whatever the world holds ("" when it may): it
        calls random() or reads the clock, or it answers differently when run again at once
        on the same world (read-only, rolled back; a random() hidden in a view). Not run
        again when nothing could tell (a held transaction, a later write in the same
        submission) or when the same answer to the same query was checked before."""
        if chance(sql):
            return CHANCE
        if not recheck or not reads_only(sql) or self._rechecked.get(sql) == digest:
            return ""
        again = self.store.probe(role, [sql])
        if len(again) != 1 or not again[0].ok:
            return ""  # it cannot be asked again now (a held transaction): the replay judges it
        if answer_digest(again[0].columns, again[0].rows) != digest:
            return UNSTEADY
        self._rechecked[sql] = digest
        return ""

    def _evidence_present(self, evidence: str | None) -> bool:
        """Is what a finding names there, or was it tonight (a fault since repaired is still
        a right diagnosis)? No evidence named: any fault so far."""
        if evidence is None:
            return bool(self._ever_violated)
        if any(i.id == evidence for i in self.exercise.invariants):
            return evidence in self._ever_violated
        return any(s.step.id == evidence and s.happened_at is not None
                   for s in self.facts.race_steps(self.exercise))

    def _shown_by(self, evidence: str | None) -> tuple[Look | None, str]:
        """The team's latest look since the fault began that can show the evidence (it read
        a table the evidence lives in or the automation wrote since, and its answer follows
        the world), or None and why not, in words for the player. Where the evidence lives
        cannot be told (no `truth` tables, or its check reads none): no look is asked for."""
        if not self._evidence_tables(evidence):
            return None, ""
        since, began = self._fault_since(evidence)
        tables = self._seen_in(evidence)
        tried = [k for k in self._looks if k.since >= since and k.tables & tables
                 and k.monitor not in self.facts.noisy_monitors]
        good = [k for k in tried if not k.blind]
        if good:
            return good[-1], ""
        if tried:
            last = tried[-1]
            return None, (f"your look at {self.time_of(last.minute)} "
                          f"({short_sql(last.sql)}) cannot show it: {last.blind}")
        where = (f"{tables_words(tables)} (directly or through a view)" if tables
                 else "the world")
        return None, (f"no query or monitor of yours read {where} between the fault ({began}) "
                      "and this declaration: a diagnosis from memory is not a diagnosis")

    def _remember_looks(self, finding: str, evidence: str | None) -> None:
        """The team's last different reads of where the evidence lives, since the fault began:
        the final replay runs them on the normal night, and a diagnosis whose every look shows
        the same there was not seen in the world (a query that cannot show the fault). A look
        that cannot show anything (chance, the clock) is not one of them."""
        since, _began = self._fault_since(evidence)
        tables = self._seen_in(evidence) if self._evidence_tables(evidence) else set()
        latest = {k.sql: k for k in self._looks
                  if k.since >= since and k.tables & tables and not k.blind}
        looks = tuple(sorted(latest.values(), key=lambda k: k.n))[-5:]
        if not tables or not looks:
            return
        self._declared_looks.append((self.minute, finding, looks))
        for look in looks:
            self.look_sql.append((look.minute, look.name, look.role, look.sql))

    def _evidence_tables(self, evidence: str | None) -> tuple[str, ...]:
        """The world's tables the evidence's check reads (the tables the evidence lives in)."""
        sql = next((i.went_back or i.sql for i in self.exercise.invariants
                    if i.id == evidence), None)
        if sql is None:
            sql = next((s.step.happened for s in self.facts.race_steps(self.exercise)
                        if s.step.id == evidence), None)
        truth = self.exercise.truth
        if sql is None or truth is None:
            return ()
        return tuple(t for t in truth.tables
                     if re.search(rf"\b{re.escape(t.lower())}\b", sql.lower()))

    def _evidence_since(self, evidence: str | None) -> int:
        """The event count when the evidence appeared."""
        if evidence in self._violated_since:
            return self._violated_since[evidence]
        return next((s.happened_seq or 0 for s in self.facts.race_steps(self.exercise)
                     if s.step.id == evidence and s.happened_at is not None), 0)

    def _fault_since(self, evidence: str | None) -> tuple[int, str]:
        """The event count, and the clock's time, from which a look can show the evidence:
        when the night's first fault began, or when the evidence appeared if that was earlier
        (a look before the fault shows nothing of it; one after may, whichever step of the
        story the finding names: the final replay judges what it showed)."""
        since = self._evidence_since(evidence)
        if self._violated_since:
            since = min(since, *self._violated_since.values())
        began = self.events[since].sim_time if since < len(self.events) else self.clock_face
        return since, began

    def _seen_in(self, evidence: str | None) -> set[str]:
        """The tables (lower case) where the evidence can be seen: those its check reads, and
        those the automation wrote since the fault began (a job's own log of what it did)."""
        return {t.lower() for t in self._evidence_tables(evidence)} | self._fault_writes
