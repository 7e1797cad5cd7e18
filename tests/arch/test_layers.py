"""The layout shows the data flow: packages import one way only.

Every import of every module (at the top, inside functions and under TYPE_CHECKING alike) is
read from the source, and each one that crosses from one package to another must go down the
order below. A new package must be placed in it; a module at the top of `core/` or `tui/`
(outside any sub-package) is refused, but for the few named here.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Lowest first: a package may import from packages before it, never after it.
CORE = ("model", "runtime", "source", "build", "importers", "discover", "cache", "load",
        "query", "ops", "tables", "perf", "analysis", "export")
TUI = ("text", "report", "commands", "widgets", "screens", "panes", "app", "compare_app",
       "launch", "cli")
ORDER = [f"core.{p}" for p in CORE] + ["themes"] + [f"tui.{p}" for p in TUI]
TOP_MODULES = {"core": set(), "tui": {p for p in TUI if (ROOT / "tui" / f"{p}.py").exists()}}


def unit(module: str) -> str | None:
    """The package a module belongs to, as named in ORDER (None: the root package)."""
    parts = module.split(".")[1:]  # drop "proftui"
    if not parts or parts == ["core"] or parts == ["tui"]:
        return None
    if parts[0] == "themes":
        return "themes"
    return ".".join(parts[:2])


def modules() -> dict[str, Path]:
    found = {}
    for top in ("core", "tui", "themes"):
        for path in (ROOT / top).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            name = ".".join(("proftui", *rel.parts))
            found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The proftui modules `path` imports (a name imported from a package counts as its module
    when it is one)."""
    out = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("proftui")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if not base.startswith("proftui"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
    return out


def crossings() -> dict[tuple[str, str], list[str]]:
    known = modules()
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, path in known.items():
        for target in imports(path, name, known):
            a, b = unit(name), unit(target)
            if a and b and a != b:
                found[(a, b)].append(f"{name} -> {target}")
    return found


def test_every_package_has_its_place_in_the_order() -> None:
    units = {unit(name) for name in modules()} - {None}
    assert units <= set(ORDER), sorted(units - set(ORDER))


def test_no_module_lies_loose_at_the_top_of_core_or_tui() -> None:
    for top, allowed in TOP_MODULES.items():
        loose = {p.stem for p in (ROOT / top).glob("*.py")} - {"__init__"} - allowed
        assert not loose, f"{top}/ holds {sorted(loose)}: put each in a sub-package"


def test_packages_import_one_way() -> None:
    rank = {u: i for i, u in enumerate(ORDER)}
    upward = {pair: where for pair, where in crossings().items()
              if rank[pair[0]] < rank[pair[1]]}
    assert not upward, "\n".join(f"{a} imports {b}: {where[:3]}"
                                 for (a, b), where in sorted(upward.items()))


def test_the_check_sees_imports_inside_functions() -> None:
    """A lazy import is still a dependency: the checker finds the core's lazy import of its
    loader in the package's own `__getattr__` and the loader's imports in function bodies."""
    found = crossings()
    assert ("core.load", "core.importers") in found
    assert ("tui.app", "tui.widgets") in found
