"""`raceday serve`: the launcher (or a team session's seats) in browsers, with textual-serve.

For workshops where attendees have no Python: each browser's websocket starts its own
`raceday play` process (textual-serve does that), so each browser plays its own session. A
browser is known by a random cookie the page sets, and plays in a folder of its own inside the
server's transcripts folder: its launcher lists only its own sessions, scores and unfinished
sessions, never the room's. With `--join`, each browser starts `raceday join` on the next free
seat of the tokens it was given, and asks its player's name (web/seat.py).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from raceday.errors import RacedayError
from raceday.web import guard

if TYPE_CHECKING:
    from aiohttp import web
    from textual_serve.app_service import AppService

MAX_SESSIONS = 40
"""Browsers served at once unless `--max-sessions` says otherwise (0: no limit): each is a
Python process of 55-70 MB (README), so a room of 40 is under 3 GB, and a page reloaded in a
loop, or a link posted too widely, cannot start processes until the machine runs out."""
PAGE_TEMPLATES = Path(__file__).parent / "templates"
"""The browser's page: textual-serve's, with its font served from textual-serve's own static
files (offline, a stylesheet from the internet held the page blank until it failed: 5 s)."""
STDIN_WAIT_S = 10.0
"""How long a browser's keys may wait for its process to read them before it is ended."""
SHUTDOWN_S = 3.0
"""How long Ctrl-C waits for the browsers' sockets to close (their processes are ended)."""
SEATS_VARIABLE = "RACEDAY_WEB_SEATS"  # the seat pool's JSON, for web/seat.py in each browser's process
_log = logging.getLogger(__name__)
MISSING = ("`raceday serve` needs textual-serve, which is not installed: "
           "pip install 'raceday[web]'")


@dataclass(frozen=True)
class Join:
    """A team session whose seats the browsers take, one token each."""

    session: Path
    tokens: tuple[str, ...]
    team: str | None = None


BROWSER_COOKIE = "raceday_browser"
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


def browser_folder(transcripts: Path, cookie: str | None) -> Path:
    """The folder a browser plays in: its own, named by its cookie (a new one when the cookie
    is missing or not one the server gives: a browser without cookies gets a folder per
    page)."""
    known = cookie if cookie is not None and _BROWSER_ID.fullmatch(cookie) else None
    return transcripts / f"browser-{known or new_browser_id()}"


def new_browser_id() -> str:
    return secrets.token_urlsafe(12)


def play_command(exercise: str | None, transcripts: Path,
                 night: tuple[str, ...] = ()) -> list[str]:
    """What each browser runs to play on its own: the launcher, or the exercise's briefing;
    `night` is `--unknown` (each browser draws its own night) or `--night ID`."""
    return [sys.executable, "-m", "raceday", "play", *([exercise] if exercise else []),
            "--transcripts", str(transcripts.resolve()), *night]


def seat_command() -> list[str]:
    """What each browser runs to take a seat: the pool is in the environment, not on `ps`."""
    return [sys.executable, "-m", "raceday.web.seat"]


def full_words(limit: int) -> str:
    """What a browser turned away reads in its terminal (its page stays open on it)."""
    return (f"raceday serve is full: {limit} browser{'s are' if limit != 1 else ' is'} "
            "playing (the server's --max-sessions). Reload this page once one has closed.")


