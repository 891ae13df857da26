"""The facilitator's console screen for a team session: who sits where, the clock,
injects, hints previewed before they go out, observer notes, and a private panel (the answer
key and the live verdicts) that no player's screen shows.

The screen reaches its host through its runner (`console_runner.py`): the facilitator's keys
become calls the host's thread runs, and the session comes back from session.db as a seat
reads it, private events included. The apps that show it are in `console_app.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from raceday.engine.clock import speed_choices
from raceday.engine.snapshot import PendingView, Snapshot
from raceday.engine.task_progress import TaskProgress, automation_work
from raceday.inert import inert
from raceday.team.client import Clock, View
from raceday.team.due_work import due_work
from raceday.team.group import Teams
from raceday.team.host import Host
from raceday.transcript import events as ev
from raceday.transcript.log import read_events
from raceday.tui.messages import EngineEvent, JobFailed, Refreshed
from raceday.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, InjectDialog, InjectRequest
from raceday.tui.team.console_dialogs import JoinDialog, NoteDialog
from raceday.tui.team.console_runner import ConsoleRunner
from raceday.tui.team.seat_runner import HostClock
from raceday.tui.team.verdicts import Verdicts
from raceday.tui.widgets.feed import EventFeed
from raceday.tui.widgets.footer import SteadyFooter
from raceday.tui.widgets.world import Alarms, WorldPanel

EVERYONE = "*everyone*"
NOW = "*now*"

TASK_PREFIX = "\x1ftask:"
"""Marks a due story task among the seats in the automate dialog (a seat's name is printable,
so it never starts with a control character)."""


class ConsoleScreen(Screen[None]):
    class EveryTeamScored(Message):
        """One of several teams' consoles heard the last team's score: the group's app
        shows the leaderboard."""

    BINDINGS = [
        Binding("s", "start", "Start"),
        Binding("space,ctrl+t", "pause", "Pause/resume"),
        Binding("g", "speed", "Speed"),
        Binding("n", "skip", "Skip to next"),
        Binding("i", "inject", "Inject"),
        Binding("m", "inject_list", "Injects list"),
        Binding("h", "hint", "Hint"),
        Binding("o", "note", "Note"),
        Binding("r", "rule", "Rule"),
        Binding("j", "join_info", "Join info"),
        Binding("a", "hand_over", "Automate seat"),
        Binding("f", "hold_fault", "Hold fault"),
        Binding("v", "share", "Hide answers"),
        Binding("w", "projector_sql", "SQL on projector"),
        Binding("e", "end", "End"),
    ]

    def __init__(self, host: Host, view: View, group: Teams | None = None) -> None:
        super().__init__()
        self.host = host
        self.group = group
        """Set when the facilitator runs several teams: the clock keys act on every team."""
        self.runner = ConsoleRunner(host, view, self)
        self.exercise = host.exercise
        self.snapshot: Snapshot | None = None
        self.clock = Clock()
        self.alarms = Alarms(show_faults=True)
        self.verdicts = Verdicts()
        if host.night is not None:  # the console knows the drawn night; the seats do not
            later = f", {host.night.later} min later" if host.night.later else ""
            self.verdicts.night = f"{host.night.title}{later}"
        self._caught_up = False
        """Whether the follower's first look (every event so far) has been taken in."""
        self._asked_early: list[Callable[[], None]] = []
        """Keys pressed before that, which read the session's history: done once it is in."""
        self.handled = TaskProgress(host.exercise)
        """Open tasks a seat's own panel has ticked: not overdue on the console either."""
        self.seated: dict[str, tuple[str, str, str]] = {}  # seat -> (role, player, status)
        self.last_action: dict[str, str] = {}
        self.handed: set[str] = set()
        """Roles whose routine tasks the automation runs (the facilitator handed them)."""
        self.fault_held = False
        """The facilitator holds the night's fault step (f): it waits for their release."""
        self.sharing = False
        """Screen sharing: the answer key, the live verdicts, the scorer's feed and the
        observer notes are hidden; the feed shows what the players see."""

    @property
    def steer(self) -> Host | Teams:
        """What the clock keys act on: every team at once, or the one host."""
        return self.group if self.group is not None else self.host
    def compose(self) -> ComposeResult:
        yield Static("", id="console-header")
        with Horizontal(id="console-body"):
            with Vertical(id="console-main"):
                yield Static("", id="console-seats")
                yield EventFeed(judge=True, id="console-feed")
                yield EventFeed(judge=False, id="console-feed-shared")
            with VerticalScroll(id="console-private"):
                yield WorldPanel(id="console-world")
                yield Static("", id="console-verdicts")
                yield Static(self._answer_key(), id="console-key")
        yield SteadyFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#console-seats", Static).border_title = "Seats"
        self.query_one("#console-feed", EventFeed).border_title = "Everything (incl. notes)"
        self.query_one("#console-feed-shared", EventFeed).border_title = \
            "What the players see (screen sharing: v shows the answers again)"
        self.query_one("#console-verdicts", Static).border_title = \
            "Live verdicts (facilitator only)"
        self.query_one("#console-key", Static).border_title = "Answer key (facilitator only)"
        for seat in self.host.seats.values():
            self.seated[seat.name] = (seat.role, "—", "empty")
        self._show_all()
        self.runner.follow()

    # -- what the host says ------------------------------------------------------------

    def _taken_down(self) -> bool:
        """The follower's messages may still arrive while the screen is being removed (a
        group's console switching teams) or the app is closing (a screen installed but not
        shown has its panels closed before itself): the panels are gone first, so nothing
        is shown."""
        return (self._pruning or not self.is_attached or not self.app.is_running
                or not self.query("#console-feed"))

    @on(EngineEvent)
    def _event(self, message: EngineEvent) -> None:
        if self._taken_down():
            return
        event = message.event
        self.verdicts.note(event)
        self.handled.observe(event)
        if isinstance(event, ev.SeatJoined):
            ready = event.rejoin and self.seated.get(event.seat, ("", "", ""))[2] == "ready"
            self.seated[event.seat] = (event.role, event.player, "ready" if ready else "joined")
        elif isinstance(event, ev.SeatReady):
            self.seated[event.seat] = (event.role, event.player,
                                       "ready" if event.ready else "joined")
        elif isinstance(event, ev.SeatLost):  # a kind of SeatLeft: asked first
            self.seated[event.seat] = (event.role, event.player, "LOST")
            if self.group is None:  # a group's console app says it for every team
                self.notify(f"{inert(event.player, one_line=True)} at seat "
                            f"{inert(event.seat)}: no heartbeat for {event.silent_seconds} s "
                            "(the same join command brings them back)", title="Seat lost",
                            severity="warning")
        elif isinstance(event, ev.SeatLeft):
            self.seated[event.seat] = (event.role, event.player, "left")
        elif isinstance(event, ev.SeatCommand):
            self.last_action[event.seat] = f"{event.sim_time} {event.action}"
            return
        elif isinstance(event, ev.Facilitation) and event.action in ("hold", "release"):
            self.fault_held = event.action == "hold"
        elif isinstance(event, ev.Facilitation) and event.action == "handover":
            from raceday.engine.session import HANDED

            for role in event.to:
                (self.handed.add if event.detail == HANDED else self.handed.discard)(role)
        self.query_one("#console-feed", EventFeed).add(event)
        if not isinstance(event, ev.Note):
            self.query_one("#console-feed-shared", EventFeed).add(event)
        self.alarms.note(event)
        self._show_all()
        if isinstance(event, ev.ScoreEvent):
            self._show_end(event)

    @on(Refreshed)
    def _refreshed(self, message: Refreshed) -> None:
        if self._taken_down():
            return
        if message.snapshot.ended and self.snapshot is not None:
            return  # an ended session has no world to read: keep the last look at it
        self.snapshot = message.snapshot
        self._show_all()

    def _history_in(self, again: Callable[[], None]) -> bool:
        """Whether the session's history so far has been taken in; if not, `again` is done
        once it is (a key pressed the moment the console opens is not answered from an
        empty history: "nobody has declared a finding yet")."""
        if not self._caught_up and again not in self._asked_early:  # pressed twice: once
            self._asked_early.append(again)
        return self._caught_up

    @on(HostClock)
    def _clock(self, message: HostClock) -> None:
        if self._taken_down():
            return
        if not self._caught_up:  # the follower's first look ends with the clock: it is in
            self._caught_up = True
            early, self._asked_early = self._asked_early, []
            for again in early:  # in the order they were pressed
                again()
        if message.clock != self.clock:
            lobby_changed = message.clock.lobby != self.clock.lobby
            self.clock = message.clock
            if lobby_changed:
                self._show_all()
            else:
                self._show_header()

    def _show_all(self) -> None:
        self._show_header()
        seats = Text()
        work_of = due_work(self.snapshot, self.exercise,
                           {n: r for n, (r, _, _) in self.seated.items()},
                           self.handled.handled()) if self.snapshot is not None else {}
        for name, (role, player, status) in self.seated.items():
            if status == "ready" and not self.clock.lobby:
                status = "joined"  # the ready check is the lobby's
            elif status == "joined" and self.clock.lobby:
                status = "not ready"
            style = {"joined": "bold green", "ready": "bold green", "not ready": "yellow",
                     "left": "yellow",
                     "LOST": "bold white on red"}.get(status, "dim")
            seats.append(f"{name[:11]:<11}", style="bold")
            seats.append(f" {role[:10]:<10} ")
            seats.append(f"{inert(player, one_line=True)[:14]:<14}", style="cyan")
            seats.append(f" {status:<9}", style=style)
            if role in self.handed:
                seats.append(" AUTO routine", style="bold magenta")
            seats.append(f" {self.last_action.get(name, '')}\n", style="dim")
            for work in work_of.get(name, [])[:3]:
                seats.append(f"   {inert(work.words(), one_line=True)}\n",
                             style="bold red" if work.overdue else "yellow")
            if len(work_of.get(name, [])) > 3:
                seats.append(f"   and {len(work_of[name]) - 3} more\n", style="dim")
        if self.clock.lobby:
            seats.append("LOBBY: the clock is held at the start. ", style="bold black on yellow")
            seats.append_text(self._ready_check())
            seats.append(" s starts the night.", style="bold")
        self.query_one("#console-seats", Static).update(seats)
        if self.snapshot is not None:
            self.query_one("#console-world", WorldPanel).show(self.snapshot.world, self.alarms)
        self.query_one("#console-verdicts", Static).update(self.verdicts.render())

    def _lobbies(self) -> list[tuple[str, Host]]:
        """The hosts the start key starts: every team's, or the one (team name first)."""
        if self.group is not None:
            return list(self.group.hosts.items())
        return [("", self.host)]

    def _ready_check(self) -> Text:
        """Who is ready, who joined but is not, who is missing (every team, in a group)."""
        ready: list[str] = []
        waiting: list[str] = []
        missing: list[str] = []
        for team, host in self._lobbies():
            prefix = f"{team}: " if team and len(self._lobbies()) > 1 else ""
            r, w, m = host.lobby_state()
            ready += [prefix + inert(x, one_line=True) for x in r]
            waiting += [prefix + inert(x, one_line=True) for x in w]
            missing += [prefix + inert(x, one_line=True) for x in m]
        parts = [(f"Ready: {', '.join(ready) or 'nobody yet'}.", "bold green")]
        if waiting:
            parts.append((f"Not ready: {', '.join(waiting)}.", "bold yellow"))
        if missing:
            parts.append((f"Missing: {', '.join(missing)}.", "bold"))
        elif not waiting:
            parts.append(("Everyone is ready.", "bold green"))
        text = Text()
        for i, (words, style) in enumerate(parts):
            text.append((" " if i else "") + words, style=style)
        return text

    def _show_header(self) -> None:
        snap, clock = self.snapshot, self.clock
        text = Text()
        text.append(f" {snap.clock_face if snap else '--:--'} {self.exercise.clock.zone} ",
                    style="bold reverse")
        text.append(" ")
        if clock.ended:
            text.append("■ ended", style="bold")
        elif clock.lobby:
            text.append(f"⏳ LOBBY ({clock.speed:g}x when started)",
                        style="bold black on yellow")
        elif clock.pace == "live":
            text.append("⏸ PAUSED" if clock.paused else f"▶ live {clock.speed:g}x",
                        style="bold black on yellow" if clock.paused else "bold green")
        else:
            text.append("turns", style="bold")
        if self.fault_held:
            text.append("  FAULT STEP HELD (f releases it)", style="bold white on magenta")
        text.append("  │ facilitator console │ ", style="dim")
        if self.sharing:
            text.append("SCREEN SHARE: answers hidden │ ", style="bold magenta")
        if self.group is not None:
            names = list(self.group.hosts)
            text.append(f"team {inert(self.host.team, one_line=True)} "
                        f"({names.index(self.host.team) + 1}/{len(names)}) ", style="bold cyan")
            text.append("t next team, l leaderboard │ ", style="dim")
        text.append(inert(self.exercise.title, one_line=True))
        self.query_one("#console-header", Static).update(text)

    def _answer_key(self) -> Text:
        ex = self.exercise
        t = Text()
        t.append("Findings\n", style="bold underline")
        for finding in ex.findings:
            t.append(" ✓ " if finding.correct else " ✗ ",
                     style="green" if finding.correct else "red")
            t.append(f"{inert(finding.id)}: {inert(finding.text)}\n")
        guards = ex.scoring.guards
        if guards and guards.steps:
            t.append("Race steps\n", style="bold underline")
            for step in guards.steps:
                t.append(f" {inert(step.id)}: {inert(step.title)} (task {inert(step.task)})\n")
        if ex.hints:
            t.append("Hints\n", style="bold underline")
            for hint in ex.hints:
                t.append(f" {inert(hint.id)} (-{hint.cost}): ", style="magenta")
                t.append(f"{inert(hint.text)}\n")
        return t

    # -- the facilitator's keys --------------------------------------------------------

    @on(JobFailed)
    def _failed(self, message: JobFailed) -> None:
        """A call to the host failed (this console's, or its injects list's)."""
        self.notify(message.error, title=f"{message.action} failed", severity="error")

    def action_start(self) -> None:
        if not self.clock.lobby:
            self.notify("The night has started already (space pauses it).")
            return
        steer = self.steer
        not_yet = [host for _, host in self._lobbies()
                   if any(host.lobby_state()[1:])]  # someone not ready, or a seat empty

        def start(yes: bool | None) -> None:
            if yes:
                self.runner.send("start", lambda s: steer.start_clock())

        if not not_yet:
            start(True)
            return
        self.app.push_screen(ConfirmDialog(
            "Not everyone is ready. " + self._ready_check().plain + " Start the night anyway?",
            yes="Start now", no="Wait for them"), start)

    def action_pause(self) -> None:
        if self.host.pace.value != "live":
            self.notify("The turns pace has no running clock; n skips to the next inject.")
            return
        steer = self.steer
        if self.clock.paused:
            self.runner.send("resume", lambda s: steer.resume())
        else:
            self.runner.send("pause", lambda s: steer.pause())

    def action_speed(self) -> None:
        length = self.host.session.exercise.clock.length_minutes if self.host.session else 0
        options = [(f"{c.speed:g}", c.label()) for c in speed_choices(length, self.clock.speed)]
        steer = self.steer

        def chosen(value: str | None) -> None:
            if value is not None:
                speed = float(value)
                self.runner.send("speed", lambda s: steer.set_speed(speed))

        self.app.push_screen(ChoiceDialog("Clock speed", options), chosen)

    def action_skip(self) -> None:
        """Skip to the next stop; never past a story task a seat has left due without
        asking (one quiet player stalled a game day: the night waited on their task)."""
        steer = self.steer
        stalled = self._stalled_tasks() if self.group is None else []
        if not stalled:
            self.runner.send("skip", lambda s: steer.skip())
            return
        options = [(TASK_PREFIX + p.task, f"The automation does {p.role}'s "
                    f"\u201c{inert(p.title, one_line=True)}\u201d now, then skip")
                   for p in stalled]
        options.append(("skip", "Skip, the night going on without it (not played tonight: "
                                "its fault is scored as not played)"))

        def chosen(choice: str | None) -> None:
            if choice is None:
                return
            if choice.startswith(TASK_PREFIX):
                task = choice.removeprefix(TASK_PREFIX)

                def automate_then_skip(_session: object) -> None:
                    self.host.automate_task(task)
                    steer.skip()

                self.runner.send("automate", automate_then_skip)
                return
            undone = [p.task for p in stalled]

            def skip_without(_session: object) -> None:
                for task in undone:
                    self.host.skip_step(task)
                steer.skip()

            self.runner.send("skip", skip_without)

        first = stalled[0]
        self.app.push_screen(ChoiceDialog(
            "A seat has left a task due", options,
            note=f"{first.role}: {first.title}" + (f" (due since {first.due})" if first.due
                                                  else "")
                 + ". Nobody else does it tonight: until it is done the night waits on it.",
            selected=options[0][0]), chosen)

    def _stalled_tasks(self) -> list[PendingView]:
        """Story tasks (the automation's one-off work) a seat has due and not handled."""
        story = automation_work(self.exercise, one_off=True)
        handled = self.handled.handled()
        return [p for p in (self.snapshot.pending if self.snapshot is not None else ())
                if p.task in story and p.task not in handled]

    def action_hand_over(self) -> None:
        """Hand a seat's routine tasks to the automation, or give them back; or have the
        automation do one story task a seat has left due (a quiet player stalls the night)."""
        options = [(name, f"{name} ({role}): " + ("give the routine tasks back to "
                                                  f"{inert(player, one_line=True)}"
                                                  if role in self.handed else
                                                  "the automation runs its routine tasks"))
                   for name, (role, player, _) in self.seated.items()]
        for pending in self._stalled_tasks():
            since = f", due since {pending.due}" if pending.due else ""
            options.append((TASK_PREFIX + pending.task,
                            f"{pending.role}: the automation does "
                            f"\u201c{inert(pending.title, one_line=True)}\u201d now{since}"))

        def chosen(name: str | None) -> None:
            if name is None:
                return
            if name.startswith(TASK_PREFIX):
                task = name.removeprefix(TASK_PREFIX)
                self.runner.send("automate", lambda s: self.host.automate_task(task))
                return
            automate = self.seated[name][0] not in self.handed
            self.runner.send("hand-over", lambda s: self.host.hand_over(name, automate))

        self.app.push_screen(ChoiceDialog(
            "Automate a seat's routine tasks, or one task left due", options,
            note="A seat's story tasks stay the player's; choose the seat again to give its "
                 "routine tasks back. A task left due can be done by the automation, now, "
                 "as it would have done it: the night goes on."), chosen)

    def action_hold_fault(self) -> None:
        """Hold the night's fault step, or release it (the story waits for the players); with
        several teams, the facilitator picks the team (or every team) first."""
        if self.group is None:
            self._hold_fault([self.host], not self.fault_held)
            return
        playing = {name: host for name, host in self.group.hosts.items() if not host.ended}
        if not playing:
            self.notify("Every team's session is over.")
            return

        def held(host: Host) -> bool:
            task = host.fault_task() if host.session is not None else None
            return task is not None and task in host.need().held

        options = [(name, f"team {name}{' (this console)' if name == self.host.team else ''}: "
                    + ("release its fault step" if held(host) else "hold its fault step"))
                   for name, host in playing.items()]
        every = not all(held(h) for h in playing.values())
        options.append((EVERYONE, "every team: " + ("hold the fault step" if every else
                                                    "release the fault step")))

        def chosen(name: str | None) -> None:
            if name == EVERYONE:
                self._hold_fault([h for h in playing.values() if held(h) != every], every)
            elif name is not None:
                self._hold_fault([playing[name]], not held(playing[name]))

        self.app.push_screen(ChoiceDialog("Hold or release the night's fault step of", options),
                             chosen)

    def _hold_fault(self, hosts: list[Host], hold: bool) -> None:
        for host in hosts:
            self.runner.send("hold", _holds(host, hold), host=host)
        whose = ("The fault step" if self.group is None else
                 "Team " + ", ".join(inert(h.team, one_line=True) for h in hosts) + ": the "
                 "fault step")
        self.notify(f"{whose} is held: it runs when you release it (f)." if hold else
                    f"{whose} is released: it runs at the next minute if it was due.",
                    timeout=4)

    def action_projector_sql(self) -> None:
        """Let the projector show the players' SQL (the hot wash), or hide it again."""
        shown = not self.clock.projector_sql
        self.runner.send("projector", lambda s: self.host.show_sql_on_projector(shown))
        self.notify("The projector shows the players' SQL." if shown else
                    "The projector hides the players' SQL.", timeout=4)

    def action_share(self) -> None:
        """Hide (or show again) what only the facilitator may see, to share the screen."""
        self.sharing = not self.sharing
        self.query_one("#console-private").display = not self.sharing
        self.query_one("#console-feed").display = not self.sharing
        self.query_one("#console-feed-shared").display = self.sharing
        sharing = self.sharing
        self.runner.send("screen", lambda s: self.host.screen_share(sharing))
        self._show_header()
        self.notify("Answer key, verdicts and notes hidden: share the screen. v shows them."
                    if sharing else "Answer key and verdicts shown again.", timeout=4)

    def action_inject(self) -> None:
        def targeted(request: InjectRequest | None) -> None:
            if request is None:
                return
            options = [(EVERYONE, "everyone")] + [(r, r) for r in self.host.roles]

            def send(to: str | None) -> None:
                if to is None:
                    return
                target = () if to == EVERYONE else (to,)
                self.app.push_screen(ChoiceDialog("When", [(NOW, "now")] + [
                    (f"+{n}", f"in {n} minutes (on the night's clock)") for n in (5, 15, 30)
                ] + [
                    (harm.id, f"when it holds: {' '.join(harm.fault.split())}")
                    for harm in self.exercise.invariants]), lambda when: at(target, when))

            def at(target: tuple[str, ...], when: str | None) -> None:
                if when is not None:
                    self.app.push_screen(ChoiceDialog("Kind", [
                        ("message", "message"), ("status", "status post"), ("alarm", "alarm"),
                        ("question", "question for discussion")]),
                        lambda kind: typed(target, when, kind))

            def typed(target: tuple[str, ...], when: str, kind: str | None) -> None:
                from raceday.team.inject_file import PreparedInject

                if kind is None:
                    return
                host = self.host
                later = int(when[1:]) if when.startswith("+") else 0
                harm = "" if when == NOW or when.startswith("+") else when
                self.runner.send("inject", lambda s: host.plan_live(PreparedInject(
                    id="live", title=request.title, text=request.text, to=target, kind=kind,
                    at=None if harm else s.minute + later, when=harm)))

            self.app.push_screen(ChoiceDialog("Send it to", options), send)

        self.app.push_screen(InjectDialog(classes="dialog-screen"), targeted)

    def action_inject_list(self) -> None:
        from raceday.tui.team.inject_list import InjectListScreen

        self.app.push_screen(InjectListScreen(self.runner))

    def action_hint(self) -> None:
        if self.sharing:
            self.notify("Hints show the answers: v ends screen sharing first.")
            return
        if not self._history_in(self.action_hint):
            return
        left = [h for h in self.exercise.hints if h.id not in self.verdicts.hints]
        if not left:
            self.notify("No hint left to give.")
            return
        options = [(h.id, f"{h.id} (-{h.cost}): {' '.join(h.text.split())[:60]}") for h in left]

        def preview(hint_id: str | None) -> None:
            hint = next((h for h in left if h.id == hint_id), None)
            if hint is None:
                return

            def to_whom(to: str | None) -> None:
                if to is not None:
                    role = None if to == EVERYONE else to
                    self.runner.send("hint", lambda s: self.host.give_hint(hint.id, role))

            self.app.push_screen(ChoiceDialog(
                f"Send this hint? It costs the team {hint.cost} "
                f"point{'' if hint.cost == 1 else 's'}.", [(EVERYONE, "to every seat")] + [
                    (r, f"to {r} only") for r in self.host.roles],
                note=inert(hint.text)), to_whom)

        self.app.push_screen(ChoiceDialog("Preview a hint", options), preview)

    def action_rule(self) -> None:
        """Rule on a declaration: right, partly right or wrong, with a note (the score and the
        debrief use the ruling)."""
        from raceday.transcript.render import ruling_words

        if not self._history_in(self.action_rule):
            return
        declared = self.verdicts.declarations
        if not declared:
            self.notify("Nobody has declared a finding yet.")
            return
        options = [(str(d.seq), f"{d.sim_time} {d.role}"
                    + (" in own words" if d.verdict == "to_rule" else "")
                    + f": {' '.join(d.text.split())[:60]}"
                    + (f" (ruled {ruling_words(r.ruling)})"
                       if (r := self.verdicts.rulings.get(d.seq)) else ""))
                   for d in reversed(declared)]

        def which(seq: str | None) -> None:
            if seq is None:
                return
            self.app.push_screen(ChoiceDialog("Your ruling", [
                ("right", "right"), ("partly", "partly right"), ("wrong", "wrong")]),
                lambda ruling: note(int(seq), ruling))

        def note(seq: int, ruling: str | None) -> None:
            if ruling is None:
                return
            self.app.push_screen(NoteDialog("A note with the ruling (players see the ruling, "
                                            "not the note; Enter with none: no note)"),
                                 lambda text: send(seq, ruling, text))

        def send(seq: int, ruling: str, text: str | None) -> None:
            self.runner.send("ruling", lambda s: self.host.rule(seq, ruling, text or ""))

        self.app.push_screen(ChoiceDialog("Rule on a declaration", options), which)

    def action_note(self) -> None:
        def save(text: str | None) -> None:
            if text:
                self.runner.send("note", lambda s: self.host.observer_note(text))

        self.app.push_screen(NoteDialog("Observer note (players do not see it; start with + "
                                        "for a strength, - for an area for improvement)"),
                             save)

    def action_join_info(self) -> None:
        from raceday.team.host_loop import JOIN_FILE, join_text

        group = self.group.folder if self.group is not None else None
        where = (group or self.host.folder).resolve() / JOIN_FILE
        self.app.push_screen(JoinDialog(join_text(self.host, group), where))

    def action_end(self) -> None:
        group = self.group

        def end(yes: bool | None) -> None:
            if yes and group is not None:
                self.runner.send("end", lambda s: group.end())
            elif yes:
                self.runner.send("end", lambda s: self.host.end())

        question = ("End every team's session and score them?" if group is not None else
                    "End the session for everyone and score it?")
        self.app.push_screen(ConfirmDialog(question, yes="End and score", no="Keep playing"),
                             end)

    def request_quit(self) -> None:
        if (self.group.ended if self.group is not None else self.host.ended):
            self.app.exit(0)
            return
        self.action_end()

    def _show_end(self, score: ev.ScoreEvent) -> None:
        from raceday.tui.screens.end import EndScreen

        if self.group is not None:  # the leaderboard, once the last team is scored
            if self.group.ended:
                self.post_message(self.EveryTeamScored())
            return

        events = read_events(self.host.folder).events
        self.app.push_screen(EndScreen(self.exercise, score, self.host.folder, events))


def _holds(host: Host, hold: bool) -> Any:
    """The call that holds (or releases) one team's fault step, in that host's thread."""
    return lambda session: host.hold_fault(hold)
