"""What the headless commands share: their common options, loading a trace with a progress
bar, the --iteration/--range window, printing tables and JSON, exit statuses."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

# The exit statuses are declared beside the parser (spec); the commands import them from here.
from proftui.tui.commands.spec import EXIT_FAILURE as EXIT_FAILURE
from proftui.tui.commands.spec import EXIT_OK as EXIT_OK
from proftui.tui.commands.spec import EXIT_USAGE as EXIT_USAGE
from proftui.tui.commands.spec import Arg, Group
from proftui.tui.text.format import fmt_count, fmt_duration, shorten_middle
from proftui.tui.text.safe import safe, safe_json, safe_lines
from proftui.tui.text.widths import share_widths

# Plain-text tables pad a column to at most this many characters: long kernel names still
# line up, and one megabyte-long name does not make every line a megabyte.
MAX_ALIGN = 1000
# On a terminal, a table leaves out its last columns rather than cut a text column (a name)
# shorter than this.
READABLE_TEXT = 24


def check_top(parser: argparse.ArgumentParser, top: int | None, *,
              zero_is_all: bool = False) -> None:
    """Bad usage for a --top under 1, or under 0 where --top 0 prints every row."""
    if top is None:
        return
    if zero_is_all and top < 0:
        parser.error("--top wants a count of 0 or more")
    if not zero_is_all and top < 1:
        parser.error("--top wants 1 or more")


def _positive(parser: argparse.ArgumentParser, value: float | None) -> None:
    if value is not None and not value > 0:  # NaN too
        parser.error("a peak wants a number above 0")


def peaks_options() -> tuple[Arg, ...]:
    """--device, --peaks, --peak-tflops and --peak-tbps: the peaks op efficiency is judged
    against (see proftui.core.perf.efficiency.profile_peaks and :func:`peaks_asked`)."""
    return (
        Arg("--device", metavar="NAME",
            help="judge op efficiency against this device's peaks (a name the peaks table "
                 "matches: H100 SXM, A100-SXM4-80GB, MI300X, Ascend910_9392 ...) rather than "
                 "the one the profile names"),
        Arg("--peaks", metavar="FILE", files=True,
            help="a CSV of device peaks with the columns of the bundled table, searched "
                 "first (a file of one row needs no name)"),
        Arg("--peak-tflops", type=float, metavar="X", check=_positive,
            help="the matrix peak in TFLOP/s, for every dtype (overrides the table's)"),
        Arg("--peak-tbps", type=float, metavar="X", check=_positive,
            help="the memory bandwidth in TB/s (overrides the table's)"))


def peaks_asked(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of profile_peaks that :func:`peaks_options` were given (none where the
    command does not declare them)."""
    return {key: getattr(args, name, None) for key, name in (
        ("device", "device"), ("peaks_file", "peaks"), ("tflops", "peak_tflops"),
        ("tbps", "peak_tbps"))}


