"""The facilitator's YAML files (a teams file, a prepared inject file, the play scripts a
teams file names): read only when they are what they say, and never quoted when not.

A teams file could name any path as a team's script, and the script's checks echoed what
they found: `unknown key 'root:$6$…'` printed lines of /etc/shadow. Now a file is read only
when it is a regular `.yaml`/`.yml` file of UTF-8 text that parses as a YAML mapping with
its own key (`teams:`, `injects:`, `steps:`); otherwise one line names the file and says
what is wrong, without a word of its content. A file given on the command line may sit
anywhere (the facilitator chose it); a script a teams file names must sit in the teams
file's folder or below it (the teams file's own folder is the set's folder), or be one of
the exercise's reference plays (its `scripts/` folder).
"""

from __future__ import annotations

import re
from pathlib import Path

from raceday.errors import RacedayError
from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located
from raceday.textfile import UnreadableText, read_text

SUFFIXES = (".yaml", ".yml")
_QUOTED = re.compile(r"'[^'\s]{2,}'|\"[^\"\s]{2,}\"")
"""What PyYAML quotes of the text (a tag, an anchor); its quoted punctuation stays."""


class YamlFileError(RacedayError):
    """One line: the file, and what is wrong with it (never what it holds)."""


def read_mapping(path: Path, what: str, key: str,
                 ) -> tuple[dict[str, Located], list[tuple[int, str]]]:
    """The top mapping of the `what` at `path` (it must hold `key`), and the loader's
    per-line problems; YamlFileError when it is not such a file."""
    if path.suffix.lower() not in SUFFIXES:
        raise YamlFileError(f"{path}: {_a(what)} is a .yaml or .yml file")
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise YamlFileError(f"{path}: no such {what}") from None
    except UnreadableText as exc:
        raise YamlFileError(f"{path}: cannot read the {what}: {exc.reason}") from None
    try:
        root, problems = load_located(text)
    except YamlSyntaxError as exc:  # the parser's words, with no fragment of the text
        raise YamlFileError(f"{path}:{exc.line}: not valid YAML "
                            f"({_QUOTED.sub('…', exc.message)})") from None
    if root is None or not root.is_mapping or key not in root.value:
        raise YamlFileError(f"{path}: not {_a(what)} (a YAML mapping with `{key}:`)")
    return root.value, problems


def beside(folder: Path, name: str, *also: Path) -> Path:
    """The file `name`, relative to `folder`, which must lie in `folder` or below it, or in
    one of `also` (no way out by an absolute path, `..` or a link); else YamlFileError."""
    if Path(name).is_absolute():
        raise YamlFileError(f"{name}: a path from the root; name a file in {folder} "
                            "(relative to it)")
    path = folder / name
    try:
        real = path.resolve()
        inside = any(real.is_relative_to(f.resolve()) for f in (folder, *also))
    except (OSError, RuntimeError):  # a loop of links
        inside = False
    if not inside:
        raise YamlFileError(f"{name}: outside {folder}; name a file in that folder or below "
                            "it" + (" (or one of the exercise's own scripts)" if also else ""))
    return path


def _a(what: str) -> str:
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"
