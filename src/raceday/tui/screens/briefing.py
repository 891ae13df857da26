"""The briefing: the situation, the roles, the world's tables, what is scored; Enter starts."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from raceday.engine import collector
from raceday.inert import inert
from raceday.tui.briefing_body import keep_body, read_body
from raceday.tui.briefing_head import BriefingHead, load_keeping_head
from raceday.tui.navigation import navigator
from raceday.tui.prerendered import Prerendered
from raceday.tui.screens.crash import WorkingScreen
from raceday.tui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from pathlib import Path

    from raceday.exercise.model import Exercise
    from raceday.store.results import TableInfo
    from raceday.tui.settings import Settings


def _md(text: str) -> str:
    """Make a value safe in a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def situation_markdown(exercise: Exercise, settings: Settings) -> str:
    clock = exercise.clock
    held = ", ".join(exercise.default_roles) or "none"
    unknown = settings.unknown and exercise.replay is not None \
        and exercise.replay.nights is not None
    summary = ("An unknown night on this exercise's world: it may pass quietly, or something "
               "may go wrong; which night it was is told at the end." if unknown
               else " ".join(exercise.summary.split()))
    lines = [
        f"# {exercise.title}",
        "",
        f"*{summary}*",
        "",
        f"About {exercise.length} minutes · level {exercise.level} · the clock runs "
        f"{clock.start:%H:%M}–{clock.end:%H:%M} {clock.zone} · mode **{settings.mode}** · "
        f"pace **{settings.pace.value}**"
        + (f" at {settings.speed_for(exercise):g}x (the night lasts about "
           f"{clock.length_minutes / settings.speed_for(exercise):.0f} real minutes)"
           if settings.pace.value == "live" else ""),
        "",
    ]
    briefing = exercise.briefing.strip()
    if unknown:
        from raceday.engine.unknown_night import unknown_briefing

        briefing = unknown_briefing(exercise)  # something may go wrong tonight, not what
    if briefing:
        lines += [briefing, ""]
    lines += ["## Roles", "", "| role | who | may write | try first |", "|---|---|---|---|"]
    for role in exercise.roles:
        writes = ", ".join(role.write) or "nothing"
        if role.break_glass:
            writes += f"; break-glass: {', '.join(role.break_glass)}"
        if role.schema:
            writes += "; may add guards (schema)"
        example = f"`{_md(role.example)}`" if role.example else ""
        lines.append(f"| **{role.id}** | {_md(role.name)} | {_md(writes)} | {example} |")
    lines += ["", f"Solo you play **{held}**; every role nobody plays is run by the automation, "
              "with exactly the SQL the exercise gives it.", ""]
    for role in exercise.roles:
        if role.briefing:
            lines.append(f"- **{role.name}**: {' '.join(role.briefing.split())}")
    if not _SCORING_HEADING.search(exercise.briefing):  # said once: the exercise's own words
        lines += ["", scoring_markdown(exercise)]
    return "\n".join(lines)


_SCORING_HEADING = re.compile(r"^#+ .*\bscor(?:e|ed|ing)\b", re.IGNORECASE | re.MULTILINE)
"""A briefing that has its own scoring section (`## How you are scored`) gets no second."""


def scoring_markdown(exercise: Exercise) -> str:
    scoring = exercise.scoring
    lines = ["## What is scored", ""]
    if scoring.detection:
        d = scoring.detection
        that_night = (f" That night it took {d.event_minutes} minutes."
                      if d.event_minutes is not None else "")
        lines.append(f"- **Detection ({d.points})**: how soon after the fault begins you surface "
                     f"it, with a monitor that alerts on it or a right finding. Full marks "
                     f"within {d.full_within} min, none after {d.zero_after} min."
                     f"{that_night}"
                     + (f" A wrong finding costs {d.wrong_finding_cost}."
                        if d.wrong_finding_cost else ""))
    if scoring.guards:
        g = scoring.guards
        steps = "; ".join(s.title or s.id for s in g.steps)
        lines.append(f"- **Guards ({g.points})**: judged by effect, never by the SQL's text: "
                     f"each step of the race your guards prevent scores ({steps}). A guard that "
                     "also blocks the good path loses points.")
    if scoring.recovery:
        r = scoring.recovery
        items = "; ".join(f"{i.title} ({i.points})" for i in r.items)
        that_night = (f" That night: {r.event_minutes // 60} h {r.event_minutes % 60} min."
                      if r.event_minutes is not None else "")
        lines.append(f"- **Recovery ({r.points})**: {items}.{that_night}")
    if scoring.tasks:
        lines.append(f"- **Tasks ({scoring.tasks})**: the tasks of the roles you play, done "
                     "in time.")
    if exercise.hints:
        lines.append(f"- Hints are on offer ({len(exercise.hints)}); each one revealed costs "
                     "points, and the score says so.")
    return "\n".join(lines)


