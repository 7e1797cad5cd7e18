"""The `proftui` command line: open a trace in the app, or run a headless command.

Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Errors are one sentence on
stderr; results go to stdout; progress bars go to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from proftui import __version__
from proftui.tui.format import fmt_count, fmt_duration
from proftui.tui.safe import safe, safe_json, safe_lines

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
MAX_FILES_SHOWN = 20
# Plain-text tables pad a column to at most this many characters: long kernel names still
# line up, and one megabyte-long name does not make every line a megabyte.
MAX_ALIGN = 1000


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one sentence on bad usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # The message quotes the arguments, and a file name may hold escape sequences.
        self.exit(EXIT_USAGE, f"{self.prog}: {safe(message)} (see {self.prog} --help)\n")


def _parser(command: str, description: str, examples: str) -> _Parser:
    parser = _Parser(
        prog=f"proftui {command}".strip(), description=description,
        epilog=f"examples:\n{examples}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a trace file (.json, .json.gz) or a profile directory "
                                     "(PROF_XXX, *_ascend_pt, a folder of ranks)")
    parser.add_argument("--run", type=_run_number, metavar="N",
                        help="of a folder holding several separate runs (proftui lists "
                             "them), open run N")
    parser.add_argument("--no-cache", action="store_true",
                        help="index the file afresh; do not read or write the cache")
    parser.add_argument("-V", "--version", action="version", version=f"proftui {__version__}")
    return parser


def _run_number(text: str) -> int:
    """A run number for --run: 1 or more."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a run number is 1 or more, not {text!r}")
    return int(text)


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int, int], None] | None]:
    """A progress callback drawing a bar on stderr, or None when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
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

    columns = (TextColumn("indexing"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TextColumn("{task.fields[events]} events"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("index", total=None, events="0")

        def update(done: int, total: int, events: int) -> None:
            bar.update(task, completed=done, total=total, events=fmt_count(events))

        yield update


def _load(args: argparse.Namespace, show_progress: bool = True):
    from proftui.core import load_trace

    with _progress(show_progress) as progress:
        return load_trace(args.path, run=args.run, use_cache=not args.no_cache,
                          progress=progress)


# -- commands -------------------------------------------------------------------------------


def cmd_info(argv: list[str]) -> int:
    parser = _parser("info", "Print what a trace or profile holds: processes, threads, event "
                     "counts by phase, time span, iterations, summary tables, files not used "
                     "and import diagnostics.",
                     "  proftui info trace.json\n"
                     "  proftui info PROF_000001_20260605161708478_FRJKORBPFMHQMGLA\n"
                     "  proftui info --json run.pt.trace.json.gz | jq .slices")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    from proftui.core.overview import overview

    summary = overview(_load(args))
    if args.json:
        _print_json(summary)
    else:
        sys.stdout.write("\n".join(info_lines(summary)) + "\n")
    return EXIT_OK


def info_lines(summary: dict[str, Any]) -> list[str]:
    """The `info` report as plain lines (all trace text escaped)."""
    lines = []
    profile = summary.get("profile") or {}
    if profile and profile.get("layouts") != ["trace file"]:
        lines.append(f"profile    {safe(profile['root'])}")
        if profile.get("run"):
            run = profile["run"]
            lines.append(f"run        {run['number']} of {run['of']}: {safe(run['where'])}")
        lines.append(f"found      {safe(', '.join(profile['layouts'])) or 'nothing recognised'}")
        if profile["groups"] and profile["groups"] != [""]:
            lines.append(f"groups     {', '.join(safe(g) or '(top)' for g in profile['groups'])}")
    for n, src in enumerate(summary["sources"]):
        if n == MAX_FILES_SHOWN:
            lines.append(f"           ... and {len(summary['sources']) - n} more (see --json)")
            break
        gz = ", gzip" if src.get("compressed") else ""
        group = f" [{safe(src['group'])}]" if src.get("group") else ""
        lines.append(f"trace      {safe(src['path'])} ({fmt_count(src['size'])} bytes{gz}){group}")
        if src.get("clock"):
            lines.append(f"  clock    {safe(src['clock'])}")
    if summary["sources"]:
        lines.append(f"format     {safe(summary['format'])} form, display unit "
                     f"{safe(summary['display_time_unit'])}")
        lines += _timeline_lines(summary)
    if "iterations" in summary:
        lines += _iteration_lines(summary["iterations"])
    if profile.get("tables"):
        lines.append(f"tables     {len(profile['tables'])}")
        for table in profile["tables"]:
            group = f" [{safe(table['group'])}]" if table["group"] else ""
            shape = (f"{fmt_count(table['rows']):>9} rows x {len(table['columns']):<3}"
                     if "rows" in table else safe(table.get("error", "")))
            lines.append(f"  {safe(table['kind']):<22} {shape} "
                         f"{safe(_short(table['path'], profile))}{group}")
            for problem in table.get("diagnostics", []):
                lines.append(f"  {'':<22} {fmt_count(problem['count']):>9} "
                             f"{safe(problem['message'])}")
    if profile.get("skipped"):
        lines.append(f"not used   {len(profile['skipped'])}")
        for item in profile["skipped"]:
            lines.append(f"  {safe(_short(item['path'], profile))}: {safe(item['why'])}")
    if summary["diagnostics"]:
        lines.append("diagnostics")
        for d in summary["diagnostics"]:
            where = f" (first at byte {d['first_offset']})" if d["first_offset"] is not None else ""
            detail = f": {safe(d['detail'])}" if d["detail"] else ""
            lines.append(f"  {fmt_count(d['count']):>10}  {safe(d['message'])}{where}{detail}")
    else:
        lines.append("diagnostics none")
    return lines


def _timeline_lines(summary: dict[str, Any]) -> list[str]:
    lines: list[str] = []

    lines.append(f"span       {fmt_duration(summary['duration_ns'])} "
                 f"(from {summary['start_ns']} ns to {summary['end_ns']} ns)")
    phases = ", ".join(f"{safe(k) or '(none)'} {fmt_count(v)}"
                       for k, v in summary["phase_counts"].items())
    lines.append(f"events     {fmt_count(summary['events'])}" + (f" ({phases})" if phases else ""))
    lines.append(f"slices     {fmt_count(summary['slices'])}; instants "
                 f"{fmt_count(summary['instants'])}; counters {summary['counter_series']} series, "
                 f"{fmt_count(summary['counter_samples'])} samples; flow edges "
                 f"{fmt_count(summary['flow_edges'])}")
    lines.append(f"processes  {len(summary['processes'])}")
    listed = 0
    for proc in summary["processes"]:
        label = safe(proc["name"]) or "Process"
        if proc.get("group"):
            label = f"{safe(proc['group'])}: {label}"
        extra = f" [{safe(proc['labels'])}]" if proc["labels"] else ""
        lines.append(f"  {label} (pid {safe(proc['pid']) or '-'}){extra}")
        lines += [f"    {_track_line(track)}" for track in proc["tracks"]]
        listed += len(proc["tracks"])
    lines += [f"  {_track_line(track)}" for track in summary["other_tracks"]]
    listed += len(summary["other_tracks"])
    if summary["n_tracks"] > listed:
        lines.append(f"  ... and {fmt_count(summary['n_tracks'] - listed)} more tracks")
    return lines


def _iteration_lines(iterations: dict[str, Any]) -> list[str]:
    items = iterations["items"]
    if not items:
        return ["iterations none found"]
    timed = [it for it in items if it["dur_ns"] >= 0]
    line = f"iterations {len(items)} (from {safe(iterations['source'])})"
    if timed:
        durations = sorted(it["dur_ns"] for it in timed)
        slowest = max(timed, key=lambda it: it["dur_ns"])
        group = f" of {safe(slowest['group'])}" if slowest["group"] else ""
        line += (f"; median {fmt_duration(durations[len(durations) // 2])}, slowest "
                 f"#{slowest['number']}{group} {fmt_duration(slowest['dur_ns'])}")
    return [line]


def _short(path: str, profile: dict[str, Any]) -> str:
    """A path relative to the profile's root."""
    root = profile.get("root") or ""
    return path[len(root) + 1:] if root and path.startswith(root + "/") else path


