"""The exercise's checklist, held against what the team was seen doing.

Each practice comes from the exercise (carried in `session_start`) with a `judge` saying where
its evidence lies. A practice is "done" only on the team's own action: a guard in place when a
race step's task ran and was refused or changed nothing (live or in the replay), an edited
statement that then ran, a re-read after a write that changed 0 rows, the kill switch pulled.
It is "not done" on evidence against it (the step happened), and "not seen in this session"
otherwise: a good outcome alone proves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from raceday.transcript import events as ev
from raceday.transcript.debrief.guards import guards_in_place
from raceday.transcript.debrief.model import NOT_SEEN, ChecklistItem, Guards, StepOutcome
from raceday.transcript.debrief.reading import Reading
from raceday.transcript.debrief.words import capital
from raceday.transcript.log import of_kind
from raceday.transcript.wording import ZERO_ROWS_STOP, describe_statement, plural

Evidence = tuple[list[str], list[str], list[str]]  # did, did not, notes

OWN_EVIDENCE = frozenset({"row-counts", "removal-limits"})
"""Practices whose own night is not evidence enough (another practice's guard keeps the same
harm away there): done only on a count read, a cap, or an edit of their statements."""


NEVER_TESTED = "No write changed 0 rows, so reading the count was never put to the test."
CAP_UNSEEN = "Whether a cap existed that was never reached is not in the transcript."
"""Said of a practice not credited: one credited on its own night has shown its cap."""


def status(did: Sequence[str], did_not: Sequence[str]) -> str:
    if did and did_not:
        return "partly done"
    if did:
        return "done"
    if did_not:
        return "not done"
    return NOT_SEEN


def build_checklist(r: Reading, guards: Guards) -> tuple[ChecklistItem, ...]:
    items = []
    for practice in r.start.checklist:
        if practice.elsewhere:
            items.append(ChecklistItem(
                practice.id, practice.title, f"practised in {practice.elsewhere}", (), (),
                f"This exercise does not test it: `raceday play {practice.elsewhere}` does.",
                practice.text))
            continue
        story = _steps(r, guards, practice.steps)
        if practice.harms or practice.nights:  # the judge's verdicts decide; steps are story
            race = _harms(r, practice.harms) if practice.harms else ([], [], [])
            night = _harms(r, (), practice.nights) if practice.nights else ([], [], [])
            did, did_not = race[0] + night[0], race[1] + night[1]
            notes = list(dict.fromkeys(race[2] + night[2]))
            notes += [f"The race: {line}." for line in story[0] + story[1]]
        else:
            race = night = ([], [], [])
            did, did_not, notes = (list(part) for part in story)
        edits = _edits(r, practice.statements)
        if practice.judge == "row-counts":
            more = _row_counts(r, practice.statements)
        elif practice.judge == "recovery":
            more = _recovery(r, guards)
        elif practice.judge == "removal-limits":
            more = _removal_limits(r, practice.statements)
        else:
            more = edits
        if practice.judge != "recovery":
            # a harm some other guard kept away is not this practice done: it needs an act
            # of its own (a guard seen stopping its step, an edit of its statements, a count
            # read, a cap), or its own practice night kept from the customers
            own = [*more[0], *edits[0], *story[0]]
            if practice.judge not in OWN_EVIDENCE:
                own += night[0]
            borrowed = (race[0] + night[0] if practice.judge in OWN_EVIDENCE else race[0])
            if borrowed and not own:
                notes += [f"Kept from the customers, but by no act of this practice's: {line}."
                          for line in borrowed]
                did = [line for line in did if line not in borrowed]
        if practice.judge in OWN_EVIDENCE and did:
            # its night credited on an edit of its statements: that edit is shown beside it
            more = (edits[0] + more[0], more[1], edits[2] + more[2])
        did += more[0]
        did_not += more[1]
        notes += [n for n in more[2]  # done: it was tested, its cap seen
                  if not (did and n in (NEVER_TESTED, CAP_UNSEEN))]
        if practice.judge == "guards":
            did_not += _refused_by_own_edits(r, practice.statements, practice.steps)
        items.append(ChecklistItem(practice.id, practice.title, status(did, did_not), tuple(did),
                                   tuple(did_not), " ".join(notes), practice.text))
    return tuple(items)


def _steps(r: Reading, guards: Guards, ids: Sequence[str]) -> Evidence:
    did: list[str] = []
    did_not: list[str] = []
    notes: list[str] = []
    by_id = {s.id: s for s in guards.steps}
    for step in (by_id[i] for i in ids if i in by_id):
        name = _name(step)
        if step.live == "happened":
            minute = r.clock.minute_of_face(step.time or "")
            who = " (a player held the role)" if step.by_player else ""
            did_not.append(f"{name} happened at {step.time}{who}; "
                           + guards_in_place(r, minute if minute is not None else 0))
        if step.guarded:
            did.append(f"{name}: {step.evidence}")
        # the score's verdict stands beside a guard seen stopping the step in tonight's race
        if step.verdict == "happened" and step.live != "happened":
            did_not.append(f"the replay showed {step.id} still happens against the team's world")
        elif step.guarded:
            pass
        elif step.live != "happened" and step.evidence and not r.stopped_before(step.id):
            notes.append(f"{capital(name)} did not happen, but nothing of the team's was seen "
                         f"stopping it: {step.evidence}.")
    return did, did_not, notes


def _harms(r: Reading, harms: Sequence[str], nights: Sequence[str] = ()) -> Evidence:
    """What the score credited for keeping the practice's harms away (on the race nights, and
    on its practice nights): exactly its verdicts."""
    did: list[str] = []
    did_not: list[str] = []
    notes: list[str] = []
    all_verdicts = r.score.guards.harms if r.score is not None and r.score.guards else ()
    verdicts = {h.key: h for h in all_verdicts}
    wanted = [*harms, *(v.key for v in all_verdicts if v.practice and v.practice in nights)]
    for harm in wanted:
        v = verdicts.get(harm)
        if v is None:
            continue
        if v.points:
            how = ("kept away on the practice night" if v.minutes == 0 and v.practice
                   else "kept away in every replayed night" if v.minutes == 0
                   else f"{v.minutes} of {v.baseline} minutes left in {v.night}")
            did.append(f"your guards kept '{v.title}' from the customers: {how} "
                       f"(guards +{v.points}/{v.max})")
        elif v.baseline:
            did_not.append(f"the replay showed '{v.title}' still reaching the customers "
                           f"({v.minutes} of {v.baseline} minutes in {v.night})")
    if not verdicts:
        notes.append("No final replay judged the guards, so nothing here can be credited.")
    return did, did_not, notes


def _refused_by_own_edits(r: Reading, statements: Sequence[str],
                          steps: Sequence[str]) -> list[str]:
    """The good writes of the normal night the score found refused (`BlockedWrite.lost`)
    that are a statement the team edited and this practice's own (one it names, or one its
    race steps' tasks ran tonight): the practice's act also stopped the service doing its
    job, so it is not done whole."""
    scored = r.score.guards if r.score is not None else None
    if scored is None or not scored.blocked_good_writes:
        return []
    tasks = {r.steps[step].task for step in steps if step in r.steps}
    own = set(statements) | {e.statement for e in of_kind(r.events, ev.Statement)
                             if e.automated and e.task in tasks and e.statement}
    edited = {e.statement for e in of_kind(r.events, ev.Edit)} & own
    out = []
    for statement in sorted(edited):
        refused = [b for b in scored.blocked_good_writes if statement in b.lost]
        if refused:
            out.append(f"the team's edit of {statement} also refused "
                       f"{plural(len(refused), 'good write')} of the normal night ("
                       + ", ".join(f"{b.task} at {b.at}" for b in refused) + ")")
    return out


def _name(step: StepOutcome) -> str:
    return f"the race step {step.id}" + (f" ({step.title})" if step.title else "")


def _edits(r: Reading, statements: Sequence[str]) -> Evidence:
    """Edits of the practice's statements, with whether they were put to the test."""
    did: list[str] = []
    notes: list[str] = []
    replay_minutes = [e.minute for e in of_kind(r.events, ev.Replay) if e.available]
    for edit in (e for e in of_kind(r.events, ev.Edit) if e.statement in statements):
        ran = next((s for s in of_kind(r.events, ev.Statement)
                    if s.automated and s.statement == edit.statement and s.seq > edit.seq), None)
        replayed = next((m for m in replay_minutes if m >= edit.minute), None)
        what = f"edited the automation's statement {edit.statement} at {r.time(edit)}"
        if ran is not None:
            did.append(f"{what}; it ran after the edit ({r.time(ran)}: "
                       f"{describe_statement(ran)})")
        elif replayed is not None:
            did.append(f"{what}; the replay at {r.clock.time(replayed)} ran it")
        else:
            notes.append(f"The team {what}, but it never ran after the edit, so it was not "
                         "put to the test.")
    return did, [], notes