def schema_markdown(exercise: Exercise, tables: list[TableInfo]) -> str:
    lines = ["## The world's tables", "", "| table | columns |", "|---|---|"]
    for info in tables:
        cols = ", ".join(c.name + (" (pk)" if c.pk else "") for c in info.columns)
        kind = " *(view)*" if info.kind == "view" else ""
        lines.append(f"| **{info.name}**{kind} | {_md(cols)} |")
    examples = [r for r in exercise.roles if r.example]
    if examples:
        lines += ["", "Try first, as each role:", ""]
        for role in examples:
            lines += [f"**{role.id}**", "", "```sql", role.example.strip(), "```", ""]
    return "\n".join(lines)


def import_play_screen() -> None:
    """The play screen's module, imported in a worker thread before Enter asks for it."""
    import raceday.tui.screens.play  # noqa: F401


def read_schema(exercise: Exercise) -> list[TableInfo]:
    """The world's tables, built by the store in use and thrown away (a worker thread only)."""
    from raceday.engine.world_tables import describe_exercise_world

    return describe_exercise_world(exercise)


@dataclass(frozen=True)
class PendingExercise:
    """An exercise not loaded yet (`raceday play ID`): its folder, and what the briefing's
    first frame shows of it. The briefing loads it in a worker once that frame is drawn."""

    path: Path
    head: BriefingHead


SCREENFUL_CHARS = 1500
"""About a screen of the briefing's Markdown: rendered and shown before the rest."""


def first_screenful(text: str) -> int:
    """Where to cut the Markdown after about a screenful: at the first `## ` heading past
    SCREENFUL_CHARS (outside a fenced block), or 0 (render it whole)."""
    at = text.find("\n## ", SCREENFUL_CHARS)
    while at > 0 and text.count("```", 0, at) % 2:
        at = text.find("\n## ", at + 1)
    return max(at, 0)


KEPT_LINES = 100
"""How many of the situation's lines are kept for the next start: a tall terminal's screen."""


def _first_lines(segments: list[Segment], count: int) -> list[Segment] | None:
    """The first `count` lines of `segments`, or None while they are fewer."""
    lines = list(islice(Segment.split_lines(segments), count))
    if len(lines) < count:
        return None
    return [segment for line in lines for segment in (*line, Segment.line())]


DRAWN_WAIT_S = 0.5
"""At most this long the briefing's rendering waits for the part it showed to be drawn."""


