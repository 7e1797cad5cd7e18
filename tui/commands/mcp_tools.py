"""The tools `proftui mcp` offers an agent: each the --json of a headless command, its inputs
declared from the command's own options, its paths kept inside the server's roots, its answer
bounded. Nothing here imports the `mcp` SDK (mcp_server does), so it is tested without it."""

from __future__ import annotations

import argparse
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from proftui.core.model.errors import ProftuiError
from proftui.tui.commands.common import json_text
from proftui.tui.text.format import fmt_count

# An answer longer than this many characters is cut (its longest lists halved until it fits)
# and a note says what was left out: about 25,000 tokens, a fair share of an agent's context.
MAX_CHARS = 100_000
# Rows of `ops` and `table` unless `top` says otherwise (their CLI JSON gives every row).
TOP = 50
# Profiles kept open between calls (an agent asks several questions of one profile).
KEEP_OPEN = 4
PATHS = ("path", "base", "new")  # the inputs naming a file or folder
# Inputs whose argparse type is a function of the command's own (a run number: 1 or more).
KINDS = {"run": "integer"}


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the command `command` answering, the `options` of it the tool takes (by
    their argparse dest; the rest keep the command's defaults), and the tool's own `defaults`
    (a bound where the command's JSON gives every row), passed to the command unless
    `implied` (the command applies it itself when not told: `table` without --json)."""

    name: str
    command: str
    options: tuple[str, ...]
    # How its command is asked: "index" (of one opened profile), "path" (reads the path
    # itself), "parsed" (reads it, and checks options together with the parser), "diff" (two
    # opened profiles), "export" (CSV text).
    answer: str
    defaults: dict[str, Any] = field(default_factory=dict)
    implied: bool = False

    def spec(self):
        """The command's declaration (its SPEC)."""
        return import_module(f"proftui.tui.commands.{self.command}").SPEC


TRACE = ("path", "run")
TOOLS = (
    ToolSpec("info", "info", TRACE, "index"),
    ToolSpec("summary", "summary", (*TRACE, "batch_size"), "index"),
    ToolSpec("breakdown", "breakdown", (*TRACE, "iteration", "range", "batch_size"), "index"),
    ToolSpec("advise", "advise", TRACE, "index"),
    ToolSpec("ops", "ops", (*TRACE, "iteration", "range", "by", "side", "sort", "top"), "index",
             {"top": TOP}),
    ToolSpec("iterations", "iterations", TRACE, "index"),
    ToolSpec("diff", "diff", ("base", "new", "by", "side", "top", "skip", "iterations"), "diff"),
    ToolSpec("cluster", "cluster", (*TRACE, "iteration", "top"), "index"),
    ToolSpec("comm", "comm", (*TRACE, "top"), "path"),
    ToolSpec("memory", "memory", (*TRACE, "iteration", "range", "top"), "index"),
    ToolSpec("table", "table", (*TRACE, "name", "group", "where", "sort", "columns", "top"),
             "parsed", {"top": TOP}, implied=True),
    ToolSpec("export", "export", (*TRACE, "iteration", "range", "all", "tracks", "side", "what",
                                  "by", "args", "unit", "time"), "export"),
)
EXPORT_NOTE = ("CSV text of the window (iteration, range or all must be given), cut at "
               f"{fmt_count(MAX_CHARS)} characters with a note saying so.")


def _arguments(tool: ToolSpec) -> list:
    """The command's arguments the tool takes, in the command's order."""
    return [a for a in tool.spec().args() if a.dest in tool.options]


def _property(arg, default: Any) -> dict[str, Any]:
    """The JSON Schema of one argument: its type, choices, default and help."""
    action = arg.keywords.get("action")
    kind = KINDS.get(arg.dest) or {int: "integer", float: "number"}.get(
        arg.keywords.get("type"), "string")
    prop: dict[str, Any] = {"type": "boolean" if action == "store_true" else kind}
    if arg.choices():
        prop["enum"] = list(arg.choices())
    if default not in (None, False, ""):
        prop["default"] = default
    prop["description"] = arg.help.replace("%%", "%")
    return prop


def input_schema(tool: ToolSpec) -> dict[str, Any]:
    """The tool's typed inputs, made from the command's declaration."""
    args = _arguments(tool)
    properties = {a.dest: _property(a, tool.defaults.get(a.dest, a.keywords.get("default")))
                  for a in args}
    for key in PATHS:
        if key in properties:
            properties[key]["description"] += (" (inside the server's roots; a relative path "
                                               "is from the first root)")
    required = [a.dest for a in args if not a.is_option and a.keywords.get("nargs") != "?"]
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def description(tool: ToolSpec) -> str:
    """What the tool answers: the command's own description, and what its text is."""
    spec = tool.spec()
    what = EXPORT_NOTE if tool.answer == "export" else (
        f"Answers the JSON `proftui {spec.name} --json` prints (docs/json.md), cut at "
        f"{fmt_count(MAX_CHARS)} characters with a note saying so.")
    return f"{spec.description.split(chr(10) * 2)[0]}\n\n{what}"


_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float),
                                       "boolean": (bool,), "string": (str,)}
