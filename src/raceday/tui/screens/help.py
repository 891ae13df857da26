"""F1 / ?: the keys of the screen you are on, and how to play."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

if TYPE_CHECKING:
    from raceday.exercise.model import Exercise

PLAY_HELP = """\
# How to play

{opening}

| key | does |
|---|---|
| **F5**, ctrl+enter, ctrl+j | run the statement under the cursor (or the selection) |
| **F6** | run everything in the editor |
| **Esc** | cancel a statement that is still running |
| ctrl+a | select everything in the editor (typing then replaces it) |
| ctrl+l | clear the editor (ctrl+z brings it back) |
| tab, ctrl+space | complete a table or column name (tab with nothing to complete moves on) |
| ctrl+up / ctrl+down | this role's earlier / later submissions |
{f2}| alt+arrows | scroll the results (sideways and by rows) without leaving the editor |
| alt+pgup / alt+pgdn | after F6: the earlier / later statements' grids |
| enter (results) | the cell's whole value: long text, a table's DDL (Esc closes) |
| →, ←, enter, space | Schema tab: open / close a table (tab reaches its tree) |
| **F3** | side panel tabs: Tasks, then Schema, then Monitors (see below) |
| **F7** | save a monitor: a query that alerts when it returns rows |
| **F8** | declare a finding: Enter names it, Enter again declares it (a wrong one costs points) |
| **F9** | reveal a hint (costs points; the score says so) |
| ctrl+y | put the newest hint taken into the editor (its SQL; its words as comments) |
| ctrl+n | let the clock run to the next inject (turns pace: time moves when you act) |
| ctrl+t | pause / resume the clock (live pace) |
| ctrl+g | change the speed (live pace) |
| **F4** | harden: the automation's own statements, each in an editor (save, put back) |
| ctrl+r | replay the automation's night against your database, then step through it |
| ctrl+f | facilitator: injects (one role or all, now or later), pause, speed, skip |
| ctrl+o | an observer's note (who, what), stamped with the clock, for the debrief |
| ctrl+p | command palette: every action by name |
| ctrl+q | end the session (asks first) and see the score |

The side panel: F3 steps through its tabs (Tasks, Schema, Monitors). On a small screen F3
first opens it in the results' place, then steps through the tabs, then closes it (Esc
closes it too).

Time: in the *turns* pace each statement costs the exercise's minutes (one that failed, was
refused or cancelled costs none) and ctrl+n waits for the next event; in the *live* pace
the clock runs by itself at the chosen speed.

Scoring: how fast you surface the fault (a monitor that alerts on it, or a right finding),
which guards keep the harm away when the night is replayed, and how safely you recover.
Every point comes with its reason at the end; the transcript is saved under `transcripts/`.
"""

F2_ROW = "| **F2** | hot seat: pass the keyboard to the next role (each keeps its own editor) |\n"


def play_help(exercise: Exercise, *, seats: int, onboarding: bool) -> str:
    """How to play this exercise: its world panel in its own words, F2 only with a hot seat."""
    labels = [item.label for item in exercise.panel if onboarding or not item.onboarding]
    if labels:
        panel = (f"The world panel shows {_listed(labels)} as they are now (what is wrong, "
                 "you find" + ("; onboarding names the fault for you)." if onboarding
                               else "; only onboarding names the fault for you)."))
    else:
        panel = ("What the world holds you find by query: the Schema tab (F3) lists its "
                 "tables" + ("; the world panel names the fault for you." if onboarding
                             else "."))
    opening = (f"You sit at one role's keyboard (its name is on the editor). Type SQL, run it, "
               f"read the result. The clock shows the exercise's time in "
               f"{exercise.clock.zone}; the feed says what happens, newest last; alarms are "
               f"red. {panel}")
    return PLAY_HELP.format(opening=_wrapped(opening), f2=F2_ROW if seats > 1 else "")


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _wrapped(text: str) -> str:
    import textwrap

    return textwrap.fill(text, 92)

GENERAL_HELP = """\
# raceday

| key | does |
|---|---|
| enter | choose / go on |
| escape | back |
| F1, ? | this help |
| ctrl+p | command palette |
| ctrl+q | quit |
"""


class HelpScreen(ModalScreen[None]):
    """A page of help over the current screen; any of Esc, F1, q closes it."""

    BINDINGS = [Binding("escape,f1,q,question_mark", "dismiss", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__(classes="dialog-screen")
        self.text = text

    def compose(self) -> ComposeResult:
        from rich.markdown import Markdown as RichMarkdown  # not needed for the first frame

        with VerticalScroll(classes="dialog dialog-help"):
            yield Static(RichMarkdown(self.text))
            yield Static("Esc closes", classes="dialog-note")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


class TooSmallScreen(Screen[None]):
    """Shown instead of a broken layout while the terminal is too small."""

    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit", priority=True)]

    def __init__(self, width: int, height: int, need: tuple[int, int]) -> None:
        super().__init__()
        self.need = need
        self.now = (width, height)

    def compose(self) -> ComposeResult:
        yield Static(self._text(), id="too-small")

    def _text(self) -> str:
        return (f"raceday needs a terminal of at least {self.need[0]}x{self.need[1]}.\n"
                f"This one is {self.now[0]}x{self.now[1]}: make it bigger to go on.\n"
                "(Nothing is lost; ctrl+q quits.)")

    def resized(self, width: int, height: int) -> None:
        self.now = (width, height)
        self.query_one("#too-small", Static).update(self._text())

    def on_screen_resume(self) -> None:
        """Shown again after a screen above it closed (help opened while small): the terminal
        may have grown meanwhile, and no resize will come to say so."""
        width, height = self.app.size
        if width >= self.need[0] and height >= self.need[1]:
            self.app.pop_screen()
