"""One error family, so the CLI and the TUI can show any of them as one clear line."""

from __future__ import annotations


class RacedayError(Exception):
    """Base of every error raceday reports to a person."""


class MachineError(RacedayError):
    """The machine, not the input, stopped raceday: a full disk, a read-only folder, a file
    deleted under it. One line, exit status 1; what was saved is whole."""


class InputError(RacedayError):
    """Bad input from a person: an exercise file, a play script, a transcript. Exit status 2.

    Each problem is one line, whatever text of the input it quotes: line breaks in it are
    shown as escapes (`\\n`), so one problem never reads as two.
    """

    def __init__(self, problems: list[str]) -> None:
        lines = [one_line(problem) for problem in problems]
        super().__init__("\n".join(lines))
        self.problems = lines


_BREAKS = {ord(c): f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
           for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}
_BREAKS.update({ord("\n"): "\\n", ord("\r"): "\\r"})


def first_line(exc: BaseException) -> str:
    """What an exception says, on one line: its first line (its type when it says nothing).
    For messages shown to a person, where a traceback or a multi-line driver message would
    break the screen's line."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def one_line(text: str) -> str:
    """`text` with every character Python or a terminal would break a line at escaped."""
    return text.translate(_BREAKS)


class ExerciseError(InputError):
    """An exercise file is invalid; each problem reads `file:line: what is wrong`."""


class ScriptError(InputError):
    """A play script is invalid; each problem reads `file:line: what is wrong`."""


class TranscriptError(InputError):
    """A transcript cannot be read."""