def check_port(host: str, port: int) -> None:
    """One line, before any banner, when the address cannot be listened on."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise RacedayError(f"cannot serve on {host}:{port}: unknown host ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp does
        try:
            probe.bind(address)
        except OSError as exc:
            raise RacedayError(_port_problem(host, port, exc)) from None


def _port_problem(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"cannot serve on {host}:{port}: the port is in use (choose another with --port)"
    if exc.errno == errno.EACCES:
        return f"cannot serve on {host}:{port}: permission denied (ports below 1024 need root)"
    return f"cannot serve on {host}:{port}: {exc.strerror or exc}"


def serve(exercise: str | None, *, host: str = "127.0.0.1", port: int = 8000,
          public_url: str | None = None, transcripts: Path = Path("transcripts"),
          join: Join | None = None, max_sessions: int = MAX_SESSIONS,
          night: tuple[str, ...] = ()) -> int:
    """Serve until Ctrl-C; returns the exit status. Bad input is one line before the banner.
    At most `max_sessions` browsers play at once (0: no limit); one more is told so."""
    try:
        from aiohttp import WSMsgType
        from aiohttp import web as aiohttp_web
        from textual_serve import server as textual_serve
        from textual_serve.app_service import AppService
    except ImportError:
        raise RacedayError(MISSING) from None
    # The server makes one per browser under this name: the one that keeps its child in hand.
    service = _guarded(AppService)
    setattr(textual_serve, "AppService", service)  # noqa: B010
    if exercise is not None:
        from raceday.engine.load import load_named_exercise

        load_named_exercise(exercise)  # a bad exercise is `file:line` now, not in each browser
    locks = None
    if join is not None:
        command = seat_command()
        locks = tempfile.mkdtemp(prefix="raceday-seats-")  # mode 0700: the seats' claims
        os.environ[SEATS_VARIABLE] = _pool(join, locks)
        what = f"a seat of {join.session} ({len(join.tokens)} seats)"
    else:
        Path(transcripts).mkdir(parents=True, exist_ok=True)
        command = play_command(exercise, Path(transcripts), night)
        what = f"raceday play {exercise}" if exercise else "the raceday launcher"
    check_port(host, port)

    class RacedayServer(textual_serve.Server):
        """textual-serve's server, with raceday's own one-line banner and no line per
        request (a room of browsers would bury what matters: a session that fails)."""

        def initialize_logging(self) -> None:
            super().initialize_logging()
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
            # Ctrl-C with browsers open: asyncio's word that it reaped their processes late.
            logging.getLogger("asyncio").setLevel(logging.ERROR)

        playing = 0  # browsers whose websocket is being served now

        async def on_startup(self, app: web.Application) -> None:
            limit = f"at most {max_sessions} at once" if max_sessions else "no limit"
            self.console.print(f"raceday serve: {what} for each browser at {self.public_url} "
                               f"({limit}; Ctrl-C stops)", highlight=False, markup=False,
                               soft_wrap=True)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            if max_sessions and self.playing >= max_sessions:
                return await self.turn_away(request)
            self.playing += 1
            try:
                return await self.play(request)
            finally:
                self.playing -= 1

        async def play(self, request: web.Request) -> web.WebSocketResponse:
            """textual-serve's websocket handler, with bounded messages and screens."""
            websocket = aiohttp_web.WebSocketResponse(heartbeat=15,
                                                      max_msg_size=guard.MAX_MESSAGE_BYTES)
            width, height = guard.screen_size(request.query.get("width", 80),
                                              request.query.get("height", 24))
            app_service = None
            command = self.command
            if join is None:  # each browser in its own folder: it sees only its own sessions
                command = shlex.join(play_command(exercise, browser_folder(
                    Path(transcripts), request.cookies.get(BROWSER_COOKIE)), night))
            try:
                await websocket.prepare(request)
                app_service = service(
                    command, write_bytes=websocket.send_bytes,
                    write_str=websocket.send_str, close=websocket.close,  # type: ignore[arg-type]
                    download_manager=self.download_manager, debug=self.debug)
                await app_service.start(width, height)
                await self._process_messages(websocket, app_service,
                                             peer=str(request.remote or "unknown"))
            except asyncio.CancelledError:
                await websocket.close()
            except Exception as exc:  # noqa: BLE001  # one line, never a traceback per browser
                self.console.print(f"raceday serve: a browser's session failed: {exc!r}",
                                   highlight=False, markup=False, soft_wrap=True)
            finally:
                if app_service is not None:
                    await app_service.stop()
            return websocket

        async def _process_messages(self, websocket: web.WebSocketResponse,
                                    app_service: AppService, peer: str = "unknown") -> None:
            async for message in websocket:
                if message.type == WSMsgType.ERROR or (
                        message.type == WSMsgType.CLOSE and message.data == 1009):
                    self.refuse(peer, guard.Refused(
                        f"a message of more than {guard.MAX_MESSAGE_BYTES} bytes"))
                    return
                if message.type != WSMsgType.TEXT:
                    continue
                try:
                    kind, data = guard.envelope(message.data)
                    if kind == "resize":
                        width, height = guard.screen_size(data.get("width"), data.get("height"))
                        await app_service.set_terminal_size(width, height)
                        continue
                except guard.Refused as why:
                    self.refuse(peer, why)
                    await websocket.close()
                    return
                if kind == "stdin":
                    if not await app_service.send_bytes(data.encode("utf-8", "replace")):
                        return
                elif kind == "ping":
                    await websocket.send_json(["pong", data])
                elif kind == "blur":
                    await app_service.blur()
                elif kind == "focus":
                    await app_service.focus()

        def refuse(self, peer: str, why: guard.Refused) -> None:
            self.console.print(guard.refused_line(peer, why), highlight=False, markup=False,
                               soft_wrap=True)

        async def _make_app(self) -> web.Application:
            """textual-serve's routes, with no listing of the static folder."""
            app = await super()._make_app()
            app.middlewares.append(aiohttp_web.middleware(_known_browser))
            for resource in app.router.resources():
                if getattr(resource, "_show_index", False):
                    resource._show_index = False  # type: ignore[attr-defined]
            return app

        async def on_shutdown(self, app: web.Application) -> None:
            """Ctrl-C: every browser's process ends now, with everything it started."""
            for running in list(service.live):  # type: ignore[attr-defined]
                process = running._process
                if process is not None:
                    guard.end_group_now(process.pid)

        def serve(self, debug: bool = False) -> None:
            """textual-serve's serve, waiting SHUTDOWN_S (not a minute) for browsers."""
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            loop.add_signal_handler(signal.SIGINT, self.request_exit)
            loop.add_signal_handler(signal.SIGTERM, self.request_exit)
            aiohttp_web.run_app(self._make_app(), host=self.host, port=self.port,
                                handle_signals=False, loop=loop, print=lambda *a: None,
                                shutdown_timeout=SHUTDOWN_S)

        async def turn_away(self, request: web.Request) -> web.WebSocketResponse:
            """One browser too many: no process; its terminal says why, and stays open (the
            page would cover a closed one with "Session ended.") until the browser goes."""
            websocket = aiohttp_web.WebSocketResponse(heartbeat=15)
            await websocket.prepare(request)
            await websocket.send_bytes(f"\r\n {full_words(max_sessions)}\r\n".encode())
            self.console.print(f"raceday serve: a browser was turned away: {max_sessions} "
                               "playing already (--max-sessions)", highlight=False,
                               markup=False, soft_wrap=True)
            async for _ in websocket:  # keys and resizes: nothing to play them on
                pass
            return websocket

    server = RacedayServer(shlex.join(command), host=host, port=port, title="raceday",
                           public_url=public_url, templates_path=PAGE_TEMPLATES)
    try:
        server.serve()
    except OSError as exc:  # lost the port between the check and the listen
        raise RacedayError(_port_problem(host, port, exc)) from None
    finally:
        if locks is not None:
            shutil.rmtree(locks, ignore_errors=True)
    return 0


