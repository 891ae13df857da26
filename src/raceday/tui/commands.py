"""The command palette (ctrl+p) on the play screen: every action, by name."""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider


class PlayCommands(Provider):
    """Lists what the play screen can do; the screen says what is possible now."""

    def _commands(self) -> list[tuple[str, str, Any]]:
        commands = getattr(self.screen, "palette_commands", None)
        return list(commands()) if commands is not None else []

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, partial(callback), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(callback), help=help_text)