def track_contents(track: dict[str, Any]) -> str:
    """What a track holds, e.g. "1,024 slices in 3 rows, 2 instants"."""
    parts = []
    if track["slices"]:
        parts.append(f"{fmt_count(track['slices'])} slices in {track['rows']} rows")
    if track["instants"]:
        parts.append(f"{fmt_count(track['instants'])} instants")
    if track["counter_series"]:
        parts.append(f"{track['counter_series']} counters")
    return ", ".join(parts) or "empty"


def _track_line(track: dict[str, Any]) -> str:
    line = f"{safe(track['name']):<40} {safe(track['kind']):<8} {track_contents(track)}"
    if "side" in track and track["slices"]:
        role = {"derived": "; derived view, not counted",
                "copy": "; repeats the device streams' tasks, not counted"}.get(track["role"], "")
        line += f"  [{track['side']} by {track['side_by']}{role}]"
    return line


def cmd_index(argv: list[str]) -> int:
    parser = _parser("index", "Index a trace and store the index in the cache, so that "
                     "opening it later is instant.", "  proftui index big_trace.json.gz")
    args = parser.parse_args(argv)
    if args.no_cache:
        parser.error("--no-cache makes no sense for index")
    index = _load(args)
    where = index.meta.get("cache_path")
    if index.meta.get("from_cache"):
        sys.stdout.write(f"already indexed: {fmt_count(index.n_slices)} slices\n")
    elif where:
        sys.stdout.write(f"indexed {fmt_count(index.n_slices)} slices into {safe(where)}\n")
    else:
        why = index.meta.get("cache_error", "the cache was not written")
        sys.stderr.write(f"proftui: {safe(why)}\n")
        return EXIT_FAILURE
    return EXIT_OK