def _row_counts(r: Reading, statements: Sequence[str]) -> Evidence:
    """The team's writes that changed 0 rows and what the same role did next; the
    automation's, for the statements the practice names, as notes (its policy is the
    exercise's, not the team's)."""
    did: list[str] = []
    notes: list[str] = []
    events = list(of_kind(r.events, ev.Statement))
    unread = []
    for i, e in enumerate(events):
        if e.automated or not e.ok or e.schema_changed or not e.writes or e.rowcount != 0:
            continue
        follow = next((n for n in events[i + 1:] if n.role == e.role and not n.automated), None)
        if follow is not None and follow.rows is not None:
            did.append(f"{e.role}'s write at {r.time(e)} changed 0 rows, and their next "
                       f"statement ({r.time(follow)}) read again")
        else:
            unread.append(r.time(e))
    if unread:
        shown = ", ".join(unread[:6]) + ("…" if len(unread) > 6 else "")
        notes.append(f"The team's writes changed 0 rows {plural(len(unread), 'time')} (at "
                     f"{shown}) with no read after; whether anyone read the count is not in the "
                     "transcript.")
    for run in of_kind(r.events, ev.Automation):
        if run.outcome == "zero_rows" and run.note and ZERO_ROWS_STOP in run.note:
            did.append(f"{run.role}'s {run.task} at {r.time(run)}: {run.note.removeprefix('stopped: ')}"
                       ", so the run stopped instead of carrying on (the team's edit)")
    carried = []
    for e in events:
        if e.automated and e.statement in statements and e.ok and e.rowcount == 0 and e.writes:
            carried.append(f"{e.role}'s {e.statement} at {r.time(e)}")
    if carried:
        notes.append(f"The automation's {', '.join(dict.fromkeys(statements))} changed 0 rows "
                     f"{plural(len(carried), 'time')} (first: {carried[0]}); what it does then "
                     "is the exercise's automation, not the team's.")
    if not did and not unread and not carried:
        notes.append(NEVER_TESTED)
    return did, [], notes


