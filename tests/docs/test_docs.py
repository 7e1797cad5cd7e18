"""The docs name only what is real: commands, their options, keys, JSON keys and links.

README.md and docs/*.md are read as text. A command is `proftui NAME` in code (a `span` or a
code block) where NAME is a word; it must be a command the command line declares
(`proftui.tui.cli.declarations()`, read when the test runs, so a command added there is
accepted at once). The `--options` written after it in the
same span or code line must be in that command's `--help`. A key table is a markdown table whose
header is "Key | Does": each key in its first column must be bound by some screen or widget
(or by Textual itself). Every key docs/json.md lists for a command must be in that command's
`--json` output on a bundled sample, and every top-level key of that output must be listed.
Relative links, and their `#anchors`, must resolve.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
CORPUS = ROOT.parent / "shared" / "corpus"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# -- reading markdown -------------------------------------------------------------------------


def _code(text: str) -> list[str]:
    """The code of a markdown text: its inline spans (which may wrap a line) and the lines of
    its indented and fenced code blocks (a `# comment` cut off)."""
    found: list[str] = []
    prose: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            found.append(line.split(" # ")[0])
        else:
            prose.append(line)
    found += [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", "\n".join(prose))]
    return found


def _mentions(code: str) -> list[tuple[str, str]]:
    """(command, the code after it up to the next `proftui`) for each `proftui WORD` in code."""
    out = []
    for part in re.split(r"(?<![\w/.-])proftui ", code)[1:]:
        word = re.match(r"([a-z][a-z_-]*)(?=$|[\s\]|),;:'\"])", part)
        if word:
            out.append((word.group(1), part[word.end():]))
    return out


def _tables(text: str) -> list[list[list[str]]]:
    """The markdown tables of a text, each a list of rows of cells (the header row first)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _sections(text: str) -> dict[str, str]:
    """The text under each `## ` heading, by heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


# -- asking the command line ------------------------------------------------------------------


def _commands() -> tuple[str, ...]:
    """Every command the command line declares (the headless ones and `completion`)."""
    from proftui.tui.cli import declarations

    return tuple(spec.name for spec in declarations() if spec.name)  # "": the viewer


def _run(argv: list[str]) -> tuple[int, str]:
    """Run `proftui ARGV` in this process: its exit status and what it printed on stdout."""
    from proftui.tui.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as stop:  # --help exits
            status = stop.code if isinstance(stop.code, int) else 0
    return status, out.getvalue()


_HELP: dict[str, str] = {}


def _help(command: str) -> str:
    if command not in _HELP:
        _HELP[command] = _run([command, "--help"])[1]
    return _HELP[command]


def _options(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


# -- commands and options ---------------------------------------------------------------------


def test_the_docs_name_commands() -> None:
    """The check is not vacuous: the docs name most commands."""
    named = {cmd for doc in DOCS for code in _code(doc.read_text()) for cmd, _ in _mentions(code)}
    assert len(named & set(_commands())) >= 10, named


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_named_is_real_and_its_options_are_in_its_help(doc: Path) -> None:
    commands = _commands()
    wrong = []
    for code in _code(doc.read_text()):
        for command, rest in _mentions(code):
            if command not in commands:
                wrong.append(f"`proftui {command}` is no command ({code!r})")
                continue
            missing = _options(rest) - _options(_help(command))
            wrong += [f"`proftui {command}` has no {opt} ({code!r})" for opt in sorted(missing)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("doc", [d for d in DOCS if d.name != "performance.md"],
                         ids=lambda p: p.name)
def test_every_option_named_anywhere_is_some_commands(doc: Path) -> None:
    """An option named alone (`--skip N`) is one that proftui or one of its commands takes.
    Code about other tools (python, pytest, pip, the benchmarks, msprof-analyze) is left out,
    and so is performance.md, which is about the benchmarks."""
    known = _options(_run(["PATH", "--help"])[1])
    for command in _commands():
        known |= _options(_help(command))
    other_tools = ("python", "pytest", "pip ", "bench/", "msprof-analyze")
    named = {opt for code in _code(doc.read_text()) if not any(t in code for t in other_tools)
             for opt in _options(code)}
    assert named <= known, sorted(named - known)


# -- keys -------------------------------------------------------------------------------------

_KEY_NAMES = {"enter": "enter", "esc": "escape", "tab": "tab", "space": "space",
              "pgup": "pageup", "pgdn": "pagedown"}


def _key(name: str) -> str:
    """A key as the docs write it (`Esc`, `[`, `shift+left`), as Textual names it."""
    from textual.keys import _character_to_key

    if len(name) == 1:
        return name if name.isalnum() else _character_to_key(name)
    return _KEY_NAMES.get(name.lower(), name.lower())


def _bound_keys() -> set[str]:
    """Every key a proftui screen or widget binds, and those Textual binds itself (Tab moves
    the focus, ctrl+p opens the command palette)."""
    import inspect
    import pkgutil
    from importlib import import_module

    from textual.app import App
    from textual.binding import Binding
    from textual.screen import Screen

    import proftui.tui as tui

    keys = {App.COMMAND_PALETTE_BINDING}
    for bindings in (App.BINDINGS, Screen.BINDINGS):
        keys |= {b.key for b in Binding.make_bindings(bindings)}
    for info in pkgutil.walk_packages(tui.__path__, "proftui.tui."):
        module = import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and "BINDINGS" in cls.__dict__:
                keys |= {b.key for b in Binding.make_bindings(cls.__dict__["BINDINGS"])}
    return keys


def key_tables_keys(text: str) -> list[str]:
    """The keys in the first column of every key table (its header: Key | Does)."""
    keys = []
    for table in _tables(text):
        if table[0][:2] == ["Key", "Does"]:
            for row in table[1:]:
                keys += re.findall(r"`([^`]+)`", row[0])
    return keys


def test_every_key_the_key_tables_name_is_bound() -> None:
    bound = _bound_keys()
    named = {doc.name: key_tables_keys(doc.read_text()) for doc in DOCS}
    assert len(named["README.md"]) >= 20 and len(named["tui.md"]) >= 50, named
    unbound = [f"{doc}: {key}" for doc, keys in named.items() for key in keys
               if _key(key) not in bound]
    assert not unbound, unbound


# -- JSON -------------------------------------------------------------------------------------


def _memory_profile() -> Path:
    """The bundled samples hold no memory data: the corpus's two ranks do, where present."""
    corpus = CORPUS / "torch_npu_2rank" / "text_level1"
    return corpus if corpus.is_dir() else SAMPLES / "cluster_2rank"