def cmd_open(argv: list[str]) -> int:
    from proftui.themes import DEFAULT_THEME, THEME_NAMES

    parser = _parser("", "Open a trace in the terminal viewer (? in the viewer lists the keys).",
                     "  proftui trace.json\n  proftui --theme light PROF_000001_...\n"
                     "  NO_COLOR=1 proftui trace.json\n  proftui info trace.json      (headless)")
    parser.add_argument("--theme", choices=sorted(THEME_NAMES), default=None,
                        help="colour theme (default dark; T switches at run time)")
    args = parser.parse_args(argv)
    from proftui.tui.app import ProftuiApp

    if not os.path.exists(args.path):
        from proftui.core.errors import ProftuiError

        raise ProftuiError(f"{args.path}: no such file or folder (commands: "
                           f"{', '.join(COMMANDS)}; see proftui --help).")
    theme = THEME_NAMES[args.theme] if args.theme else DEFAULT_THEME
    app = ProftuiApp(args.path, use_cache=not args.no_cache, theme=theme, run=args.run)
    app.run()
    if app.error:  # shown in the app; said again where scripts and the shell see it
        sys.stderr.write(f"proftui: {safe(app.error)}\n")
        return EXIT_USAGE
    return EXIT_OK


# -- ops and iterations ------------------------------------------------------------------------

DEFAULT_TOP = 50  # rows of ops printed as text unless --top says otherwise
# core.grouping.GROUP_BY's keys (not imported here: --help answers before numpy is loaded).
GROUPINGS = ("name", "category", "type", "engine")


def _profile_iterations(index):
    """The iterations of a loaded trace or profile, from its timeline and its step CSVs."""
    from proftui.core.overview import read_overview

    return read_overview(index)[2]


def _grouping_tables(index, by: str) -> list:
    """The profile's summary tables when grouping by type or engine (the op tables say
    both for Ascend ops), else none."""
    if by not in ("type", "engine"):
        return []
    from proftui.core.overview import read_overview

    return read_overview(index)[1]


def _print_json(data: Any) -> None:
    """`data` as indented JSON, safe to show on a terminal (see :func:`json_text`)."""
    sys.stdout.write(json_text(data) + "\n")


