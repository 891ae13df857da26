"""`raceday serve`: the launcher (or a team session's seats) in browsers, with textual-serve.

For workshops where attendees have no Python: each browser's websocket starts its own
`raceday play` process (textual-serve does that), so each browser plays its own session and
the server's transcripts folder collects them all. With `--join`, each browser starts
`raceday join` on the next free seat of the tokens it was given (web/seat.py).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shlex
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raceday.errors import RacedayError

if TYPE_CHECKING:
    from aiohttp import web
    from textual_serve.app_service import AppService

MAX_SESSIONS = 40
"""Browsers served at once unless `--max-sessions` says otherwise (0: no limit): each is a
Python process of 55-70 MB (README), so a room of 40 is under 3 GB, and a page reloaded in a
loop, or a link posted too widely, cannot start processes until the machine runs out."""
SEATS_VARIABLE = "RACEDAY_WEB_SEATS"  # the seat pool's JSON, for web/seat.py in each browser's process
MISSING = ("`raceday serve` needs textual-serve, which is not installed: "
           "pip install 'raceday[web]'")


@dataclass(frozen=True)
class Join:
    """A team session whose seats the browsers take, one token each."""

    session: Path
    tokens: tuple[str, ...]
    team: str | None = None


def play_command(exercise: str | None, transcripts: Path) -> list[str]:
    """What each browser runs to play on its own: the launcher, or the exercise's briefing."""
    return [sys.executable, "-m", "raceday", "play", *([exercise] if exercise else []),
            "--transcripts", str(transcripts.resolve())]


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
          join: Join | None = None, max_sessions: int = MAX_SESSIONS) -> int:
    """Serve until Ctrl-C; returns the exit status. Bad input is one line before the banner.
    At most `max_sessions` browsers play at once (0: no limit); one more is told so."""
    try:
        from aiohttp import web as aiohttp_web
        from textual_serve import server as textual_serve
        from textual_serve.app_service import AppService
    except ImportError:
        raise RacedayError(MISSING) from None
    # The server makes one per browser under this name: the one that closes when done.
    setattr(textual_serve, "AppService", _closing(AppService))  # noqa: B010
    if exercise is not None:
        from raceday.commands import load_named_exercise

        load_named_exercise(exercise)  # a bad exercise is `file:line` now, not in each browser
    locks = None
    if join is not None:
        command = seat_command()
        locks = tempfile.mkdtemp(prefix="raceday-seats-")  # mode 0700: the seats' claims
        os.environ[SEATS_VARIABLE] = _pool(join, locks)
        what = f"a seat of {join.session} ({len(join.tokens)} seats)"
    else:
        Path(transcripts).mkdir(parents=True, exist_ok=True)
        command = play_command(exercise, Path(transcripts))
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
                return await super().handle_websocket(request)
            finally:
                self.playing -= 1

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
                           public_url=public_url)
    try:
        server.serve()
    except OSError as exc:  # lost the port between the check and the listen
        raise RacedayError(_port_problem(host, port, exc)) from None
    finally:
        if locks is not None:
            shutil.rmtree(locks, ignore_errors=True)
    return 0


def _closing(base: type[AppService]) -> type[AppService]:
    """textual-serve's AppService, closing the browser's socket when its process ends.

    textual-serve closes it when the app says it exits; a process that ends before its app
    starts (`raceday join` on a session that is over, a crash) would leave the page blank
    for good. Closed, the page shows "Session ended." and a Restart button."""
    if getattr(base, "closes_when_done", False):
        return base

    class Closing(base):  # type: ignore[valid-type,misc]  # a class made at run time
        closes_when_done = True

        async def run(self) -> None:
            await super().run()
            await self.remote_close()

    return Closing


def _pool(join: Join, locks: str) -> str:
    """The seat pool each browser's process claims from: tokens and a private lock folder."""
    pool: dict[str, Any] = {"session": str(join.session.resolve()), "team": join.team,
                            "tokens": list(join.tokens), "locks": locks}
    return json.dumps(pool)