# Each section of docs/json.md, and the command line its keys are checked against.
JSON_RUNS = {
    "info": lambda: ["info", "--json", str(SAMPLES / "torch_npu")],
    "summary": lambda: ["summary", "--json", str(SAMPLES / "torch_npu")],
    "ops": lambda: ["ops", "--json", str(SAMPLES / "torch_npu")],
    "ops --efficiency": lambda: ["ops", "--efficiency", "--json",
                                 str(SAMPLES / "kineto_demo.pt.trace.json")],
    "iterations": lambda: ["iterations", "--json", str(SAMPLES / "torch_npu")],
    "breakdown": lambda: ["breakdown", "--json", str(SAMPLES / "torch_npu")],
    "advise": lambda: ["advise", "--json", str(SAMPLES / "torch_npu")],
    "diff": lambda: ["diff", "--json", str(SAMPLES / "cluster_2rank"),
                     str(SAMPLES / "cluster_2rank")],
    "table (one table)": lambda: ["table", "--json", str(SAMPLES / "torch_npu"), "op_statistic"],
    "table (the list)": lambda: ["table", "--json", str(SAMPLES / "torch_npu")],
    "cluster": lambda: ["cluster", "--json", str(SAMPLES / "cluster_2rank")],
    "memory": lambda: ["memory", "--json", str(_memory_profile())],
    "comm": lambda: ["comm", "--json", str(SAMPLES / "cluster_2rank")],
    "cache": lambda: ["cache", "--json"],
}