def json_text(data: Any) -> str:
    """`data` as indented JSON that a terminal shows as it is: orjson escapes C0 controls
    but leaves DEL, C1 (U+009B is a CSI), bidi controls and U+2028/9 raw, so those become
    \\uXXXX too (the same JSON). Text orjson refuses (a lone surrogate: a file name that is
    not UTF-8) is written by the standard library as \\udcXX instead."""
    try:
        text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        import json

        text = json.dumps(_nan_as_null(data), indent=2, ensure_ascii=False, default=str)
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


def _add_window_options(parser: argparse.ArgumentParser, required: bool = False) -> None:
    """--iteration N and --range T0:T1 (and --all when one of them is required)."""
    window = parser.add_mutually_exclusive_group(required=required)
    window.add_argument("--iteration", type=int, metavar="N",
                        help="only the slices overlapping iteration N")
    window.add_argument("--range", metavar="T0:T1",
                        help="a window from the trace start, e.g. 12.5ms:40ms (bare numbers "
                             "are µs; units ns, us, ms, s; an end may be left out)")
    if required:
        window.add_argument("--all", action="store_true", help="the whole trace")


def _ops_window(args: argparse.Namespace, index) -> tuple[int, int, str]:
    """(start_ns, end_ns, label) of the window asked for by --iteration or --range."""
    from proftui.core.errors import ProftuiError
    from proftui.core.table_query import parse_time_ns

    origin, end = index.start_ns, index.end_ns
    if args.iteration is not None:
        found = _profile_iterations(index)
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
    elif args.range is not None:
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


def _window_text(label: str, lo: int, hi: int, origin: int) -> str:
    """Which window numbers describe, e.g. "iteration 3 (12.5 ms to 25 ms from the trace
    start, 12.5 ms)"."""
    return (f"{label} ({fmt_duration(lo - origin)} to {fmt_duration(hi - origin)} from the "
            f"trace start, {fmt_duration(hi - lo)})")


