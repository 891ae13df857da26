"""One error family, so the CLI and the TUI can show any of them as one clear line."""

from __future__ import annotations


class RacedayError(Exception):
    """Base of every error raceday reports to a person."""


class InputError(RacedayError):
    """Bad input from a person: an exercise file, a play script, a transcript. Exit status 2."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class ExerciseError(InputError):
    """An exercise file is invalid; each problem reads `file:line: what is wrong`."""


class ScriptError(InputError):
    """A play script is invalid; each problem reads `file:line: what is wrong`."""


class TranscriptError(InputError):
    """A transcript cannot be read."""
