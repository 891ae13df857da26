"""`raceday guide EXERCISE`: the facilitator guide, in the shape of CISA's CTEP facilitator
handbook (purpose and objectives, participants, logistics, the MSEL, the answer key, what to say
at each pause, the hot wash), written from exercise.yaml alone so it cannot drift from it.

This module builds the guide's first sections and puts the whole together; `guide_msel.py`
and `guide_key.py` build the rest. Nothing here renders: `guide_markdown.py` and
`guide_html.py` do.
"""

from __future__ import annotations

from raceday.exercise.facilitator import GAME_DAY_LENGTHS
from raceday.exercise.guide_doc import Block, Commands, Guide, Items, Para, Section, Sub, Table, flat
from raceday.exercise.guide_key import answer_key_section, hotwash_section
from raceday.exercise.guide_msel import fault_text, msel_section, pauses_section
from raceday.exercise.model import Exercise, Scoring
from raceday.exercise.times import format_time

CONSOLE_KEYS = (
    ("s", "in the lobby: start the night (asks first if a seat is not ready or missing)"),
    ("space", "pause and resume the clock"),
    ("g", "change the speed (each choice says how long the night lasts)"),
    ("n", "skip to the next inject, or sooner to a seat's task falling due"),
    ("i", "send an inject to one role or everyone, now, later or when a harm holds"),
    ("m", "the master scenario events list; x on an inject marks its expected actions"),
    ("h", "preview a hint, then give it to everyone or one role"),
    ("a", "hand a seat's routine tasks (or one task it left due) to the automation"),
    ("f", "hold the night's fault step until a human seat has acted"),
    ("r", "rule on a declaration: right, partly right or wrong, with a private note"),
    ("o", "an observer note players never see (+ a strength, - an area for improvement)"),
    ("w", "let the players' SQL onto the projector, for the hot wash"),
    ("v", "hide the answer key, live verdicts and notes to share the screen"),
    ("j", "show the join lines again"),
    ("e", "end and score the session"),
)


def speed(exercise: Exercise, minutes: float) -> str:
    """The live speed that fits the night into `minutes` (as `--length` works it out)."""
    return f"{round(exercise.clock.length_minutes / minutes, 2):g}x"


def game_days(exercise: Exercise) -> list[int]:
    """The game day's lengths worth offering: the exercise's own, and the usual ones that
    still run the night at least as fast as real time."""
    night = exercise.clock.length_minutes
    return sorted({exercise.length, *(m for m in GAME_DAY_LENGTHS if m <= night)})


def team_seats(exercise: Exercise) -> tuple[str, ...]:
    """The seats a team game day suggests: the roles a solo player holds, and those whose
    tasks make the race (a person holding them can make or miss the fault)."""
    guards = exercise.scoring.guards
    racing = {t.role for t in exercise.tasks
              if guards and any(s.task == t.id for s in guards.steps)}
    return tuple(r.id for r in exercise.roles
                 if r.id in exercise.default_roles or r.id in racing)


def _purpose(exercise: Exercise, previous: Exercise | None,
             following: Exercise | None) -> Section:
    ex, clock = exercise, exercise.clock
    blocks: list[Block] = [
        Para(flat(ex.summary)),
        Para(f"The night runs on a simulated clock from {clock.start:%H:%M} to "
             f"{clock.end:%H:%M} {clock.zone} ({clock.length_minutes} simulated minutes); a "
             f"team plays it in about {ex.length} real minutes. Level: {ex.level}."),
    ]
    if previous is not None:
        blocks.append(Para(f"It is the next act of **{flat(previous.title)}** "
                           f"(`raceday guide {previous.id}`): its clock starts where that "
                           "night is still running."))
    if following is not None:
        blocks.append(Para(f"Its night goes on in **{flat(following.title)}** "
                           f"(`raceday guide {following.id}`)."))
    if ex.debrief.sources:
        blocks += [Sub("Sources the injects cite"),
                   Items(tuple(f"`{s.tag}`: {flat(s.title)}" for s in ex.debrief.sources))]
    return Section("purpose", "Purpose and scope", tuple(blocks))