def _recovery(r: Reading, guards: Guards) -> Evidence:
    did: list[str] = []
    did_not: list[str] = []
    if r.first_fault is None:
        replayed = (f" (the replay at {guards.replay.time} rehearsed the race, not a recovery)"
                    if guards.replay.ran else "")
        return did, did_not, [f"No fault occurred, so no recovery was practised{replayed}."]
    notes = ["Whether the team's real recovery paths are tested under load is not in a "
             "transcript; this session is one such rehearsal."]
    steered = _steered_recovery(r)
    if steered:
        did.append(steered)
    elif r.restores:
        first = r.restores[0]
        before = next((e for e in reversed(r.events) if e.seq < first.seq
                       and isinstance(e, ev.Statement) and e.writes and e.ok), None)
        if before is not None and not before.automated:
            how = ""
            if r.phase_of("stopped") is not None:
                running = r.stop is None or r.stop.event.minute > first.minute
                how = (" with the automation still running" if running
                       else " after stopping the automation")
            if how == " after stopping the automation":
                notes.append(f"The team's write at {r.time(before)} restored the world after "
                             "stopping the automation: a recovery, but not one rehearsed with "
                             "the automation and the load still running.")
            else:
                did.append(f"the team's write at {r.time(before)} restored the world{how}")
        else:
            notes.append(f"The world was restored at {r.time(first)}, but not by a write of "
                         "the team's.")
    else:
        did_not.append("the world was not restored by the end of the session" if r.complete
                       else f"the world had not been restored by {r.last_time}")
    stop, repair = r.stop, r.repair
    # Stopping the automation is a good order for a repair (the score's recovery says so), but
    # it takes the load away: it is never this practice's evidence.
    if stop is not None and repair is not None:
        order = ("before" if stop.event.minute <= repair.event.minute else "after")
        notes.append(f"The automation was stopped ({r.time(stop.event)}) {order} the hand "
                     f"repair ({r.time(repair.event)}); stopping it takes the load away, so it "
                     "is not a rehearsal under load.")
    for time in r.relapse_times:
        did_not.append(f"the repair was undone at {time}: the fault came back")
    return did, did_not, notes