ARTICLE = {"integer": "an", "number": "a", "boolean": "a", "string": "a"}


def checked(tool: ToolSpec, given: dict[str, Any]) -> dict[str, Any]:
    """`given` checked against the tool's schema: one sentence for the first wrong input."""
    schema = input_schema(tool)
    props = schema["properties"]
    for key, value in given.items():
        if key not in props:
            raise ProftuiError(f'{tool.name} takes no input "{key}" (it takes '
                               f"{', '.join(props)}).")
        kind = props[key]["type"]
        wrong_bool = isinstance(value, bool) and kind != "boolean"
        if wrong_bool or not isinstance(value, _TYPES[kind]):
            raise ProftuiError(f'"{key}" is {ARTICLE[kind]} {kind}, not {value!r}.')
        if "enum" in props[key] and value not in props[key]["enum"]:
            raise ProftuiError(f'"{key}" is one of {", ".join(props[key]["enum"])}, not '
                               f"{value!r}.")
    for key in schema["required"]:
        if key not in given:
            raise ProftuiError(f'{tool.name} needs "{key}".')
    return {key: value for key, value in given.items() if value is not None}


def command_line(tool: ToolSpec, values: dict[str, Any]) -> list[str]:
    """The command's arguments saying `values`: options first (--by=type), then after `--`
    the positionals (so that no value is taken for an option)."""
    options, positionals = [], []
    for arg in _arguments(tool):
        if arg.dest not in values:
            continue
        value = values[arg.dest]
        flag = next((f for f in arg.flags if f.startswith("--")), arg.flags[0])
        if not arg.is_option:
            positionals.append(str(value))
        elif arg.keywords.get("action") == "store_true":
            options += [flag] if value else []
        else:
            options.append(f"{flag}={value}")
    return [*options, "--", *positionals]


def _refuse(message: str) -> None:
    """argparse's complaint as the tool's error sentence."""
    raise ProftuiError(message if message.endswith(".") else message + ".")