def _objective_rows(exercise: Exercise) -> list[tuple[str, str, str]]:
    s: Scoring = exercise.scoring
    rows: list[tuple[str, str, str]] = []
    if s.detection:
        d = s.detection
        rows.append(("Detection", str(d.points),
                     f"Declare a right finding (F8) within {d.full_within} min of the fault "
                     f"({fault_text(exercise, d.invariant)}) for full points, none after "
                     f"{d.zero_after} min"
                     + (f"; a wrong finding costs {d.wrong_finding_cost}"
                        if d.wrong_finding_cost else "") + "."))
    if s.guards:
        rows.append(("Guards", str(s.guards.points),
                     "Put guards in place (constraints, triggers, edits to the automation's "
                     "statements) that keep the harm from the customers when the race is "
                     "replayed against the team's database."))
    if s.recovery:
        rows.append(("Recovery", str(s.recovery.points),
                     "Recover safely: " + "; ".join(f"{flat(i.title)} ({i.points})"
                                                    for i in s.recovery.items) + "."))
    if s.tasks:
        rows.append(("Tasks", str(s.tasks), "Do the players' tasks, each by its time."))
    return rows


def _objectives(exercise: Exercise) -> Section:
    ex = exercise
    blocks: list[Block] = [
        Para("The score answers one question per objective, from the harm the customers "
             "saw; the debrief prints every point with its reason."),
        Table(("objective", "points", "met when"), tuple(_objective_rows(ex)))]
    rated: dict[str, list[str]] = {}
    for inject in ex.injects:
        if inject.expect and inject.objective:
            rated.setdefault(inject.objective, []).append(f"`{inject.id}`")
    if rated:
        blocks.append(Para("Your marks on the injects' expected actions also rate an "
                           "objective in the after-action report (never the score): "
                           + "; ".join(f"{k}: {', '.join(v)}" for k, v in rated.items())
                           + "."))
    checklist = ex.debrief.checklist
    if checklist:
        blocks += [Sub(flat(ex.debrief.checklist_title) or "The practices the debrief looks for"),
                   Items(tuple(f"**{flat(p.title)}**: {flat(p.text)}"
                               + (f" (practised in `{p.elsewhere}`)" if p.elsewhere else "")
                               for p in checklist))]
    return Section("objectives", "Objectives", tuple(blocks))


def _roles(exercise: Exercise) -> Section:
    ex = exercise
    seats = team_seats(ex)
    rows = []
    for role in ex.roles:
        writes = ", ".join(role.write) or "-"
        if role.break_glass:
            writes += f" (break-glass: {', '.join(role.break_glass)})"
        if role.schema:
            writes += "; may change the schema"
        played = ("a person, solo and in a team" if role.id in ex.default_roles
                  else "a person in a team game day, else the automation" if role.id in seats
                  else "the automation (a person may take it)")
        rows.append((f"`{role.id}`", flat(role.name), writes, played))
    tasks = [t for t in ex.tasks if t.done_when]
    blocks: list[Block] = [
        Table(("role", "who", "may write", "played by"), tuple(rows)),
        Para("Every role nobody holds is played by the automation with exactly the "
             "exercise's SQL. Suggested seats for a team: " + ", ".join(seats) + ".")]
    if tasks:
        blocks += [Sub("The players' tasks (a seat sees each when it falls due)"),
                   Table(("from", "role", "task"), tuple(
                       (format_time(t.at, ex.clock.start), t.role, flat(t.title))
                       for t in sorted(tasks, key=lambda t: t.at)))]
    return Section("participants", "Participants and roles", tuple(blocks))


