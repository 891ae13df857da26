"""Reading what the debrief shows: its content (own or shared), sources, phases and
practice, and the citations injects make of them."""

from __future__ import annotations

from raceday.exercise.fields import ID, SHARED_DIR
from raceday.exercise.model import DebriefContent, Judge, Phase, PhaseTeam, Practice, Source
from raceday.exercise.places import BUNDLED_DIR
from raceday.exercise.read_scoring import ScoringReader
from raceday.exercise.reader import describe, listed_ids
from raceday.exercise.yaml_lines import Located, YamlSyntaxError, load_located


class DebriefReader(ScoringReader):
    """The debrief, shared debrief files, sources, phases, practice; citations checked."""

    def debrief(self, top: dict[str, Located]) -> DebriefContent:
        """The `debrief` section, over the shared file it names (its own keys win; sources
        are merged, the exercise's titles winning)."""
        node = top.get("debrief")
        m = self.fields(node, "debrief", "debrief") if node is not None else {}
        if m is None:
            return DebriefContent()
        for key in ("sources", "phases"):  # the exercise's own vocabularies, at the top
            if key in top and key in m:
                self.problem(m[key].line, f'debrief: "debrief.{key}" moved to "{key}" (at the '
                             f'top of the file); give only "{key}"')
            elif key in m:
                self.move(m[key].line, "debrief", f"`debrief.{key}` moved to `{key}` (at the "
                          f"top of the file)")
            elif key in top:
                m[key] = top[key]
        if not m:
            return DebriefContent()
        base = DebriefContent()
        if "shared" in m:
            # what the exercise says itself is not read from the shared file (sources merge)
            skip = set(m) - {"shared", "sources"}
            base = self.shared(m["shared"], skip) or base
        own = self.debrief_content(m, "debrief")
        sources = {s.tag: s for s in base.sources}
        sources.update({s.tag: s for s in own.sources})
        return DebriefContent(
            night=own.night if "night" in m else base.night,
            sources=tuple(sources.values()),
            phases=own.phases if "phases" in m else base.phases,
            checklist_title=(own.checklist_title if "checklist" in m
                             else base.checklist_title),
            checklist=own.checklist if "checklist" in m else base.checklist,
        )

    def shared(self, node: Located, skip: set[str]) -> DebriefContent | None:
        if not isinstance(node.value, str) or not ID.fullmatch(node.value):
            self.problem(node.line, f'debrief: "shared" must name a file of {SHARED_DIR}/ '
                         f"(an id such as aws-2025-10), not {describe(node)}")
            return None
        beside = self.folder.parent / SHARED_DIR / f"{node.value}.yaml"
        bundled = BUNDLED_DIR / SHARED_DIR / f"{node.value}.yaml"
        path = beside if beside.is_file() else bundled  # a copied exercise uses raceday's own
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            self.problem(node.line, f'debrief: shared file "{node.value}" not found (looked for '
                         f"{beside}: put {node.value}.yaml in a {SHARED_DIR}/ folder beside "
                         "the exercise's folder)")
            return None
        reader = type(self)(path, sql_checker=None)
        reader.ids = self.ids  # its references are to this exercise's milestones and steps
        content = reader.shared_file(text, skip)
        reader.check_refs()
        self.problems.extend(reader.problems)
        return content

    def shared_file(self, text: str, skip: set[str]) -> DebriefContent:
        try:
            root, yaml_problems = load_located(text)
        except YamlSyntaxError as exc:
            self.problem(exc.line, f"YAML syntax error: {exc.message}")
            return DebriefContent()
        for line, message in yaml_problems:
            self.problem(line, message)
        if root is None:
            self.problem(1, "the file is empty")
            return DebriefContent()
        m = self.fields(root, "shared_debrief", "the shared file")
        if m is None:
            return DebriefContent()
        return self.debrief_content({k: v for k, v in m.items() if k not in skip},
                                    "the shared file")

    def debrief_content(self, m: dict[str, Located], what: str) -> DebriefContent:
        checklist_title = ""
        practices: tuple[Practice, ...] = ()
        node = m.get("checklist")
        if node is not None:
            c = self.fields(node, "checklist", f"{what}.checklist")
            if c is not None:
                checklist_title = self.text(c, "title", f"{what}.checklist")
                practices = tuple(
                    self.practice(f, i)
                    for f, i, _l in self.items(c, "practices", "practice",
                                               f"{what}.checklist.practices"))
        return DebriefContent(
            night=self.text(m, "night", what),
            sources=self.sources(m, what),
            phases=tuple(self.phase(f, i)
                         for f, i, _l in self.items(m, "phases", "phase", f"{what}.phases")),
            checklist_title=checklist_title,
            checklist=practices,
        )

    def sources(self, m: dict[str, Located], what: str) -> tuple[Source, ...]:
        node = m.get("sources")
        if node is None:
            return ()
        if not isinstance(node.value, dict):
            self.problem(node.line, f'{what}: "sources" must be a mapping of tag: what it '
                         f"stands for, not {describe(node)}")
            return ()
        found = []
        for tag, item in node.value.items():
            if not isinstance(tag, str) or not ID.fullmatch(tag):
                self.problem(item.line, f'{what}: source tag "{tag}" is not an id')
            elif not isinstance(item.value, str) or not item.value.strip():
                self.problem(item.line, f'{what}: source "{tag}" must say what it stands for '
                             f"(text), not {describe(item)}")
            else:
                found.append(Source(tag, item.value))
        return tuple(found)

    def phase(self, m: dict[str, Located], ident: str) -> Phase:
        what = f'phase "{ident}"'
        team = self.enum(m, "team", what, PhaseTeam, PhaseTeam.FAULT)
        milestone = self.ref(m, "milestone", what, "milestone")
        if milestone is not None and team not in (PhaseTeam.STOPPED, PhaseTeam.REPAIRED):
            self.problem(m["milestone"].line,
                         f'{what}: "milestone" is for a phase whose team is stopped or repaired')
        return Phase(id=ident, label=self.text(m, "label", what, empty=False), team=team,
                     milestone=milestone)

    def practice(self, m: dict[str, Located], ident: str) -> Practice:
        what = f'practice "{ident}"'
        return Practice(
            id=ident,
            title=self.text(m, "title", what, empty=False),
            text=self.text(m, "text", what, empty=False),
            action=self.text(m, "action", what),
            judge=self.enum(m, "judge", what, Judge, Judge.GUARDS),
            steps=self.refs_list(m, "steps", what, "race_step"),
            statements=self.refs_list(m, "statements", what, "statement"),
            harms=self.refs_list(m, "harms", what, "invariant"),
            nights=self.nights_list(m, "nights", what),
            elsewhere=self.text(m, "elsewhere", what),
        )

    def nights_list(self, m: dict[str, Located], key: str, what: str) -> tuple[str, ...]:
        values = self.texts(m, key, what)
        node = m.get(key)
        if node is not None and isinstance(node.value, list):
            self.night_refs.extend((item.line, what, item.value) for item in node.value
                                   if isinstance(item.value, str) and item.value)
        return values

    def check_cited(self, content: DebriefContent) -> None:
        """Each inject's source is one the exercise declares (when it declares any), and each
        reveal's phase one of its phases."""
        declared = {"source": [s.tag for s in content.sources],
                    "phase": [p.id for p in content.phases]}
        for line, what, key, value in self.cited:
            known = declared[key]
            if key == "source" and not known:
                continue  # an exercise that declares no sources may cite any tag
            if value not in known:
                where = f"debrief.{key}s"
                self.problem(line, f'{what}: {key} "{value}" is not one the exercise declares'
                             + (listed_ids(known, where) if known else f" (it has no {where})"))