def _print_table(table, columns: list[int], rows, title: str, blank: str = "") -> None:
    """Rows of a core table: a rich table on a terminal, aligned plain text when piped;
    an empty first cell (a name) is shown as `blank`."""
    from proftui.core.table_query import rows_text

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
        # Numbers keep their full width; text columns share the rest (cut with an ellipsis).
        # Where boxed columns leave the text too little, columns are ruled by spaces only.
        n_text = max(right.count(False), 1)
        boxed = console.width - 1 - sum(w + 3 for w, r in zip(widths, right) if r)
        compact = boxed // n_text - 3 < 12
        cost = 2 if compact else 3
        spare = console.width - 1 - sum(w + cost for w, r in zip(widths, right) if r)
        text_width = max(spare // n_text - cost, 8)
        view = (RichTable(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD,
                          pad_edge=False, show_edge=False, padding=(0, 1),
                          collapse_padding=True) if compact
                else RichTable(title=Text(title), title_justify="left"))
        for header, width, is_right in zip(headers, widths, right):
            view.add_column(Text(header), justify="right" if is_right else "left",
                            no_wrap=True, overflow="ellipsis", min_width=width if is_right
                            else None, max_width=None if is_right else text_width)
        for row in cells:
            view.add_row(*(Text(x) for x in row))
        console.print(view)
        return

    def line(row: list[str]) -> str:
        return "  ".join(x.rjust(w) if r else x.ljust(w)
                         for x, w, r in zip(row, widths, right)).rstrip()

    out = [title, line(headers)] + [line(row) for row in cells]
    sys.stdout.write("\n".join(out) + "\n")


def _json_key(column) -> str:
    key = column.name.strip().lower().replace(" ", "_")
    return key + {"ns": "_ns", "%": "_pct"}.get(column.unit, "")


def _json_value(column, value):
    if column.kind == "text":
        return str(value)
    number = float(value)
    if number != number:
        return None
    if column.unit == "ns" or number.is_integer() and column.unit == "":
        return int(value) if number.is_integer() else number
    return number


def cmd_ops(argv: list[str]) -> int:
    parser = _parser("ops", "Print operator statistics for the whole trace, one iteration or "
                     "a time range: count, total and self time (clipped to the window), "
                     "average, min and max of whole instances, Window(%) (the op's time on a "
                     "track over the window, averaged over the tracks it ran on: at most 100) "
                     "and Busy(%) (its self time over the self time of all rows shown: they "
                     "sum to 100). Step markers, user annotations and derived tracks (Overlap "
                     "Analysis, HCCL planes) are not operators.",
                     "  proftui ops trace.json\n"
                     "  proftui ops --iteration 3 --side device PROF_000001_...\n"
                     "  proftui ops --range 12.5ms:40ms --by category trace.json.gz\n"
                     "  proftui ops --sort Count --top 10 trace.json\n"
                     "  proftui ops --json trace.json | jq '.rows[0]'")
    _add_window_options(parser)
    parser.add_argument("--by", choices=GROUPINGS, default="name",
                        help="group operators by name (default), category, operator type "
                             "(Ascend: the OP Type op_summary gives each op instance) or "
                             "engine (AI_CORE, AI_VECTOR_CORE, AI_CPU, HCCL ...; kernel, "
                             "Triton, NCCL, memcpy, memset; host: the category)")
    parser.add_argument("--side", choices=("all", "device", "host"), default="all",
                        help="device tracks (GPU/NPU streams), host tracks, or all (default)")
    parser.add_argument("--sort", metavar="COL", help="sort by this column (numbers largest "
                        "first, text A to Z; default Total)")
    parser.add_argument("--top", type=int, metavar="K", help=f"print the first K rows "
                        f"(default {DEFAULT_TOP} as text, all as JSON; 0 for all)")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    if args.top is not None and args.top < 0:
        parser.error("--top wants a count of 0 or more")
    from proftui.core.aggregate import aggregate_ops
    from proftui.core.table_query import column_index, sort_order

    index = _load(args)
    lo, hi, label = _ops_window(args, index)
    table = aggregate_ops(index, start_ns=lo, end_ns=hi, by=args.by, side=args.side,
                          tables=_grouping_tables(index, args.by))
    rows = list(range(table.n_rows))
    if args.sort:
        c = column_index(table, args.sort)
        rows = sort_order(table, c, table.columns[c].kind != "text").tolist()
    top = args.top if args.top is not None else (0 if args.json else DEFAULT_TOP)
    shown = rows[:top] if top else rows
    counts = table.find("Count")
    n_slices = int(counts.values.sum()) if counts is not None else 0
    if args.json:
        result = {
            "window": {"label": label, "start_ns": lo, "end_ns": hi,
                       "from_trace_start_ns": [lo - index.start_ns, hi - index.start_ns]},
            "by": args.by, "side": args.side, "ops": table.n_rows, "slices": n_slices,
            "rows": [{_json_key(c): _json_value(c, c.values[r]) for c in table.columns}
                     for r in shown]}
        _print_json(result)
        return EXIT_OK
    title = (f"ops of {_window_text(label, lo, hi, index.start_ns)}, by {args.by}, "
             f"{args.side} tracks: {fmt_count(table.n_rows)} ops, {fmt_count(n_slices)} slices")
    columns = [i for i, c in enumerate(table.columns) if c.name != "name_id"]
    _print_table(table, columns, shown, title, blank="(none)")
    if len(shown) < len(rows):
        sys.stdout.write(f"... and {fmt_count(len(rows) - len(shown))} more ops "
                         "(--top 0 prints all)\n")
    return EXIT_OK


def cmd_iterations(argv: list[str]) -> int:
    parser = _parser("iterations", "Print one line per iteration (training step): its start "
                     "from the trace start, duration, breakdown (FP+BP, iteration refresh, "
                     "data aug bound; or computing, communication, free ...), how it compares "
                     "with the median of its rank or device, and the slowest and outliers "
                     "(longer than 1.2 x the median) marked.",
                     "  proftui iterations run.pt.trace.json\n"
                     "  proftui iterations PROF_000001_...\n"
                     "  proftui iterations --json torch_npu_ascend_pt/ | jq '.items[0]'")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    from proftui.core.aggregate import iterations_table

    index = _load(args)
    found = _profile_iterations(index)
    origin = index.start_ns if index.n_slices else None
    table = iterations_table(found, origin_ns=origin)
    if args.json:
        vs = table.find("vs median")
        marks = table.find("Mark")
        relative = table.find("Relative start")
        items = []
        for n, it in enumerate(found.items):
            rel = float(relative.values[n])  # type: ignore[union-attr]
            vs_n = float(vs.values[n])  # type: ignore[union-attr]
            items.append({
                "group": it.group, "number": it.number,
                "start_ns": it.start_ns if it.start_ns >= 0 else None,
                "end_ns": it.end_ns if it.end_ns >= 0 else None,
                "dur_ns": it.dur_ns if it.dur_ns >= 0 else None,
                "relative_start_ns": int(rel) if rel == rel else None,
                "parts_ns": it.parts, "vs_median_pct": vs_n if vs_n == vs_n else None,
                "mark": marks.values[n]})  # type: ignore[union-attr]
        result = {"source": found.source if found.items else None, "notes": found.notes,
                  "items": items}
        _print_json(result)
        return EXIT_OK
    if not found.items:
        sys.stdout.write("no iterations found (no ProfilerStep#N or msprof step trace in the "
                         "timeline, no step CSVs)\n")
        return EXIT_OK
    hidden = {"Start"} | ({"Group"} if not any(it.group for it in found.items) else set())
    columns = [i for i, c in enumerate(table.columns) if c.name not in hidden]
    origin_text = "trace start" if origin is not None else "first iteration"
    title = (f"{len(found.items)} iterations from {safe(found.source)}; starts from the "
             f"{origin_text}; outliers are longer than 1.2 x their group's median")
    _print_table(table, columns, range(table.n_rows), title)
    for note in found.notes:
        sys.stdout.write(f"note: {safe(note)}\n")
    return EXIT_OK


# -- export and summary ------------------------------------------------------------------------


def cmd_export(argv: list[str]) -> int:
    parser = _parser("export", "Write the events of a window as CSV (one row per slice or "
                     "instant: name, category, process, thread, start, end and duration from "
                     "the trace start, depth, kind, and chosen args), or its ops table. CSV "
                     "as RFC 4180, UTF-8, a header row; cells a spreadsheet would run as a "
                     "formula (=, +, -, @) get a leading ' unless --raw. An existing file is "
                     "never overwritten without --force; a failed export leaves no file. "
                     "Written to a terminal, control characters and escape sequences in "
                     "cells are shown escaped (\\x1b, \\r, \\u202e) and lines end in LF, so "
                     "that a trace cannot take over the terminal; into a pipe or a file the "
                     "CSV is written exactly.",
                     "  proftui export trace.json --all -o events.csv\n"
                     "  proftui export trace.json --range 12.5ms:40ms --tracks 'stream 7'\n"
                     "  proftui export PROF_000001_... --iteration 3 --args 'Input Dims,grid' "
                     "--unit ns\n"
                     "  proftui export trace.json --iteration 2 --what ops --by category "
                     "-o ops.csv --force\n"
                     "  proftui export trace.json --all --tracks '/^python.*thread/' | head")
    _add_window_options(parser, required=True)
    parser.add_argument("--tracks", metavar="PATTERN", help='only tracks whose "process / '
                        'track" label contains PATTERN (ignoring case), or matches /regex/')
    parser.add_argument("--side", choices=("all", "device", "host"), default="all",
                        help="device tracks (GPU/NPU streams), host tracks, or all (default)")
    parser.add_argument("--what", choices=("events", "ops"), default="events",
                        help="the events (default) or the ops table of the window")
    parser.add_argument("--by", choices=GROUPINGS, default="name",
                        help="with --what ops: group by name (default), category, type or "
                             "engine")
    parser.add_argument("--args", metavar="KEY,...", help="args keys to add as columns "
                        "(events only), e.g. 'Input Dims,External id'")
    parser.add_argument("--unit", choices=("ns", "us", "ms", "s"), default=None,
                        help="time unit of the columns (events: default us; ops: default ns)")
    parser.add_argument("--raw", action="store_true", help="keep cells that look like "
                        "formulas as they are (no leading ')")
    parser.add_argument("--bom", action="store_true",
                        help="start the file with a UTF-8 byte-order mark (for Excel)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.add_argument("-o", "--output", metavar="FILE", default="-",
                        help="where to write (default -, stdout; escaped on a terminal)")
    args = parser.parse_args(argv)
    if args.args is not None and args.what != "events":
        parser.error("--args applies to --what events only")
    keys = [k.strip() for k in (args.args or "").split(",") if k.strip()]
    if args.args is not None and not keys:
        parser.error("--args wants one or more keys, e.g. --args 'Input Dims,grid'")
    import numpy as np

    from proftui.core.aggregate import aggregate_ops
    from proftui.core.export import (
        ExportError,
        ExportExists,
        export_events,
        export_table,
        select_tracks,
    )
    from proftui.core.roles import device_tracks

    if args.output != "-":  # refuse before indexing a large trace (core checks again)
        where = os.path.abspath(args.output)
        if os.path.isdir(where):
            raise ExportError(f"{where} is a directory; give a file name.")
        if not args.force and os.path.lexists(where):
            raise ExportExists(f"{where} already exists.")
    index = _load(args)
    lo, hi, _label = _ops_window(args, index)
    tracks = None
    if args.tracks is not None:
        tracks = select_tracks(index, args.tracks)
        if not len(tracks):
            sys.stderr.write(f'proftui: no track matches "{safe(args.tracks)}" (see proftui '
                             "info for the tracks).\n")
            return EXIT_FAILURE
    if args.side != "all":
        device = device_tracks(index)
        side = np.flatnonzero(device if args.side == "device" else ~device)
        tracks = side if tracks is None else np.intersect1d(tracks, side)
    common = {"neutralize": not args.raw, "overwrite": args.force, "bom": args.bom}
    target: Any = args.output
    if target == "-" and sys.stdout.isatty():
        target = TerminalText(sys.stdout)
    if args.what == "events":
        window = {} if args.all else {"start_ns": lo, "end_ns": hi}
        result = export_events(index, target, tracks=tracks, args_keys=keys,
                               unit=args.unit or "us", **window, **common)
    else:
        table = aggregate_ops(index, start_ns=lo, end_ns=hi, tracks=tracks, by=args.by,
                              tables=_grouping_tables(index, args.by))
        shown = [i for i, c in enumerate(table.columns) if c.name != "name_id"]
        result = export_table(table, target, columns=shown, unit=args.unit or "ns",
                              **common)
    if result.path != "-":
        sys.stderr.write(f"wrote {fmt_count(result.rows)} rows to {safe(result.path)}\n")
    return EXIT_OK


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


def cmd_summary(argv: list[str]) -> int:
    parser = _parser("summary", "Print a one-screen report: step time over the iterations "
                     "and its breakdown, top device op types and host ops by share, host and "
                     "device busy ratios, import problems, and the files and tables read.",
                     "  proftui summary PROF_000001_...\n"
                     "  proftui summary run.pt.trace.json | less\n"
                     "  proftui summary --json torch_npu_ascend_pt/ | jq .busy")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    from proftui.core.report import report_tables, summary_report

    report = summary_report(_load(args))
    if args.json:
        _print_json(report)
        return EXIT_OK
    files = report["files"]
    tables = ", ".join(sorted({safe(t["kind"]) for t in report["tables"]}))
    sys.stdout.write(f"summary of {safe(report['path'])}\n"
                     f"span {fmt_duration(report['span_ns'])}, "
                     f"{fmt_count(report['slices'])} slices from {len(files)} "
                     f"timeline{'s' if len(files) != 1 else ''}"
                     + (f"; tables: {tables}" if tables else "") + "\n")
    if report["iterations"] is None:
        sys.stdout.write("iterations none found\n")
    for title, table in report_tables(report):
        _print_table(table, list(range(len(table.columns))), range(table.n_rows), title)
    sys.stdout.write("\n".join(diagnostic_lines(report["diagnostics"])) + "\n")
    return EXIT_OK


def diagnostic_lines(counts: dict[str, int]) -> list[str]:
    """Import problems counted by kind, one line each (or "diagnostics none")."""
    from proftui.core.diagnostics import KINDS

    if not counts:
        return ["diagnostics none"]
    return ["diagnostics"] + [f"  {fmt_count(n):>10}  {KINDS.get(kind, kind)}"
                              for kind, n in counts.items()]


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "info": cmd_info, "index": cmd_index, "ops": cmd_ops, "iterations": cmd_iterations,
    "export": cmd_export, "summary": cmd_summary}