def _logistics(exercise: Exercise, program: str) -> Section:
    ex, p = exercise, "raceday"
    seats = team_seats(ex)
    joins = tuple(f"{p} join transcripts/<session> --as <name> --role {r} --token <token>"
                  for r in seats)
    blocks: list[Block] = [
        Sub("Agenda (suggested)"),
        Table(("part", "length", "what"), (
            ("Welcome and briefing", "10 min",
             f"roles, ground rules, the briefing read together (`{p} brief {ex.id}`)"),
            ("The night", f"{ex.length} min", f"at {speed(ex, ex.length)} in the live pace"),
            ("Hot wash", "20 min", "the questions of the hot-wash section, in order"),
            ("After-action report", "10 min", f"`{p} aar transcripts/<session>`"))),
        Sub("Pace"),
        Table(("game day", "speed", "host it with"), tuple(
            (f"{m} min", speed(ex, m),
             f"`{p} host {ex.id} --seats {','.join(seats)} --length {m}`")
            for m in game_days(ex))),
        Sub("Before the day"),
        Items((f"Print this guide (`{p} guide {ex.id} --html -o guide.html`) and the "
               f"players' briefing (`{p} brief {ex.id}`).",
               "Check that every player's terminal reaches the session folder (one machine, "
               "ssh or tmux), or host on PostgreSQL (`--db postgresql://...`) for players on "
               "their own laptops.",
               "Optionally write your own injects in a file and load them with "
               "`--injects FILE` (README: \"Run a game day across terminals\").")),
        *([Para(f"On this machine `raceday` is not on the PATH: type `{program}` for it "
                "(the join lines the host prints already do).", note=True)]
          if program != "raceday" else []),
        Sub("Start the host"),
        Commands((f"{p} host {ex.id} --seats {','.join(seats)}",)),
        Para("The host prints the session folder and one join line per seat (also in "
             "join.txt in the session folder; **j** on the console shows them again), then "
             "opens the console in the lobby with the clock held at "
             f"{ex.clock.start:%H:%M}."),
        Sub("Each player joins with their own line"),
        Commands(joins),
        Para("Hand each player the line the host printed for their seat: its token opens that "
             "seat only (or set RACEDAY_TOKEN). A player whose terminal dies runs the same "
             "line again and catches up."),
        Sub("The projector"),
        Commands((f"{p} watch transcripts/<session>",)),
        Sub("Start"),
        Items(("Each player presses **F10** when ready (**ctrl+b** in a browser); the console "
               "lists who is ready, who joined but is not, and who is missing.",
               "Press **s** to start the night."), ordered=True),
        Sub("Other rooms"),
        Items((f"Several teams on one clock: `{p} host {ex.id} --teams red,blue --seats "
               f"{','.join(seats)}`; players add `--team red` to their join line; "
               f"`{p} watch transcripts/<group>` shows the leaderboard.",
               f"Players in browsers: `{p} serve --join transcripts/<session> --token=<t1> "
               "--token=<t2>` (a seat per browser).",
               f"One screen, the keyboard passed round (**F2**): `{p} play {ex.id} --mode "
               f"team --pace live --length {ex.length}`.")),
        Sub("The console's keys"),
        Table(("key", "what it does"), tuple((f"**{k}**", w) for k, w in CONSOLE_KEYS)),
    ]
    return Section("logistics", "Logistics and joining", tuple(blocks))


def build_guide(exercise: Exercise, *, program: str = "raceday",
                previous: Exercise | None = None, following: Exercise | None = None) -> Guide:
    """The whole guide. `program` is the command that starts raceday here (the join lines');
    the guide says `raceday` and, when that is another, says what to type instead.
    `previous` and `following` are the acts of the same night around this one, if any."""
    ex = exercise
    facts = (f"{ex.clock.start:%H:%M}-{ex.clock.end:%H:%M} {ex.clock.zone} · about {ex.length} "
             f"min · {ex.level} · {len(ex.roles)} roles · {len(ex.injects)} injects · written "
             f"from exercise `{ex.id}` by `raceday guide`")
    sections = (
        _purpose(ex, previous, following),
        _objectives(ex),
        _roles(ex),
        _logistics(ex, program),
        msel_section(ex),
        answer_key_section(ex),
        pauses_section(ex, following),
        hotwash_section(ex),
    )
    return Guide(f"Facilitator guide: {flat(ex.title)}",
                 "For the facilitator and evaluators: the MSEL and the answer key give the "
                 f"night away. Players read the briefing (`raceday brief {ex.id}`).",
                 facts, sections)
