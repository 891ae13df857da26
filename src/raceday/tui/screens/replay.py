"""The replay, step by step: the race against the team's database, one key at a time.

Opened at once with a loading indicator while the replay runs (about a second, in the
runner's worker); then each step of the replayed night: the automation's run, what its
statements did, the race step it caused or the guard that stopped it, and every endpoint's
DNS answer after it. The last step is the verdict: each race step prevented or not, the good
writes the guards blocked (penalised), the warnings and the score it gives the guards.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from raceday.engine.replaywalk import ReplayWalk, Run, WalkStep, outcome_words
from raceday.engine.snapshot import ANSWERS_SHOWN
from raceday.transcript import events as ev
from raceday.transcript.wording import describe_statement
from raceday.tui.widgets.footer import SteadyFooter
from raceday.tui.widgets.world import EMPTY, OK, Alarms, render_world

REPLAY_HELP = """\
# The replay

raceday played the night again on a fresh copy of your world (your schema, the exercise's
seed data, your edits to the automation) with every role automated, and then the normal
night without the delayed worker, to see whether your guards also block good writes.

| key | does |
|---|---|
| **n**, →, space | next step |
| **p**, ←, backspace | previous step |
| home / end | the first step / the verdict |
| **Esc**, q | back |

The right-hand panel shows the world after the step (from the replay's own fault events;
at the verdict, what the world panel shows, read from the replayed world).
"""

_STATUS = {
    "prevented": (" PREVENTED ", "bold black on green"),
    "happened": (" HAPPENED ", "bold white on red"),
    "not reached": (" not reached ", "dim reverse"),
}
_NARROW = 110
_WIDE = 140
"""From this width the list of steps is shown beside the step."""
_LABEL = 31
_LOADING_BAR = Text(" Replay · running the race against your database…", style="bold")


def _outcome_badge(run: Run) -> Text:
    if run.outcome == "failed":
        return Text(" refused ", style="bold white on red")
    if run.outcome == "zero_rows":
        return Text(" 0 rows changed ", style="bold black on yellow")
    return Text(" applied ", style="bold black on green")


def _statement_lines(run: Run) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for statement in run.statements:
        sql = " ".join(statement.sql.split())
        parts.append(Padding(Text(sql, style="dim"), (0, 0, 0, 2)))
        style = ""
        if not statement.ok:
            style = "bold red"
        elif statement.rows is None and not statement.schema_changed and not statement.rowcount:
            style = "bold yellow"  # a write that changed nothing
        said = Text(f"→ {describe_statement(statement)}", style=style)
        parts.append(Padding(said, (0, 0, 0, 4)))
    return parts


def _run_detail(run: Run, *, full: bool = True) -> list[RenderableType]:
    head = Text()
    head.append(f"{run.time}  ", style="bold")
    head.append(f"{run.role}", style="bold cyan")
    head.append(f": {run.title}  ")
    head.append_text(_outcome_badge(run))
    parts: list[RenderableType] = [head]
    if full:
        parts += _statement_lines(run)
    if run.next:
        parts.append(Text(f"  then the automation: {run.next}", style="italic"))
    for mark in run.marks:
        if isinstance(mark, ev.RaceStep):
            parts.append(Text.assemble((" RACE STEP ", "bold white on red"), " ",
                                       (mark.title or mark.step, "bold red")))
        elif isinstance(mark, ev.Fault):
            parts.append(Text.assemble((" FAULT ", EMPTY), " ", mark.fault))
        elif isinstance(mark, ev.InvariantClear):
            parts.append(Text.assemble((" cleared ", "bold black on green"), " ", mark.fault))
        elif isinstance(mark, ev.CheckFailed):
            parts.append(Text(f"  an exercise check failed: {mark.error}", style="red"))
    if run.guard:
        for line in run.guard.splitlines():
            parts.append(Text.assemble((" GUARD ", "bold black on green"), " ",
                                       (line, "bold green")))
    return parts


def _tally(step: WalkStep) -> Text:
    text = Text()
    for title, count in step.tally:
        text.append(f"  {count:>3} × ", style="dim")
        text.append(title + "\n")
    return text


def step_detail(walk: ReplayWalk, step: WalkStep) -> RenderableType:
    """The step in words (and SQL): what ran, what it did, what it caused or met."""
    if step.kind == "intro":
        return _intro(walk)
    if step.kind == "verdict":
        return verdict(walk)
    title = Text(f"{step.time}  {step.title}\n", style="bold")
    if step.kind == "quiet":
        return Group(title, Text(f"{step.count} automation runs, every one as usual "
                                 "(nothing refused, nothing marked):\n", style="dim"),
                     _tally(step))
    if step.kind == "repeat":
        times = ", ".join(sorted({r.time for r in step.runs}))
        parts: list[RenderableType] = [
            title, Text(f"Each of these {step.count} runs ended the same way: "
                        f"{', '.join(sorted({outcome_words(r) for r in step.runs}))}.\n"),
            _tally(step), Text(f"\nat {times}\n", style="dim"), Text("The first of them:")]
        parts += _run_detail(step.runs[0])
        return Group(*parts)
    parts = _run_detail(step.runs[0])
    if step.happened:
        parts.append(Text("\nThe race got through here: nothing of yours stopped this step.",
                          style="italic red"))
    elif step.guards:
        parts.append(Text("\nYour guard spoke here: the race stops at this step.",
                          style="italic green"))
    return Group(*parts)


def _intro(walk: ReplayWalk) -> RenderableType:
    text = Text()
    text.append("The replay begins\n\n", style="bold")
    text.append("raceday plays the night again on a fresh copy of your world: your schema "
                "(tables, constraints, triggers, views), the exercise's seed data, every role "
                "automated, and the automation's statements as you left them.\n\n")
    if walk.edits:
        text.append("Your edits to the automation: ", style="bold")
        text.append(", ".join(walk.edits) + "\n")
    else:
        text.append("No edits to the automation: only your schema can stop the race.\n")
    steps = [s for s in walk.steps if s.kind not in ("intro", "verdict")]
    if steps:
        text.append(f"\n{len(steps)} steps to the verdict, from {steps[0].time.split('–')[0]} "
                    f"to {steps[-1].time.split('–')[-1]}. ", style="dim")
    text.append("n or → steps forward, p or ← back.", style="dim")
    return text


def verdict(walk: ReplayWalk) -> RenderableType:
    """Every race step prevented or not, the blocked good writes, warnings, the score."""
    parts: list[RenderableType] = [Text("The verdict, race step by race step\n",
                                        style="bold")]
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=13)
    grid.add_column(ratio=1)
    for v in walk.verdicts:
        label, style = _STATUS.get(v.status, (f" {v.status} ", ""))
        row = Text()
        row.append(v.id, style="bold")
        if v.at:
            row.append(f"  at {v.at}")
        if not walk.harms:  # race steps earn points only in exercises that list no harms
            earned = v.worth if v.status == "prevented" else 0
            row.append(f"  +{earned}/{v.worth}", style="green" if earned else "dim")
        row.append(f"\n{v.title}\n", style="dim")
        row.append(v.outcome + (f"; then {v.next}" if v.next else "") + "\n")
        grid.add_row(Text(label, style=style), row)
    parts.append(grid)
    if walk.harms:
        parts.append(Text("\nWhat your guards kept from the customers (this is what scores):",
                          style="bold"))
        for h in walk.harms:
            line = Text(f"  +{h.points}/{h.max} ", style="green" if h.points else "dim")
            line.append(h.title, style="bold")
            if h.baseline and h.minutes == 0:
                line.append(f": kept away ({h.baseline} min without your guards)")
            elif h.baseline:
                since = f" from {h.first_at}" if h.first_at else ""
                line.append(f": {h.minutes} of {h.baseline} min{since} in {h.night}")
            else:
                line.append(": the race never causes it on the exercise's own world")
            parts.append(line)
        for n in walk.normal_harms:
            since = f" from {n.first_at}" if n.first_at else ""
            parts.append(Text(f"  ✗ on {n.night} your world showed {n.harm}{since} for "
                              f"{n.minutes} min (collateral)", style="red"))
    if walk.blocked:
        why = ("each costs collateral; refusing as much as the guards are worth earns nothing"
               if walk.harms else "penalised: a guard that stops the good path is an outage too")
        parts.append(Text(f"\nGood writes your guards blocked on the normal night ({why}):",
                          style="bold red"))
        for b in walk.blocked:
            parts.append(Text(f"  ✗ {b.task} at {b.at}: {b.outcome}", style="red"))
    else:
        parts.append(Text("\nOn the normal night (without the delayed worker) every good "
                          "write still took.", style="green"))
    for warning in walk.warnings:
        parts.append(Text(f"⚠ {warning}", style="yellow"))
    score = Text("\nScore: ", style="bold")
    score.append(f"guards {walk.points}/{walk.max_points} from this replay", style="bold")
    if walk.harms:
        kept = sum(h.points for h in walk.harms)
        score.append(f"  ({kept} for the harm kept away")
        if walk.penalty:
            score.append(f", −{walk.penalty} collateral", style="red")
    else:
        prevented = sum(v.worth for v in walk.verdicts if v.status == "prevented")
        score.append(f"  ({prevented} for the race steps prevented")
        if walk.penalty:
            score.append(f", −{walk.penalty} for the blocked good writes", style="red")
    score.append("). The session's score uses the latest replay; the good path is tried "
                 "once more when the session ends.", style="dim")
    parts.append(score)
    return Group(*parts)


def world_after(walk: ReplayWalk, step: WalkStep) -> RenderableType:
    """Every endpoint's DNS answer after the step; at the verdict, the replayed world's."""
    if step.kind == "verdict" and walk.final_world is not None:
        title = Text("The replayed world at the end\n", style="bold")
        return Group(title, render_world(walk.final_world, Alarms()), *_faults(step))
    lines: list[RenderableType] = [Text(f"After {step.time or 'the start'}", style="bold")]
    if walk.endpoints:
        total = len(walk.endpoints)
        if walk.final_world is not None:  # a world of many: the walk names only a few
            total = max(total, walk.final_world.endpoint_counts[0])
        answering = total - len(step.empty)
        lines.append(Text(f"DNS: {answering:,} of {total:,} endpoints answer",
                          style="bold" if step.empty else OK))
        # what is wrong first, then a count: no step's cost grows with the world
        named = [*step.empty, *(n for n in walk.endpoints if n not in step.empty)]
        if len(named) > ANSWERS_SHOWN or total > len(named):
            named = named[:ANSWERS_SHOWN]
        else:
            named = list(walk.endpoints)
        for name in named:
            empty = name in step.empty
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append("✗ " if empty else "✓ ", style="bold red" if empty else OK)
            line.append(name, style="bold red" if empty else "")
            lines.append(line)
            lines.append(Text("  EMPTY ANSWER: no addresses " if empty else "  answers",
                              style=EMPTY if empty else "dim"))
        if total > len(named):
            lines.append(Text(f"… and {total - len(named):,} more endpoints", style="dim"))
    return Group(*lines, *_faults(step))


def _faults(step: WalkStep) -> list[RenderableType]:
    parts: list[RenderableType] = []
    if not step.faults:
        parts.append(Text("\nno fault", style="dim"))
        return parts
    parts.append(Text("\nFaults", style="bold underline"))
    parts += [Text(f" ✗ {fault} ", style=EMPTY) for fault in step.faults]
    return parts


def _step_label(step: WalkStep) -> Text:
    mark, style = "·", "dim"
    if step.kind == "run" and step.happened:
        mark, style = "✗", "bold red"
    elif step.kind == "run" and step.guards:
        mark, style = "✓", "bold green"
    elif step.kind in ("intro", "verdict"):
        mark, style = "■", "bold"
    elif step.kind == "repeat":
        mark, style = "×", ""
    elif step.kind == "run":
        mark, style = "▸", ""
    when = step.time.split("–")[0]
    title = step.title if len(step.title) <= _LABEL - 8 else step.title[:_LABEL - 9] + "…"
    return Text.assemble((f"{mark} ", style), (f"{when:<5} ", "dim"), (title, style))


def _page_words(walk: ReplayWalk, index: int) -> str:
    """Where the bar says the reader is: "intro", "step 3/24" or "verdict". The intro and
    the verdict are pages, not steps, so the count agrees with the intro's "24 steps to the
    verdict"."""
    kind = walk.steps[index].kind
    if kind in ("intro", "verdict"):
        return kind
    steps = [i for i, s in enumerate(walk.steps) if s.kind not in ("intro", "verdict")]
    return f"step {steps.index(index) + 1}/{len(steps)}"