def _run_number(text: str) -> int:
    """A run number for --run: 1 or more."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a run number is 1 or more, not {text!r}")
    return int(text)


# The options several commands take, each declared here once.
PATH = Arg("path", files=True, help="a trace file (.json, .json.gz) or a profile directory "
                                    "(PROF_XXX, *_ascend_pt, a folder of ranks)")
RUN = Arg("--run", type=_run_number, metavar="N", help="of a folder holding several separate "
                                                       "runs (proftui lists them), open run N")
NO_CACHE = Arg("--no-cache", action="store_true",
               help="index the file afresh; do not read or write the cache")
TRACE = (PATH, RUN, NO_CACHE)  # what a command reading one trace or profile takes first
SIDES = ("all", "device", "host")
ITERATION = Arg("--iteration", type=int, metavar="N",
                help="only the slices overlapping iteration N")
RANGE = Arg("--range", metavar="T0:T1",
            help="a window from the capture start (the profile's earliest timestamp), e.g. "
                 "12.5ms:40ms (bare numbers are µs; units ns, us, ms, s; an end may be left out)")
WINDOW = Group((ITERATION, RANGE))
# A window that must be given: --all, the whole trace, is one.
WINDOW_OR_ALL = Group((ITERATION, RANGE, Arg("--all", action="store_true",
                                             help="the whole trace")), required=True)


def json_option(numbers: str = "") -> Arg:
    """--json, its help saying how the JSON writes numbers (`numbers`, e.g. "times in integer
    ns")."""
    return Arg("--json", action="store_true",
               help="print JSON for machines" + (f" ({numbers})" if numbers else ""))


def _check_batch_size(parser: argparse.ArgumentParser, size: int | None) -> None:
    if size is not None and size < 1:
        parser.error("--batch-size wants 1 or more")


BATCH_SIZE = Arg("--batch-size", type=int, metavar="N", check=_check_batch_size,
                 help="samples a step: samples a second beside steps a second")


def top_option(help: str, default: int | None = None, least: int | None = 1) -> Arg:
    """--top K: `least` is the smallest count allowed (0 where --top 0 means all; None where
    the command checks it itself)."""
    check = None if least is None else partial(check_top, zero_is_all=least == 0)
    return Arg("--top", type=int, default=default, metavar="K", check=check, help=help)


def _groupings(leave_out: tuple[str, ...]) -> tuple[str, ...]:
    # Imported when a parser is made, not when a command is declared: this module is numpy's.
    from proftui.core.ops.grouping import GROUP_BY

    return tuple(key for key in GROUP_BY if key not in leave_out)


def by_option(help: str, leave_out: tuple[str, ...] = ()) -> Arg:
    """--by: how ops are grouped (the core's GROUP_BY, but those in `leave_out`)."""
    return Arg("--by", choices=partial(_groupings, leave_out), default="name", help=help)


def side_option(help: str = "device tracks (GPU/NPU streams), host tracks, or all "
                            "(default)") -> Arg:
    """--side all|device|host."""
    return Arg("--side", choices=SIDES, default="all", help=help)


if TYPE_CHECKING:
    from proftui.core.load.progress import FileStatus


@contextmanager
def _progress(enabled: bool) -> Iterator[dict[str, Callable[..., None]]]:
    """load_trace's progress callbacks drawing a bar on stderr (which names each file of a
    profile of several, how many of how many, and how many ranks are done and came from the
    cache), or none when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield {}
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    from proftui.tui.text.ranks_progress import ranks_tally

    columns = (TextColumn("{task.fields[what]}"), TextColumn("{task.fields[ranks]}"),
               BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TextColumn("{task.fields[events]} events"),
               TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("index", total=None, events="0", what="indexing", ranks="")

        def update(done: int, total: int, events: int) -> None:
            bar.update(task, completed=done, total=total, events=fmt_count(events))

        def file_begun(number: int, of: int, name: str) -> None:
            if of > 1:
                bar.update(task, what=f"indexing {number} of {of}: "
                                      f"{shorten_middle(safe(name), 40)}")

        def ranks_told(files: tuple[FileStatus, ...]) -> None:
            bar.update(task, ranks=f"({ranks_tally(files)})")

        yield {"progress": update, "file_progress": file_begun, "ranks_progress": ranks_told}


def load(args: argparse.Namespace, show_progress: bool = True):
    """The trace or profile of `args.path` (refused when it holds nothing to show)."""
    from proftui.core import load_trace
    from proftui.core.load.loader import check_not_empty

    with _progress(show_progress) as callbacks:
        index = load_trace(args.path, run=args.run, use_cache=not args.no_cache, **callbacks)
    check_not_empty(index, args.path)
    return index


def damage_warnings(index) -> list[dict[str, Any]]:
    """The `warnings` of every --json: the damage of what was read, a kind an object (see
    Diagnostics.warnings); where a cut profile stops is known of one timeline only."""
    one_timeline = len(index.meta.get("sources") or ()) == 1
    return index.diagnostics.warnings(index.end_ns if one_timeline else None)


def warning_line(warnings: list[dict[str, Any]], origin_ns: int) -> str:
    """The one line said before an answer built from damaged input (empty without damage):
    what was lost and, of a cut file, where the profile stops (from the capture start,
    `origin_ns`). The commands print it first and the app shows it on its status line."""
    if not warnings:
        return ""
    parts = []
    for w in warnings:
        what = safe(w["message"])
        if w["count"] > 1:
            what = f"{fmt_count(w['count'])} x {what}"
        if w.get("first_offset") is not None:
            what += f" at byte {fmt_count(w['first_offset'])}"
        if w.get("end_ns") is not None:
            what += (f": the profile stops at {fmt_duration(w['end_ns'] - origin_ns)} from "
                     "the capture start and what came after is lost")
        parts.append(what)
    return "warning: damaged input, the numbers below lack what was lost: " + "; ".join(parts)


def index_warning_line(index) -> str:
    """The warning line of `index` (empty without damage)."""
    from proftui.core.ops.iterations import capture_start_ns

    return warning_line(damage_warnings(index), capture_start_ns(index))


def print_warning(index, stream: Any = None) -> None:
    """The warning line of `index`, when it has damage, on `stream` (stdout)."""
    line = index_warning_line(index)
    if line:
        (stream or sys.stdout).write(line + "\n")


def warning(kind: str, message: str, count: int = 1) -> dict[str, Any]:
    """One item of a --json's `warnings` that no import counted (shaped as theirs)."""
    return {"kind": kind, "count": count, "message": message, "first_offset": None,
            "end_ns": None}


def rank_keys(item: dict[str, Any] | None) -> dict[str, Any] | None:
    """`item` (a JSON object naming a rank by its label in `rank`) with the label as `group`
    and `rank` the rank's number (null where the label names none), as every --json has
    them."""
    if item is None or not isinstance(item.get("rank"), str):
        return item
    from proftui.core.analysis.cluster_comm import rank_number

    return {**item, "rank": rank_number(item["rank"]), "group": item["rank"]}


def with_warnings(data: dict[str, Any], index) -> dict[str, Any]:
    """`data` (a command's --json) with the `warnings` of `index` added."""
    return {**data, "warnings": damage_warnings(index)}


def profile_iterations(index):
    """The iterations of a loaded trace or profile, from its timeline and its step CSVs."""
    from proftui.core.analysis.overview import read_overview

    return read_overview(index)[2]


def grouping_tables(index, by: str) -> list:
    """The profile's summary tables when grouping by type or engine (the op tables say
    both for Ascend ops), else none."""
    if by not in ("type", "engine"):
        return []
    from proftui.core.analysis.overview import read_overview

    return read_overview(index)[1]


def print_json(data: Any) -> None:
    """`data` as indented JSON, safe to show on a terminal (see :func:`json_text`)."""
    sys.stdout.write(json_text(data) + "\n")


def json_text(data: Any, indent: bool = True) -> str:
    """`data` as JSON (indented, unless `indent` is False) that a terminal shows as it is:
    orjson escapes C0 controls but leaves DEL, C1 (U+009B is a CSI), bidi controls and
    U+2028/9 raw, so those become \\uXXXX too (the same JSON). Text orjson refuses (a lone
    surrogate: a file name that is not UTF-8) is written by the standard library as \\udcXX
    instead."""
    try:
        text = orjson.dumps(data, option=orjson.OPT_INDENT_2 if indent else None).decode()
    except orjson.JSONEncodeError:
        import json

        text = json.dumps(_nan_as_null(data), indent=2 if indent else None,
                          separators=None if indent else (",", ":"), ensure_ascii=False,
                          default=str)
    return safe_json(text)


def _nan_as_null(data: Any) -> Any:
    """`data` with NaN and infinite floats as None (as orjson writes them)."""
    if isinstance(data, float):
        return data if data - data == 0 else None
    if isinstance(data, dict):
        return {k: _nan_as_null(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_nan_as_null(v) for v in data]
    return data


def ops_window(args: argparse.Namespace, index) -> tuple[int, int, str]:
    """(start_ns, end_ns, label) of the window asked for by --iteration or --range."""
    from proftui.core.model.errors import ProftuiError
    from proftui.core.ops.iterations import capture_start_ns
    from proftui.core.tables.query import parse_time_ns

    origin, end = capture_start_ns(index), index.end_ns
    if args.iteration is not None:
        found = profile_iterations(index)
        mine = [it for it in found.items if it.number == args.iteration]
        timed = [it for it in mine if it.start_ns >= 0 <= it.end_ns]
        if not mine:
            numbers = sorted({it.number for it in found.items})
            known = (f"iterations {numbers[0]} to {numbers[-1]}" if numbers
                     else "no iterations")
            raise ProftuiError(f"Iteration {args.iteration} is not in this profile (it has "
                               f"{known}).")
        if not timed:
            raise ProftuiError(f"Iteration {args.iteration} has no time window (its source "
                               "gives only its length).")
        lo = min(it.start_ns for it in timed)
        hi = max(it.end_ns for it in timed)
        groups = f" of {len(timed)} groups" if len(timed) > 1 else ""
        label = f"iteration {args.iteration}{groups}"
    elif getattr(args, "range", None) is not None:  # (commands without --range)
        first, sep, last = args.range.partition(":")
        if not sep:
            raise ProftuiError(f'--range wants T0:T1 (e.g. 12.5ms:20ms), not "{args.range}".')
        lo = origin + parse_time_ns(first) if first.strip() else origin
        hi = origin + parse_time_ns(last) if last.strip() else end
        if hi <= lo:
            raise ProftuiError(f"--range {args.range} ends before it starts.")
        label = "range"
    else:
        return origin, end, "whole trace"
    return lo, hi, label


def group_windows(args: argparse.Namespace, index) -> dict[str, tuple[int, int]] | None:
    """With --iteration N on a profile of several groups (ranks or devices): each group's own
    window of step N, as their steps do not line up (nor, across hosts, their clocks); None
    otherwise (one window serves, from ops_window)."""
    from proftui.core.ops.iterations import group_windows as own_windows

    if getattr(args, "iteration", None) is None:
        return None
    found = own_windows(profile_iterations(index).items, args.iteration)
    return found if len(found) > 1 else None


def window_text(label: str, lo: int, hi: int, origin: int) -> str:
    """Which window numbers describe, e.g. "iteration 3 (12.5 ms to 25 ms from the capture
    start, 12.5 ms)"; `origin` is the capture start (capture_start_ns)."""
    from proftui.core.ops.iterations import FROM_CAPTURE_START

    return (f"{label} ({fmt_duration(lo - origin)} to {fmt_duration(hi - origin)} "
            f"{FROM_CAPTURE_START}, {fmt_duration(hi - lo)})")


def print_table(table, columns: list[int], rows, title: str, blank: str = "") -> None:
    """Rows of a core table: a rich table on a terminal, aligned plain text when piped;
    an empty first cell (a name) is shown as `blank`."""
    from proftui.core.tables.query import rows_text

    title = safe(title)  # titles quote group names (folder names) and CSV headers
    headers = [safe(table.columns[c].header) for c in columns]
    cells = [[safe(x) for x in row] for row in rows_text(table, rows, columns)]
    for row in cells:
        if row and not row[0]:
            row[0] = blank
    right = [table.columns[c].kind != "text" for c in columns]
    widths = [min(max([len(h), *(len(r[i]) for r in cells)]), MAX_ALIGN)
              for i, h in enumerate(headers)]
    if sys.stdout.isatty():
        from rich import box
        from rich.console import Console
        from rich.table import Table as RichTable
        from rich.text import Text

        console = Console()
        # Names cut to a few characters say nothing: where the columns leave a text column
        # less than READABLE_TEXT cells, the last columns are left out (and named below).
        hidden: list[str] = []
        while len(headers) > 2 and not _readable(widths, right, console.width):
            hidden.insert(0, headers.pop())
            for items in (widths, right, *cells):
                items.pop()
        # Numbers keep their full width; text columns share the rest (cut with an ellipsis).
        # Where boxed columns leave the text too little, columns are ruled by spaces only.
        n_text = max(right.count(False), 1)
        boxed = console.width - 1 - sum(w + 3 for w, r in zip(widths, right) if r)
        compact = boxed // n_text - 3 < 12 or bool(hidden)
        cost = 2 if compact else 3
        spare = console.width - 1 - sum(w + cost for w, r in zip(widths, right) if r)
        text_widths = iter(share_widths([w for w, r in zip(widths, right) if not r],
                                        spare - cost * n_text))
        view = (RichTable(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD,
                          pad_edge=False, show_edge=False, padding=(0, 1),
                          collapse_padding=True) if compact
                else RichTable(title=Text(title), title_justify="left"))
        for header, width, is_right in zip(headers, widths, right):
            view.add_column(Text(header), justify="right" if is_right else "left",
                            no_wrap=True, overflow="ellipsis", min_width=width if is_right
                            else None, max_width=None if is_right else next(text_widths))
        for row in cells:
            view.add_row(*(Text(x) for x in row))
        console.print(view)
        if hidden:
            console.print(Text(f"not shown at this width: {', '.join(hidden)} "
                               "(a wider terminal shows them)", style="dim"))
        return

    def line(row: list[str]) -> str:
        return "  ".join(x.rjust(w) if r else x.ljust(w)
                         for x, w, r in zip(row, widths, right)).rstrip()

    out = [title, line(headers)] + [line(row) for row in cells]
    sys.stdout.write("\n".join(out) + "\n")


def print_whole_table(table, title: str) -> None:
    """Every row and column of a core table (see :func:`print_table`)."""
    print_table(table, list(range(len(table.columns))), range(table.n_rows), title)


def _readable(widths: list[int], right: list[bool], width: int) -> bool:
    """Whether, the numbers keeping their width, each text column can have what it needs or
    at least READABLE_TEXT cells (two cells between columns)."""
    return sum(w if r else min(w, READABLE_TEXT) for w, r in zip(widths, right)) \
        + 2 * len(widths) < width


def json_key(column) -> str:
    key = column.name.strip().lower().replace(" ", "_")
    return key + {"ns": "_ns", "%": "_pct"}.get(column.unit, "")


def json_value(column, value):
    if column.kind == "text":
        return str(value)
    number = float(value)
    if number != number:
        return None
    if column.unit == "ns" and number - number == 0:
        return round(number)  # times are integer ns in every --json (a mean too)
    if number.is_integer() and column.unit == "":
        return int(number)
    return number


class TerminalText:
    """A text stream onto a terminal that shows control characters escaped (CSV is data:
    exact into a pipe or file, but a person's screen must not obey the escapes in it)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        # The CSV writer ends lines with a whole CRLF in one write, so none is split here.
        return self.stream.write(safe_lines(text))

    def flush(self) -> None:
        self.stream.flush()


def diagnostic_lines(items: list[dict[str, Any]]) -> list[str]:
    """Import problems, damage apart from notes (see :mod:`proftui.core.model.diagnostics`), one
    line per kind: `items` as ``Diagnostics.to_list`` gives them (or "diagnostics none")."""
    from proftui.core.model.diagnostics import KINDS, severity

    if not items:
        return ["diagnostics none"]
    damage = [d for d in items if severity(d["kind"]) == "damage"]
    notes = [d for d in items if severity(d["kind"]) == "note"]
    n_damage, n_notes = (sum(d["count"] for d in part) for part in (damage, notes))
    lines = [f"diagnostics damage {fmt_count(n_damage)}, notes {fmt_count(n_notes)}"]
    for title, part in (("damage (input that could not be read, or not used as written)",
                         damage),
                        ("notes (normal in profilers' output; nothing was lost)", notes)):
        if part:
            lines.append(f"  {title}")
        for d in part:
            where = (f" (first at byte {d['first_offset']})"
                     if d.get("first_offset") is not None else "")
            detail = f": {safe(d['detail'])}" if d.get("detail") else ""
            message = d.get("message") or KINDS.get(d["kind"], d["kind"])
            lines.append(f"  {fmt_count(d['count']):>10}  {safe(message)}{where}{detail}")
    return lines


# -- addresses ------------------------------------------------------------------------------

LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine's loopback (127.0.0.0/8, ::1, localhost): a server
    listening there is reached from this machine only."""
    import ipaddress  # only serve asks

    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # another host name: it may well resolve to a network address
        return False