class Tools:
    """The tools of one server: its roots, the profiles it keeps open, the calls."""

    def __init__(self, roots: list[str], max_chars: int = MAX_CHARS) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        for given, root in zip(roots, self.roots):
            if not os.path.isdir(root):
                raise ProftuiError(f"{given} is not a folder (the roots are folders).")
        self.max_chars = max_chars
        self.by_name = {t.name: t for t in TOOLS}
        self._open: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def inside(self, path: str) -> str:
        """`path` (relative to the first root), resolved with its symlinks followed, when it
        lies in a root; else refused."""
        full = os.path.realpath(os.path.join(self.roots[0], os.path.expanduser(path)))
        if any(full == r or full.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
            return full
        raise ProftuiError(f"{path} is outside the folders this server may read "
                           f"({', '.join(self.roots)}).")

    def open_index(self, path: str, run: int | None = None):
        """The profile at `path` (run `run`), loaded once and kept while it is unchanged."""
        from proftui.tui.commands.common import load

        try:
            changed = os.stat(path).st_mtime_ns
        except OSError:
            changed = None  # the loader says why it cannot read it
        key = (path, run, changed)
        with self._lock:
            if key not in self._open:
                args = argparse.Namespace(path=path, run=run, no_cache=False)
                self._open[key] = load(args, show_progress=False)
                while len(self._open) > KEEP_OPEN:
                    self._open.popitem(last=False)
            self._open.move_to_end(key)
            return self._open[key]

    def call(self, name: str, given: dict[str, Any]) -> list[str]:
        """The answer of tool `name` to the inputs `given`: its text, and a note when it was
        cut. A ProftuiError's sentence where the question cannot be answered."""
        tool = self.by_name.get(name)
        if tool is None:
            raise ProftuiError(f"There is no tool {name!r} (the tools: "
                               f"{', '.join(self.by_name)}).")
        values = checked(tool, given)
        for key in PATHS:
            if key in values:
                values[key] = self.inside(values[key])
        if not tool.implied:
            values = {**tool.defaults, **values}
        parser, args = tool.spec().parse(command_line(tool, values), error=_refuse)
        module = import_module(f"proftui.tui.commands.{tool.command}")
        if tool.answer == "export":
            return self._export(module, args)
        asked: dict[str, Callable[[], dict]] = {
            "index": lambda: module.json_answer(args, self.open_index(args.path, args.run)),
            "path": lambda: module.json_answer(args),
            "parsed": lambda: module.json_answer(parser, args),
            "diff": lambda: module.json_answer(parser, args, self.open_index)}
        return fitted(asked[tool.answer](), self.max_chars)

    def _export(self, module, args) -> list[str]:
        """The window's CSV, cut at max_chars at a line's end."""
        index = self.open_index(args.path, args.run)
        from proftui.tui.commands.common import group_windows, ops_window

        lo, hi, _ = ops_window(args, index)
        window = (lo, hi, group_windows(args, index))
        keys = [k.strip() for k in (args.args or "").split(",") if k.strip()]
        out = Bounded(self.max_chars)
        try:
            module.write_csv(args, index, window, module.chosen_tracks(args, index), keys, out)
        except Bounded.Full:
            pass
        return out.texts()


class Bounded:
    """A text stream keeping its first `limit` characters (CSV lines ended by CRLF); writing
    past them raises Full, which ends the export early."""

    class Full(Exception):
        """More was written than is kept."""

    def __init__(self, limit: int) -> None:
        self.limit, self.parts, self.size, self.cut = limit, [], 0, False

    def write(self, text: str) -> int:
        self.parts.append(text)
        self.size += len(text)
        if self.size > self.limit:
            self.cut = True
            raise Bounded.Full
        return len(text)

    def texts(self) -> list[str]:
        """The CSV (its whole lines within the limit), and a note when it was cut."""
        text = "".join(self.parts)
        if not self.cut:
            return [text]
        text = text[:text.rfind("\r\n", 0, self.limit) + 2]
        rows = max(text.count("\r\n") - 1, 0)
        return [text, f"note: cut to the first {fmt_count(rows)} rows ({fmt_count(self.limit)} "
                      "characters); a narrower window (iteration, range), tracks or side "
                      "gives the rest."]


def fitted(data: dict[str, Any], max_chars: int) -> list[str]:
    """`data` as JSON within `max_chars`: where longer, its longest lists halved until it
    fits, and a note naming each list cut and how many of its items are kept."""
    text = json_text(data, indent=False)
    cuts: dict[str, tuple[int, list]] = {}
    while len(text) > max_chars:
        found = _longest_list(data, "")
        if found is None:
            raise ProftuiError(f"The answer is longer than {fmt_count(max_chars)} characters "
                               "even with its lists cut; ask for less (a window, a smaller "
                               "top).")
        where, items = found
        cuts.setdefault(where, (len(items), items))
        del items[len(items) // 2:]
        text = json_text(data, indent=False)
    if not cuts:
        return [text]
    kept = "; ".join(f"{where} {fmt_count(len(items))} of {fmt_count(n)}"
                     for where, (n, items) in cuts.items())
    return [text, f"note: cut to fit {fmt_count(max_chars)} characters, items kept: {kept}; "
                  "a smaller top or a window gives the rest."]


def _longest_list(data: Any, where: str) -> tuple[str, list] | None:
    """(where, the list) of the non-empty list in `data` whose JSON is longest."""
    best: tuple[int, str, list] | None = None
    stack = [(where, data)]
    while stack:
        at, value = stack.pop()
        if isinstance(value, dict):
            stack += [(f"{at}.{k}" if at else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            if value:
                size = len(json_text(value, indent=False))
                if best is None or size > best[0]:
                    best = (size, at, value)
            stack += [(at, v) for v in value]
    return None if best is None else (best[1], best[2])