class BriefingScreen(WorkingScreen):
    HELP = """\
# The briefing

Read the situation, the roles and what is scored, then press **Enter** to start
(in team mode you first say who plays which role). **Escape** goes back.
"""

    BINDINGS = [
        Binding("enter", "start", "Start", priority=True),
        Binding("escape", "back", "Back"),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    @dataclass
    class Rendered(Message):
        """A part of the briefing rendered (in a worker) at `width` columns."""

        part: str  # "situation" or "schema"
        lines: Prerendered
        width: int

    @dataclass
    class Loaded(Message):
        """The pending exercise loaded (in a worker), or why it does not load: a problem of
        the exercise, or a bug (any other exception, which the CLI reports as internal)."""

        exercise: Exercise | None
        error: Exception | None = None

    def __init__(self, exercise: Exercise | PendingExercise, settings: Settings) -> None:
        super().__init__()
        if isinstance(exercise, PendingExercise):
            self.pending: PendingExercise | None = exercise
            self.exercise: Exercise | None = None
            self.head = exercise.head
        else:
            self.pending, self.exercise = None, exercise
            self.head = BriefingHead.of(exercise)
        self.settings = settings
        self.rendered_width = 0  # the width the Markdown was rendered at
        self._situation_drawn = threading.Event()  # the situation posted last is on screen
        self.start_asked = False  # Enter pressed before the exercise was loaded
        self.load_started = False  # the pending exercise's load worker was started
        self.kept_shown = False  # the first screenful as the last start drew it is shown

    def compose(self) -> ComposeResult:
        yield Static(self._bar(self.head), id="briefing-bar")
        with VerticalScroll(id="briefing-scroll"):
            # the first frame shows the title and summary; the Markdown (its parser imported
            # and the whole text rendered in a worker, never on the event loop) replaces it
            yield Static(self._title(self.head), id="situation")
            yield Static("", id="schema")
        yield SteadyFooter()

    @staticmethod
    def _bar(head: BriefingHead) -> Text:
        """The bar as typed: a title is the author's text, never markup (`[red]` is shown)."""
        return Text(f" Briefing · {inert(head.title, one_line=True)} · {head.start} "
                    f"{inert(head.zone, one_line=True)}   Enter starts")

    @staticmethod
    def _title(head: BriefingHead) -> Text:
        return Text.assemble((head.title, "bold"), "\n\n", (head.summary, "italic"))

    def on_mount(self) -> None:
        self.query_one("#briefing-scroll").focus()
        self.call_after_refresh(self._first_look if self.pending is not None else self._fill)

    def _view(self) -> str:
        """What the situation's lines depend on besides the exercise and the width."""
        s = self.settings
        return (f"{s.mode} {s.pace.value} {s.speed!r} {s.length!r} "
                f"{self.app.console.color_system}")

    def _first_look(self) -> None:
        """The first screenful as the last start drew it (kept), then the load: the body is
        on screen while the exercise loads, and its rendering replaces it."""
        assert self.pending is not None
        if self.load_started:  # Enter came with the first frame: the load is under way
            return
        width = self.query_one("#situation", Static).content_region.width
        kept = read_body(self.pending.path, self._view(), width)
        if kept is not None:
            self.query_one("#situation", Static).update(Prerendered(kept))
            self.kept_shown = True
        self._start_load()

    def _start_load(self) -> None:
        if not self.load_started:
            self.load_started = True
            self._load()

    def on_resize(self) -> None:
        if self.rendered_width:
            self.call_after_refresh(self._fill)

    def on_screen_resume(self) -> None:  # back from the cast screen: left half-rendered?
        if self.exercise is not None and not self.rendered_width:
            self.call_after_refresh(self._fill)

    @work(thread=True, exclusive=True, exit_on_error=False, group="briefing-load")
    def _load(self) -> None:
        """Load the pending exercise (YAML, checks, its world built and its SQL compiled) off
        the event loop, once the first frame is drawn.

        Any exception, not only the exercise's problems, ends the app and is raised again by
        `launch`: the CLI then says it as it does for a load before the screen opens (a bug
        is its one "internal error" line, exit 1). Left to the worker, a bug was lost: a
        screen's worker's state change does not bubble to the app's backstop, so the
        briefing waited for a load that never came and Enter did nothing."""
        assert self.pending is not None
        try:
            exercise = load_keeping_head(self.pending.path, self.pending.head)
            # Loaded starts the rendering, which imports the Markdown parser (~50 ms) and
            # cannot be stopped in an import: with the first screenful already shown (kept),
            # it waits for the play screen's module, so an Enter pressed as the briefing
            # shows waits for that module alone, and nothing is rendered after it
            loaded_first = not self.start_asked and not self.kept_shown
            if loaded_first:
                self.post_message(self.Loaded(exercise))
            # Enter pushes the play screen, whose module (the session, the event codec, the
            # widgets: about 100 ms) would be imported on the event loop: imported here, at
            # once (an Enter pressed while the briefing renders waits for it, not for the
            # rendering), before the play screen opens if Enter came first
            import_play_screen()

            if not loaded_first:
                self.post_message(self.Loaded(exercise))
            collector.settle()  # the exercise and the modules that read it
        except Exception as exc:
            self.post_message(self.Loaded(None, exc))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.exercise is None:  # raised by `launch` once the screen is gone: one line
            assert message.error is not None
            navigator(self.app).load_failed(message.error)
            return
        exercise = self.exercise = message.exercise
        navigator(self.app).exercise = exercise
        head = BriefingHead.of(exercise)
        if head != self.head:  # the file edited since its head was read (kept afresh)
            self.head = head
            self.query_one("#briefing-bar", Static).update(self._bar(head))
            self.query_one("#situation", Static).update(self._title(head))
        if self.start_asked:  # Enter came first: play opens now, nothing rendered for none
            self.action_start()
            return
        self._fill()

    def _fill(self) -> None:
        if not self.is_current or self.exercise is None:  # under play, or not loaded yet
            return
        width = self.query_one("#situation", Static).content_region.width
        if width > 0 and width != self.rendered_width:
            self.rendered_width = width
            self._render_markdown(self.exercise, width)

    @work(thread=True, exclusive=True, exit_on_error=False, group="briefing")
    def _render_markdown(self, exercise: Exercise, width: int) -> None:
        """Render the Markdown once, off the event loop (Static would render it twice: once
        for its height, once to draw it). Enter stops it within a few blocks (it renders
        again on return): left to finish, it held the interpreter while the play screen
        opened, tripling the wait for an Enter pressed as the briefing showed."""
        worker = get_current_worker()
        text = situation_markdown(exercise, self.settings)
        cut = first_screenful(text)
        # The top first (what the screen shows), then the whole. Each part waits for the
        # frame that shows the one before (at most DRAWN_WAIT_S): rendered at once, it held
        # the interpreter while the event loop drew it.
        shown: list[Segment] = []
        kept = False
        parts = [text[:cut], text[cut:]] if cut else [text]
        for n, part in enumerate(parts, 1):
            lines = self._markdown(part, width, worker)
            if lines is None:  # the briefing was left
                return
            if shown:  # Rich puts one blank line between blocks: the parts are the whole
                shown.append(Segment.line())
            shown += lines.segments
            if not kept:  # a screenful of lines, however the parts fall (the first part
                # ended above the roles on a 120x40 screen: they waited for the whole load)
                screenful = _first_lines(shown, KEPT_LINES)
                if screenful is None and n == len(parts):
                    screenful = shown  # all of it is less than a screenful
                if screenful is not None:
                    self._keep(exercise, width, screenful)
                    kept = True
            self._post_situation(Prerendered(list(shown)), width)
            if worker.is_cancelled:
                return
        try:
            text = schema_markdown(exercise, read_schema(exercise))
        except Exception as exc:
            text = f"*The world's tables could not be read: {exc}*"
        schema = self._markdown(text, width, worker)
        if schema is None:
            return
        self.post_message(self.Rendered("schema", schema, width))
        # opened from the launcher, the exercise was loaded there: the play screen's module
        # is imported here (a briefing that loaded its exercise has imported it already)
        import_play_screen()

        collector.settle(collect=True)  # the player reads: a full walk costs nobody a wait

    def _keep(self, exercise: Exercise, width: int, screenful: list[Segment]) -> None:
        """Keep the first screenful for the next start's first frames (a worker thread)."""
        if exercise.path is not None:
            keep_body(exercise.path, self._view(), width, screenful)

    def _post_situation(self, lines: Prerendered, width: int) -> None:
        """Show the situation's lines; return once they are drawn (a worker thread only)."""
        self._situation_drawn.clear()
        self.post_message(self.Rendered("situation", lines, width))
        self._situation_drawn.wait(DRAWN_WAIT_S)

    def _markdown(self, text: str, width: int, worker: Worker[None]) -> Prerendered | None:
        """`text` rendered at `width`, or None once `worker` is cancelled (Rich renders
        block by block: the check runs between them)."""
        from rich.markdown import Markdown as RichMarkdown

        console = self.app.console
        options = self.app.console_options.update_width(width).update(highlight=False)
        segments: list[Segment] = []
        for n, segment in enumerate(console.render(RichMarkdown(text), options)):
            if n % 16 == 0 and worker.is_cancelled:
                return None
            segments.append(segment)
        return Prerendered(segments)

    @on(Rendered)
    def _rendered(self, message: Rendered) -> None:
        if message.width == self.rendered_width:
            self.query_one(f"#{message.part}", Static).update(message.lines)
        if message.part == "situation":
            self.call_after_refresh(self._situation_drawn.set)

    def action_start(self) -> None:
        if self.exercise is None:  # started as soon as it is loaded
            self.start_asked = True
            if self.pending is not None:  # the first frame is on screen: load at once
                self._start_load()
            return
        if any(w.node is self and w.group == "briefing" and not w.is_finished
               for w in self.workers):  # still rendering: stop (it renders again on return)
            self.workers.cancel_group(self, "briefing")
            self.rendered_width = 0
        app = navigator(self.app)
        if self.settings.mode == "team":
            app.open_cast(self.exercise)
        else:
            cast = {role: "" for role in self.exercise.default_roles}
            app.start_play(self.exercise, cast)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:  # the launcher is below (the stack's base)
            self.app.pop_screen()