async def _known_browser(request: web.Request, handler: Any) -> web.StreamResponse:
    """The page gives a browser its cookie (random, HttpOnly, this site only) the first time,
    so its later pages and reloads play in the same folder of its own."""
    response: web.StreamResponse = await handler(request)
    known = request.cookies.get(BROWSER_COOKIE)
    if request.path == "/" and not (known and _BROWSER_ID.fullmatch(known)) \
            and not response.prepared:
        response.set_cookie(BROWSER_COOKIE, new_browser_id(), httponly=True, samesite="Strict",
                            max_age=60 * 60 * 24 * 30)
    return response


def _guarded(base: type[AppService]) -> type[AppService]:
    """textual-serve's AppService, keeping its child in hand (web/guard.py).

    Its child runs without a shell, in a process group of its own; when its browser goes, it
    is asked to quit and, QUIT_GRACE_S later, ended with its group. The browser's socket is
    closed when the child ends (textual-serve closes it only when the app says it exits; a
    process that ends before its app starts would leave the page blank for good), and keys
    the child does not read within a few seconds end it too."""
    if getattr(base, "closes_when_done", False):
        return base

    class Guarded(base):  # type: ignore[valid-type,misc]  # a class made at run time
        closes_when_done = True
        live: ClassVar[set[Any]] = set()

        async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
            environment = self._build_environment(width=width, height=height)
            self._process = process = await guard.open_child(self.command, environment)
            self._stdin = process.stdin
            Guarded.live.add(self)
            return process

        async def send_bytes(self, data: bytes) -> bool:
            try:
                return bool(await asyncio.wait_for(super().send_bytes(data), STDIN_WAIT_S))
            except TimeoutError:  # the child reads no keys: it is stuck
                _log.warning("raceday serve: a browser's process read no keys for %g s; "
                             "ending it", STDIN_WAIT_S)
                await self.end()
                return False

        async def send_meta(self, data: dict[str, Any]) -> bool:
            try:
                return bool(await asyncio.wait_for(super().send_meta(data), STDIN_WAIT_S))
            except TimeoutError:
                return False

        async def end(self) -> None:
            if self._process is not None:
                await guard.end_group(self._process)

        async def stop(self) -> None:
            task: asyncio.Task[None] | None = self._task  # type: ignore[has-type]
            if task is not None:
                await self.send_meta({"type": "quit"})
                try:
                    await asyncio.wait_for(asyncio.shield(task), guard.QUIT_GRACE_S)
                except TimeoutError:
                    await self.end()
                    await task
                self._task = None
            await self.end()
            Guarded.live.discard(self)

        async def run(self) -> None:
            try:
                await super().run()
            except asyncio.CancelledError:
                # textual-serve cancels its stderr reader as the screen's stream ends; one
                # cancelled before it first ran (a loaded machine) raises here, though
                # nobody cancelled this task: go on and read what the child writes
                current = asyncio.current_task()
                if current is None or current.cancelling():
                    raise
            try:
                await self.remote_close()
            except Exception:  # noqa: BLE001  # the socket went first: nothing to close
                pass
            # then what the child wrote as it ended, once it has (the page is closed already)
            if self._process is not None and (rest := await guard.unread(
                    self._process.stderr, guard.ENDING_WAIT_S)):
                sys.stdout.write(rest.decode("utf-8", "replace"))  # as textual-serve does
                sys.stdout.flush()

    return Guarded


def _pool(join: Join, locks: str) -> str:
    """The seat pool each browser's process claims from: tokens and a private lock folder."""
    pool: dict[str, Any] = {"session": str(join.session.resolve()), "team": join.team,
                            "tokens": list(join.tokens), "locks": locks}
    return json.dumps(pool)

