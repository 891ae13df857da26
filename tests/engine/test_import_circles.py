"""The engine's modules import one another in one direction only, imports made for the type
checker and imports inside functions included. `lint-imports` leaves type-checking imports
out (other packages still lean on them), so a circle hidden behind `if TYPE_CHECKING` would
pass it: this test is where the engine's are refused."""

from __future__ import annotations

import grimp


def _circle(graph: grimp.ImportGraph, package: str) -> list[str]:
    """A circle among the direct children of `package` (their own children counted as
    them), as the list of modules that form it, or [] when there is none."""
    children = sorted(graph.find_children(package))

    def owner(module: str) -> str | None:
        return next((c for c in children if module == c or module.startswith(c + ".")), None)

    edges: dict[str, set[str]] = {}
    for child in children:
        found: set[str] = set()
        for module in {child} | graph.find_descendants(child):
            for imported in graph.find_modules_directly_imported_by(module):
                target = owner(imported)
                if target is not None and target != child:
                    found.add(target)
        edges[child] = found

    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return []
        for target in sorted(edges[module]):
            circle = visit(target, [*path, module])
            if circle:
                return circle
        done.add(module)
        return []

    for child in children:
        circle = visit(child, [])
        if circle:
            return circle
    return []


def test_the_engine_has_no_import_circle_even_for_the_type_checker() -> None:
    graph = grimp.build_graph("raceday", exclude_type_checking_imports=False)
    circle = _circle(graph, "raceday.engine")
    assert circle == [], " -> ".join(circle)


def test_a_circle_behind_the_type_checker_is_found() -> None:
    """The check itself: a planted circle (as `Session` and the replay once were) is named."""
    graph = grimp.ImportGraph()
    for module in ("eng", "eng.session", "eng.replay", "eng.clock", "eng.sub", "eng.sub.deep"):
        graph.add_module(module)
    graph.add_import(importer="eng.session", imported="eng.replay")
    graph.add_import(importer="eng.replay", imported="eng.clock")
    assert _circle(graph, "eng") == []
    graph.add_import(importer="eng.replay", imported="eng.sub.deep")
    graph.add_import(importer="eng.sub.deep", imported="eng.session")
    assert _circle(graph, "eng") == ["eng.replay", "eng.sub", "eng.session", "eng.replay"]