class ReplayScreen(Screen[None]):
    HELP = REPLAY_HELP
    BINDINGS = [
        Binding("n,right,space", "step(1)", "Next", priority=True),
        Binding("p,left,backspace", "step(-1)", "Previous", priority=True),
        Binding("home", "go(0)", "First", show=False, priority=True),
        Binding("end", "go(-1)", "Verdict", priority=True),
        # the detail is what a person pages through; the step list is hidden below _WIDE
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
        Binding("escape,q", "close", "Back", priority=True),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.walk: ReplayWalk | None = None
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Static(_LOADING_BAR, id="replay-bar")
        with Vertical(id="replay-loading"):
            # no animation: the replay takes a fraction of a second, and each frame of an
            # animated indicator is drawn by the thread the replay's worker waits on
            yield Static("Replaying the night on a copy of your world:\nthe race, then the "
                         "normal night without the delayed worker…",
                         id="replay-loading-text")
        body = Horizontal(id="replay-body")
        body.display = False  # hidden from the start: laid out once, when the walk is in
        with body:
            yield OptionList(id="replay-steps")
            with VerticalScroll(id="replay-detail-scroll"):
                yield Static("", id="replay-detail")
            with VerticalScroll(id="replay-world-scroll"):
                yield Static("", id="replay-world")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._layout_for(self.app.size.width)
        if self.walk is not None:  # answered before this screen was composed
            self._show_walk(self.walk)

    def on_resize(self) -> None:
        self._layout_for(self.app.size.width)

    def on_screen_resume(self) -> None:  # pushed again (kept between presses): resized since?
        self._layout_for(self.app.size.width)

    def _layout_for(self, width: int) -> None:
        self.set_class(width < _NARROW, "-narrow")
        self.set_class(width >= _WIDE, "-wide")
        # a hidden list must not keep the keys: paging it with no lines drawn raised KeyError
        steps = self.query_one("#replay-steps", OptionList)
        steps.can_focus = width >= _WIDE
        if not steps.can_focus and steps.has_focus:
            self.query_one("#replay-detail-scroll").focus()

    def begin(self) -> None:
        """Back to the loading view for the next replay: the play screen keeps this screen
        between ctrl+r presses (composed once), so nothing of the last walk may stay."""
        self.walk = None
        self.index = 0
        self.query_one("#replay-bar", Static).update(_LOADING_BAR)
        self.query_one("#replay-loading").display = True
        self.query_one("#replay-body").display = False
        self.query_one("#replay-steps", OptionList).clear_options()
        for part in ("#replay-steps", "#replay-world-scroll"):  # hidden for a failed replay
            self.query_one(part).styles.clear_rule("display")
        self.query_one("#replay-detail", Static).update("")
        self.query_one("#replay-world", Static).update("")
        self.query_one("#replay-world-scroll").scroll_home(animate=False)

    # -- the walk arrives ------------------------------------------------------------------------

    def show_walk(self, walk: ReplayWalk) -> None:
        self.walk = walk
        if self.is_mounted:  # else not composed yet: on_mount shows it
            self._show_walk(walk)

    def _show_walk(self, walk: ReplayWalk) -> None:
        self.query_one("#replay-loading").display = False
        body = self.query_one("#replay-body")
        body.display = True
        if walk.error is not None:
            self.query_one("#replay-steps").display = False
            self.query_one("#replay-world-scroll").display = False
            self.query_one("#replay-detail", Static).update(Text.assemble(
                (" No replay ", "bold white on red"), f" {walk.error}"))
            self.query_one("#replay-bar", Static).update(Text(" Replay · not available",
                                                              style="bold"))
            return
        steps = self.query_one("#replay-steps", OptionList)
        steps.add_options([Option(_step_label(s), id=str(i)) for i, s in enumerate(walk.steps)])
        self.show(0)

    def failed(self, error: str) -> None:
        self.show_walk(ReplayWalk(error=error))

    # -- moving ----------------------------------------------------------------------------------

    def show(self, index: int) -> None:
        walk = self.walk
        if walk is None or not walk.steps:
            return
        self.index = max(0, min(index, len(walk.steps) - 1))
        step = walk.steps[self.index]
        self.query_one("#replay-detail", Static).update(step_detail(walk, step))
        self.query_one("#replay-world", Static).update(world_after(walk, step))
        self.query_one("#replay-detail-scroll").scroll_home(animate=False)
        bar = Text()
        bar.append(" Replay ", style="bold reverse")
        bar.append(f"  {_page_words(walk, self.index)}")
        if step.time:
            bar.append(f" · {step.time}")
        bar.append(f" · prevented {len(walk.prevented)}/{len(walk.verdicts)}"
                   f" · guards {walk.points}/{walk.max_points}", style="bold")
        self.query_one("#replay-bar", Static).update(bar)
        steps = self.query_one("#replay-steps", OptionList)
        if steps.highlighted != self.index:
            with steps.prevent(OptionList.OptionHighlighted):  # not an echo of our own move
                steps.highlighted = self.index

    @property
    def step(self) -> WalkStep | None:
        return self.walk.steps[self.index] if self.walk and self.walk.steps else None

    @on(OptionList.OptionHighlighted, "#replay-steps")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != self.index:
            self.show(event.option_index)

    def action_step(self, delta: int) -> None:
        self.show(self.index + delta)

    def action_go(self, index: int) -> None:
        if self.walk is not None:
            self.show(index if index >= 0 else len(self.walk.steps) - 1)

    def action_page(self, direction: int) -> None:
        scroll = self.query_one("#replay-detail-scroll", VerticalScroll)
        if direction > 0:
            scroll.scroll_page_down(animate=False)
        else:
            scroll.scroll_page_up(animate=False)

    def action_close(self) -> None:
        self.dismiss()