def _documented_paths(section: str) -> list[str]:
    """The key paths of a json.md section's tables: `a[].b`, and `.c` beside it for `a[].c`."""
    paths = []
    for table in _tables(section):
        for row in table[1:]:
            tokens = re.findall(r"`([^`]+)`", row[0])
            for token in tokens:
                if token.startswith("."):
                    parent = tokens[0].rpartition(".")[0]
                    token = parent + token if parent else token[1:]
                paths.append(token)
    return paths


def _segments(path: str) -> list[str]:
    return re.findall(r"<[^>]*>(?:\[\])?|[^.<]+", path)


FOUND, VACUOUS, MISSING = 2, 1, 0


def _resolve(node: Any, segments: list[str]) -> int:
    """Whether a key path is in a JSON value: FOUND; VACUOUS when every way down ends at a
    null or an empty list before the path does; else MISSING."""
    if not segments:
        return FOUND
    if node is None:
        return VACUOUS
    if not isinstance(node, dict):
        return MISSING
    segment, rest = segments[0], segments[1:]
    listed = segment.endswith("[]")
    name = segment.removesuffix("[]")
    if name.startswith("<"):
        if not node:
            return VACUOUS
        children = list(node.values())
    else:
        if name not in node:
            return MISSING
        children = [node[name]]
    results = []
    for child in children:
        if listed:
            if not child:
                results.append(VACUOUS)
                continue
            if not isinstance(child, list):
                results.append(MISSING)
                continue
            results += [_resolve(item, rest) for item in child]
        else:
            results.append(_resolve(child, rest))
    return max(results)


def _json_sections() -> dict[str, str]:
    return _sections((ROOT / "docs" / "json.md").read_text())


def test_every_command_with_json_has_its_section() -> None:
    titled = {title.split(" ")[0] for title in _json_sections()}
    with_json = {c for c in _commands() if "--json" in _help(c)}
    assert with_json <= titled, sorted(with_json - titled)
    assert set(_json_sections()) <= set(JSON_RUNS), set(_json_sections()) - set(JSON_RUNS)


@pytest.mark.parametrize("title", list(JSON_RUNS))
def test_every_json_key_documented_is_in_the_output_and_back(title: str) -> None:
    section = _json_sections()[title]
    if title == "cache":
        assert _run(["index", str(SAMPLES / "kineto_demo.pt.trace.json")])[0] == 0
    status, out = _run(JSON_RUNS[title]())
    assert status == 0, out
    data = json.loads(out)
    paths = _documented_paths(section)
    results = {path: _resolve(data, _segments(path)) for path in paths}
    missing = [path for path, found in results.items() if found == MISSING]
    assert not missing, f"documented in json.md#{title} but not in the output: {missing}"
    assert sum(found == FOUND for found in results.values()) >= len(results) / 2, results
    documented_tops = {_segments(path)[0].removesuffix("[]") for path in paths}
    assert set(data) <= documented_tops, f"not in json.md#{title}: {set(data) - documented_tops}"


def test_a_documented_key_the_output_lacks_is_caught() -> None:
    data = {"ranks": [{"rank": "rank 0", "steps": []}], "spread": None}
    assert _resolve(data, _segments("ranks[].rank")) == FOUND
    assert _resolve(data, _segments("ranks[].steps[].step_ns")) == VACUOUS
    assert _resolve(data, _segments("spread.anything")) == VACUOUS
    assert _resolve(data, _segments("ranks[].median")) == MISSING
    assert _resolve(data, _segments("<rank>")) == FOUND


# -- links and the front door -----------------------------------------------------------------


@pytest.mark.parametrize("doc", [*DOCS, ROOT / "bench" / "README.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists():
            broken.append(target)
        elif anchor and anchor not in {_slug(h) for h in
                                       re.findall(r"^#+ (.+)$", linked.read_text(), re.M)}:
            broken.append(target)
    assert not broken, broken


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[2:4] == [
        "    pip install -e . && proftui samples/kineto_demo.pt.trace.json",
        "    pip install -e '.[test,parquet,mcp,serve,watch]' && python -m pytest -q -n auto"]
    assert len(lines) <= 150, len(lines)