USAGE = f"""usage: proftui PATH                 open a trace or profile directory in the viewer
       proftui info PATH [--json]     what it holds: tracks, iterations, tables, problems
       proftui summary PATH [--json]  one screen: step time, top op types, busy ratios
       proftui index PATH             build the cache (with a progress bar)
       proftui ops PATH [--iteration N | --range T0:T1] [--by name|category|type]
                   [--side all|device|host] [--sort COL] [--top K] [--json]
                                      operator statistics of a window
       proftui iterations PATH [--json]
                                      iterations, their breakdown, slowest and outliers
       proftui export PATH (--range T0:T1 | --iteration N | --all) [--tracks PATTERN]
                   [--what events|ops] [--by name|category|type] [--args KEY,...]
                   [--unit ns|us|ms|s] [--raw] [--force] [-o FILE|-]
                                      the events or ops of a window as CSV
       proftui --version

Every command takes --help (with examples) and --version. A folder holding several separate
runs (the same rank twice, captures far apart in time, clocks of different kinds) is refused
with the list of its runs: --run N (with any command) or the run's folder opens one.
Exit status: 0 success, 1 failure, 2 bad usage or unreadable input. Results go to stdout,
errors and progress to stderr.
proftui {__version__}
"""


def main(argv: list[str] | None = None) -> int:
    from proftui.core.errors import Cancelled, ProftuiError
    from proftui.core.export import ExportError, ExportExists
    from proftui.core.runs import SeveralRunsError

    if argv is None:  # the program itself: even a bug's traceback must not carry raw escapes
        sys.excepthook = _escaped_traceback
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        sys.stderr.write(USAGE)
        return EXIT_USAGE
    if argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return EXIT_OK
    if argv[0] in ("-V", "--version"):
        sys.stdout.write(f"proftui {__version__}\n")
        return EXIT_OK
    command = COMMANDS.get(argv[0])
    try:
        if command is not None:
            return command(argv[1:])
        return cmd_open(argv)
    except Cancelled:
        sys.stderr.write("proftui: cancelled.\n")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        sys.stderr.write("proftui: interrupted.\n")
        return 130
    except ExportExists as exc:
        sys.stderr.write(f"proftui: {safe(str(exc).rstrip('.'))}; --force overwrites it.\n")
        return EXIT_FAILURE
    except ExportError as exc:  # the input was fine; the output could not be written
        sys.stderr.write(f"proftui: {safe(exc)}\n")
        return EXIT_FAILURE
    except SeveralRunsError as exc:
        runs = [safe(line) for line in exc.lines()]  # folder names may hold escapes
        sys.stderr.write(f"proftui: {safe(exc)}\n" + "\n".join(runs) + "\n")
        return EXIT_USAGE
    except ProftuiError as exc:
        sys.stderr.write(f"proftui: {safe(exc)}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK


def _escaped_traceback(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
    """The default traceback on stderr, with control characters of messages (which may quote
    trace text or file names) shown escaped."""
    import traceback

    sys.stderr.write(safe_lines("".join(traceback.format_exception(kind, exc, tb))))


def _quiet_stdout() -> None:
    """After the reader of a pipe went away (`| head`), point stdout at /dev/null so that
    flushing it at exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