def _steered_recovery(r: Reading) -> str:
    """A recovery the service made itself, with the load still on, after the team's own
    response (throttles, restarts): what the score's recovery credited as a milestone, never
    the automation stopped. Empty when the score credited no such milestone or it relapsed."""
    rec = r.score.recovery if r.score is not None else None
    if rec is None or rec.relapses or not rec.restored or r.fault_minute is None:
        return ""
    stopped = r.phase_of("stopped")
    stop_milestone = stopped.milestone if stopped is not None else None
    for credit in rec.items:
        if not (credit.points and credit.milestone and credit.at
                and credit.milestone != stop_milestone):
            continue
        reached = next((m for m in of_kind(r.events, ev.Milestone) if m.id == credit.milestone),
                       None)
        if reached is None or (r.stop is not None and r.stop.event.minute <= reached.minute):
            continue
        minute = reached.minute
        by = next((e for e in reversed(r.events) if e.seq < reached.seq
                   and isinstance(e, ev.Statement) and e.ok and e.writes), None)
        if by is None or not by.automated:  # a hand write reached it: a repair, not this
            continue
        writes = [e for e in of_kind(r.events, ev.Statement)
                  if not e.automated and e.ok and e.writes and e.rowcount
                  and r.fault_minute <= e.minute <= minute]
        if not writes:
            continue
        tables = ", ".join(dict.fromkeys(t for e in writes for t in e.writes))
        return (f"the team's response ({plural(len(writes), 'write')} to {tables} from "
                f"{r.time(writes[0])}) steered the service, load still on, to "
                f"'{credit.title}' at {credit.at} (recovery +{credit.points}/{credit.max}), "
                "and the recovery held")
    return ""


def _removal_limits(r: Reading, statements: Sequence[str]) -> Evidence:
    did: list[str] = []
    notes: list[str] = []
    if r.stop is not None:
        notes.append(f"The kill switch was used ({r.stop.label} at {r.time(r.stop.event)}); "
                     "a kill switch stops everything, it is not a limit on what one run may "
                     "remove.")
    removals = [e for e in of_kind(r.events, ev.Statement)
                if e.automated and e.ok and e.statement in statements]
    total = sum(e.rowcount or 0 for e in removals)
    if removals and not total:
        notes.append(f"The automation's {', '.join(statements)} ran "
                     f"{plural(len(removals), 'time')} and removed nothing.")
    elif removals:
        largest = max(removals, key=lambda e: e.rowcount or 0)
        notes.append(f"The automation's {', '.join(statements)} removed "
                     f"{plural(total, 'row')} in {plural(len(removals), 'run')}; the largest "
                     f"single run removed {largest.rowcount or 0} ({largest.role} at "
                     f"{r.time(largest)}).")
        notes.append(CAP_UNSEEN)
    return did, [], notes
